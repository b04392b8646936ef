"""The shingle specification (numpy) and the compiled kernel (numba, the ``fast`` extra) give the same results."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyguard.engine import shingles
from pyguard.engine.shingles import Scratch, score_batch_numpy, shingle_keys

_MASK64 = (1 << 64) - 1


def _reference_keys(text: str, n: int) -> list[int]:
    """The specification in plain Python integers (the module docstring of pyguard.engine.shingles)."""
    raw = text.encode("utf-8", "surrogatepass")
    if raw and len(raw) < 8:
        raw += b"\0" * (8 - len(raw))
    out = []
    for p in range(len(raw) - 7):
        w = int.from_bytes(raw[p : p + 8], "little") & ((1 << (8 * n)) - 1)
        h = w ^ (w >> 30)
        h = (h * 0xBF58476D1CE4E5B9) & _MASK64
        h ^= h >> 27
        h = (h * 0x94D049BB133111EB) & _MASK64
        h ^= h >> 31
        out.append(h)
    return out


@pytest.mark.parametrize("text", ["", "a", "abc", "abcdefgh", "hello, world", "ünïcode ✓", "x\ud800y" * 3])
@pytest.mark.parametrize("n", [3, 8])
def test_keys_follow_the_specification(text: str, n: int) -> None:
    assert shingle_keys(text, n).tolist() == _reference_keys(text, n)


def _filter(bits: int, seed: int, fill: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    words = np.zeros(1 << (bits - 6), dtype=np.uint64)
    k = int(fill * words.size)
    if k:
        idx = rng.integers(0, words.size, size=k)
        words[idx] = rng.integers(0, 2**64 - 1, size=k, dtype=np.uint64, endpoint=True)
    return words


def _both(text: str, n: int, bits: int, prev_bits: int | None, seed: int) -> None:
    assert shingles.backend() == "numba"  # score_batch runs the compiled kernel
    cur_a = _filter(bits, seed, 0.3)
    cur_b = cur_a.copy()
    prev = _filter(prev_bits, seed + 1, 0.5) if prev_bits is not None else None
    shift, prev_shift = 64 - (bits - 6), 64 - ((prev_bits or 7) - 6)
    size_a, new_a = score_batch_numpy(text, n, cur_a, shift, prev, prev_shift)
    size_b, new_b = shingles.score_batch(text, n, cur_b, shift, prev, prev_shift, Scratch())
    assert size_a == size_b
    assert sorted(new_a.tolist()) == sorted(new_b.tolist())
    assert np.array_equal(cur_a, cur_b)


@pytest.fixture()
def compiled() -> None:
    pytest.importorskip("numba")
    if shingles.backend() != "numba":
        pytest.skip("the compiled kernel is switched off (PYGUARD_NUMBA=0)")


@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize("n", [3, 5, 8])
@pytest.mark.parametrize("chars", [0, 1, 7, 8, 9, 300, 5_000, 120_000])
def test_kernel_equals_specification_on_words(n: int, chars: int) -> None:
    rng = np.random.default_rng(chars + n)
    letters = np.array(list("abcdefghij klmnop"))
    text = "".join(rng.choice(letters, size=chars))
    _both(text, n, 14, None, chars)
    _both(text, n, 20, 17, chars)
    _both(text + text + "ünïcode ✓ \ud800", n, 23, 23, chars)  # repeats, non-ASCII, a lone surrogate


@pytest.mark.usefixtures("compiled")
@settings(max_examples=60, deadline=None)
@given(st.text(max_size=3000), st.sampled_from([3, 4, 8]), st.integers(7, 16), st.integers(0, 2**16))
def test_kernel_equals_specification_on_any_text(text: str, n: int, bits: int, seed: int) -> None:
    _both(text, n, bits, bits if seed % 2 else None, seed)


@pytest.mark.usefixtures("compiled")
def test_kernel_on_one_repeated_byte() -> None:
    # every shingle the same key: one bucket holds all of them
    _both("a" * 50_000, 8, 14, None, 1)
    _both("ab" * 50_000, 8, 23, 23, 2)


@pytest.mark.usefixtures("compiled")
def test_the_kernel_leaves_its_scratch_hash_set_empty() -> None:
    # the hash set is reused from call to call without zeroing: the kernel must empty every slot it filled
    scratch = Scratch()
    words = np.zeros(1 << 8, dtype=np.uint64)
    rng = np.random.default_rng(3)
    letters = np.array(list("abcdefghij klmnop"))
    for chars in (9, 1_000, 5_000, 120_000):
        text = "".join(rng.choice(letters, size=chars))
        shingles.score_batch(text, 8, words, 64 - 8, None, 0, scratch)
        assert not scratch.table.any()
    size, new = shingles.score_batch("a" * 50_000 + "b", 8, words, 64 - 8, None, 0, scratch)
    assert size == 2 and not scratch.table.any()  # "aaaaaaaa" and "aaaaaaab"


@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize("bits", [7, 14, 23])
def test_compiled_add_keys_equals_numpy(bits: int) -> None:
    # a growing generation is rebuilt from its keys with add_keys: the compiled loop sets the same words
    rng = np.random.default_rng(bits)
    keys = rng.integers(0, 2**64 - 1, size=5_000, dtype=np.uint64, endpoint=True)
    keys[:100] = keys[100:200]  # repeated keys and repeated words
    shift = 64 - (bits - 6)
    compiled = _filter(bits, bits, 0.2)
    expected = compiled.copy()
    np.bitwise_or.at(
        expected, (keys >> np.uint64(shift)).astype(np.intp), shingles.BITS_OF[(keys & 0xFFF).astype(np.intp)]
    )
    shingles.add_keys(compiled, shift, keys)
    assert np.array_equal(compiled, expected)
    assert not np.array_equal(compiled, _filter(bits, bits, 0.2))


def test_each_thread_has_its_own_scratch() -> None:
    # the kernel runs without the GIL: two threads must never share work arrays
    mine = shingles.thread_scratch()
    assert shingles.thread_scratch() is mine
    other: list[Scratch] = []
    thread = threading.Thread(target=lambda: other.append(shingles.thread_scratch()))
    thread.start()
    thread.join()
    assert other and other[0] is not mine


def test_scratch_keeps_arrays_up_to_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shingles, "_KEEP_KEYS", 4096)
    scratch = Scratch()
    keys, spare = scratch.fit(3000)
    assert keys is scratch.keys and spare is scratch.spare and keys.size >= 3000 and spare.size >= 3000
    keys, spare = scratch.fit(10_000)  # a huge text: arrays for this call, the kept ones stay at the limit
    assert keys.size >= 10_000 and spare.size >= 10_000
    assert keys is not scratch.keys and scratch.keys.size <= 4096


def test_estimators_sharing_a_thread_score_as_if_alone() -> None:
    # every estimator of a thread uses the thread's scratch: interleaving two runs changes nothing
    from pyguard.engine.novelty import ShingleNovelty

    rng = np.random.default_rng(5)
    letters = np.array(list("abcdefghij klmnop"))
    texts = ["".join(rng.choice(letters, size=size)) for size in (50, 900, 3_000, 40_000, 900, 120_000, 7)]
    alone = []
    for k in range(2):
        e = ShingleNovelty()
        alone.append([e.observe(t[k:]) for t in texts])
    a, b = ShingleNovelty(), ShingleNovelty()
    together: list[list[float]] = [[], []]
    for t in texts:
        together[0].append(a.observe(t))
        together[1].append(b.observe(t[1:]))
    assert together == alone
