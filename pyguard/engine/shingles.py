"""Hashed shingles and one batch step of the novelty memory: the specification (numpy) and an optional compiled
kernel (numba, the ``fast`` extra) that gives bit-identical results.

The specification, which every implementation follows:

- **bytes**: the prepared text encoded as UTF-8 (``surrogatepass``), padded with NUL bytes to 8 if shorter;
- **shingles**: one per byte position ``p`` in ``0 .. len - 8``: the 8 bytes from ``p`` read as one little-endian
  64-bit word; for a shingle size ``n < 8`` only its low ``n`` bytes are kept;
- **key**: the splitmix64 finaliser of that word (``h = w ^ w >> 30; h *= 0xBF58476D1CE4E5B9; h ^= h >> 27;
  h *= 0x94D049BB133111EB; h ^= h >> 31``, all modulo 2**64);
- **Bloom filter**: ``2**bits`` bits in ``2**(bits - 6)`` uint64 words; a key lives in word ``key >> (70 - bits)``
  where it sets bits ``key & 63`` and ``(key >> 6) & 63`` (:data:`BITS_OF`, by the key's low 12 bits); a key is
  *missing* unless both bits are set;
- **batch step** (:func:`score_batch`): the distinct keys of a text; those missing from the current generation and
  (if any) from the previous one are *new*: they are added to the current generation and returned, with the number
  of distinct keys.

:func:`score_batch` runs the compiled kernel (it releases the GIL) when numba is installed (``pyguard[fast]``),
unless ``PYGUARD_NUMBA=0``; otherwise numpy. Both give the same counts, new keys (as a set) and filter words
(``tests/unit/engine/test_engine_shingles.py`` holds them to each other)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

__all__: list[str] = []

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S6 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(6)
_LOW12 = np.uint64(0xFFF)
_LOW6 = np.uint64(63)
BITS_OF = (np.uint64(1) << (np.arange(4096, dtype=np.uint64) & _LOW6)) | (
    np.uint64(1) << ((np.arange(4096, dtype=np.uint64) >> _S6) & _LOW6)
)
"""The two-bit word mask of a key, by the key's low 12 bits (one lookup instead of five array operations)."""
_INDEX_VIEW = np.dtype(np.intp).itemsize == 8
_EMPTY = np.empty(0, dtype=np.uint64)


def as_index(h: np.ndarray) -> np.ndarray:
    """Non-negative uint64 values below 2**63 as an index array (a free view where intp is 64-bit)."""
    return h.view(np.intp) if _INDEX_VIEW else h.astype(np.intp)


def _raw(prepared: str) -> bytes:
    raw = prepared.encode("utf-8", "surrogatepass")
    if raw and len(raw) < 8:
        raw = raw + b"\0" * (8 - len(raw))
    return raw


def shingle_keys(prepared: str, n: int) -> np.ndarray:
    """The keys of the shingles of ``prepared``, one per byte position (in position order): the specification."""
    raw = _raw(prepared)
    if not raw:
        return np.empty(0, dtype=np.uint64)
    count = len(raw) - 7
    # shingle at position p = the 8 bytes from p, read as one little-endian word: one strided view (copied into
    # aligned memory when long: ufuncs on a long unaligned view are slower than the copy)
    words = np.ndarray((count,), dtype="<u8", buffer=raw, strides=(1,))
    if count >= 2048:
        words = words.astype(np.uint64)
    if n < 8:  # shorter shingles: keep the low n bytes (the last 8 - n positions of the text are not shingled)
        words = words & np.uint64((1 << (8 * n)) - 1)
    # splitmix64 finaliser (in place after the first step)
    h = words >> _S30
    h ^= words
    h *= _M1
    t = h >> _S27
    h ^= t
    h *= _M2
    np.right_shift(h, _S31, out=t)
    h ^= t
    return h


def score_batch_numpy(
    prepared: str, n: int, current: np.ndarray, current_shift: int, previous: np.ndarray | None, previous_shift: int
) -> tuple[int, np.ndarray]:
    """The batch step in numpy (see the module docstring): (number of distinct keys, the new keys, ascending);
    the new keys are added to ``current`` (the current generation's words; ``previous``: the previous one's)."""
    h = shingle_keys(prepared, n)
    h.sort()
    if h.size > 1:
        same = h[1:] == h[:-1]
        if same.any():
            keep = np.empty(h.size, dtype=bool)
            keep[0] = True
            np.logical_not(same, out=keep[1:])
            h = h[keep]
    size = int(h.size)
    if size == 0:
        return 0, _EMPTY
    m = BITS_OF[as_index(h & _LOW12)]
    word = as_index(h >> np.uint64(current_shift))
    w = current[word]
    w &= m
    new = w != m
    if previous is not None:
        w = previous[as_index(h >> np.uint64(previous_shift))]
        w &= m
        new &= w != m
    count = int(np.count_nonzero(new))
    if count == 0:
        return size, _EMPTY
    # adding a key the current generation holds changes nothing: all are added, but those only the previous
    # generation holds (their masks zeroed)
    np.bitwise_or.at(current, word, m if count == size else m * new)
    return size, h if count == size else h[new]


class Scratch:
    """Reusable work arrays for the kernel: room for a text's keys (twice), and its hash set. One per thread
    (:func:`thread_scratch`), shared by every estimator the thread runs: a service guarding many conversations
    keeps one set, warm in the cache, instead of ~80 KB per conversation touched for the first time."""

    __slots__ = ("keys", "spare", "table")

    def __init__(self) -> None:
        self.keys = np.empty(1 << 10, dtype=np.uint64)
        self.spare = np.empty(1 << 10, dtype=np.uint64)
        """The keys in text order before they are spread into buckets, then the hash set's used slots."""
        self.table = np.zeros(1 << 13, dtype=np.uint64)
        """The kernel's hash set, all zero between calls (the kernel empties what it used): no zeroing per call."""

    def fit(self, count: int) -> tuple[np.ndarray, np.ndarray]:
        """Two arrays of at least ``count`` keys (kept for the next texts up to :data:`_KEEP_KEYS` keys)."""
        if count <= self.keys.size:
            return self.keys, self.spare
        if count > _KEEP_KEYS:  # a huge text: arrays for this call only
            return np.empty(count, dtype=np.uint64), np.empty(count, dtype=np.uint64)
        size = min(max(count, 2 * self.keys.size), _KEEP_KEYS)
        self.keys = np.empty(size, dtype=np.uint64)
        self.spare = np.empty(size, dtype=np.uint64)
        return self.keys, self.spare


_KEEP_KEYS = 1 << 20
"""The largest work arrays a thread keeps (8 MB each: a text of about 1 MB); larger texts get their own."""
_local = threading.local()


def thread_scratch() -> Scratch:
    """This thread's :class:`Scratch` (the kernel runs without the GIL: threads must not share one)."""
    try:
        scratch: Scratch = _local.scratch
    except AttributeError:
        scratch = _local.scratch = Scratch()
    return scratch


_kernel: Callable[..., Any] | None = None
_adder: Callable[..., Any] | None = None
_backend: str | None = None
_saved = 0.0
_loading = threading.Lock()
_loader: threading.Thread | None = None  # the thread loading the kernel, once per process
_LOAD_COST_S = 0.4
_SAVED_PER_TEXT_S = 20e-6
_SAVED_PER_CHAR_S = 25e-9
"""Loading the kernel costs a process 0.6-0.9 s of CPU once; a text the kernel scores instead of numpy saves about
``_SAVED_PER_TEXT_S`` plus ``_SAVED_PER_CHAR_S`` a character. The load starts, on a thread of its own, once the
texts numpy scored would have saved ``_LOAD_COST_S`` (half the load's cost: a short replay never pays for numba, a
long one loses at most that; docs/performance.md); numpy scores texts (the same results) until the kernel is ready."""
_BUCKET_KEYS = 128
"""Keys per bucket the kernel aims at: a bucket's hash set (8 KB) and its slices of the filter generations stay in
the L1 cache (on a 100 KB text, one-off timing 2026-11-30, texts interleaved: 1024 keys ~1.2 ms, 256 ~1.1 ms,
128 and 64 ~1.0-1.1 ms, 32 ~1.15 ms)."""
_ONE_BUCKET_KEYS = 1024  # a text of at most this many keys (a 1 KB result) is one bucket: hashed in one pass


def _kernel_source(raw, n, cur, cur_shift, prev, prev_shift, has_prev, part, spare, bbits, table):  # pragma: no cover
    """The batch step over the text's bytes ``raw`` (at least 8), for numba (see the module docstring); returns
    (distinct keys, new keys), the new keys in ``part[:new]`` (``spare``: as large as ``part``, for the kernel).

    Cache-friendly: the keys are first spread into ``2**bbits`` buckets by their top bits (hashed once, in text
    order, into ``spare``, then counted per bucket and placed), then each bucket is deduplicated in a small hash set
    and looked up in the filter, whose words it shares (a key's word is chosen by its top bits too), so no step
    jumps around a large table."""
    m1 = np.uint64(0xBF58476D1CE4E5B9)
    m2 = np.uint64(0x94D049BB133111EB)
    low = np.uint64(0xFFFFFFFFFFFFFFFF) if n >= 8 else np.uint64((1 << (8 * n)) - 1)
    one = np.uint64(1)
    c63 = np.uint64(63)
    s6 = np.uint64(6)
    count = len(raw) - 7
    nb = 1 << bbits
    bsh = np.uint64(32 - bbits)
    start = np.zeros(nb + 1, dtype=np.intp)
    w = np.uint64(0)
    for j in range(7):
        w |= np.uint64(raw[j]) << np.uint64(8 * (j + 1))
    ordered = part if nb == 1 else spare  # one bucket: the keys stay in text order, in place
    for p in range(count):
        w = (w >> np.uint64(8)) | (np.uint64(raw[p + 7]) << np.uint64(56))
        x = w & low
        h = x ^ (x >> np.uint64(30))
        h *= m1
        h ^= h >> np.uint64(27)
        h *= m2
        h ^= h >> np.uint64(31)
        ordered[p] = h
    if nb == 1:
        start[0] = count
    else:
        for p in range(count):  # keys per bucket, then where each bucket starts, then the keys placed
            start[np.intp((spare[p] >> np.uint64(32)) >> bsh) + 1] += 1
        for b in range(nb):
            start[b + 1] += start[b]
        for p in range(count):
            h = spare[p]
            b = np.intp((h >> np.uint64(32)) >> bsh)
            part[start[b]] = h
            start[b] += 1
    # start[b] is now the end of bucket b (and the start of bucket b + 1)
    biggest = start[0]
    for b in range(1, nb):
        biggest = max(biggest, start[b] - start[b - 1])
    tsize = 16
    while tsize < 8 * biggest:  # at most an eighth full: probes rarely go past the first slot (4 was slower)
        tsize *= 2
    if table.size < tsize:  # the scratch table (all zero) is too small for this text: a new one
        table = np.zeros(tsize, dtype=np.uint64)
    slots = spare  # free again: a bucket's used slots (at most its keys)
    tmask = tsize - 1
    cshift = np.uint64(cur_shift)
    pshift = np.uint64(prev_shift)
    distinct = 0
    new = 0
    zero_seen = False
    lo = 0
    if not has_prev:  # the previous generation's lookup repeats the current one's (no branch per key below)
        prev = cur
        pshift = cshift
    for b in range(nb):
        hi = start[b]
        used = 0
        first = distinct
        for i in range(lo, hi):  # the bucket's distinct keys, moved to part[first:distinct]
            h = part[i]
            if h == 0:  # 0 marks an empty slot: the (one) zero key is tracked apart
                fresh = not zero_seen
                zero_seen = True
            else:
                # probe to the key or an empty slot, then store and count without a branch on which it was (a
                # repeated key is about as likely as a new one in text: a branch would be mispredicted often)
                s = np.intp((h >> np.uint64(16)) & np.uint64(tmask))
                v = table[s]
                while v != h and v != 0:
                    s = (s + 1) & tmask
                    v = table[s]
                fresh = v == 0
                table[s] = h
                slots[used] = s
                used += np.intp(fresh)
            part[distinct] = h  # distinct <= i: a place already read
            distinct += np.intp(fresh)
        for k in range(used):
            table[np.intp(slots[k])] = 0
        # then the filter lookups, without a branch on their outcome: the processor overlaps their cache misses;
        # a key's two bits (BITS_OF) computed, not looked up (the 32 KB table would crowd the cache)
        for i in range(first, distinct):
            h = part[i]
            m = (one << (h & c63)) | (one << ((h >> s6) & c63))
            known = (cur[np.intp(h >> cshift)] & m == m) | (prev[np.intp(h >> pshift)] & m == m)
            part[new] = h  # new <= i: a place already read
            new += 1 - np.intp(known)
        lo = hi
    for i in range(new):  # added only now: a key of this text must not make another of its keys look known
        h = part[i]
        cur[np.intp(h >> cshift)] |= (one << (h & c63)) | (one << ((h >> s6) & c63))
    return distinct, new


def _add_source(words, shift, keys):  # pragma: no cover
    """Add ``keys`` to the filter generation ``words`` (word ``key >> shift``), for numba."""
    one = np.uint64(1)
    c63 = np.uint64(63)
    s6 = np.uint64(6)
    sh = np.uint64(shift)
    for i in range(keys.size):
        h = keys[i]
        words[np.intp(h >> sh)] |= (one << (h & c63)) | (one << ((h >> s6) & c63))


def add_keys(words: np.ndarray, shift: int, keys: np.ndarray) -> None:
    """Add ``keys`` to a filter generation (its ``words``; a key's word is ``key >> shift``, its bits
    :data:`BITS_OF`): a compiled loop when the kernel is loaded, else ``np.bitwise_or.at`` (the same words). The
    estimator rebuilds a growing generation from its keys this way (the numpy form costs ~1 ms per 200,000 keys)."""
    if _adder is not None:
        _adder(words, shift, keys)
    else:
        np.bitwise_or.at(words, as_index(keys >> np.uint64(shift)), BITS_OF[as_index(keys & _LOW12)])


def backend() -> str:
    """``"numba"`` when the compiled kernel is in use, else ``"numpy"`` (numba missing or ``PYGUARD_NUMBA=0``);
    loads the kernel (and runs it once, so that its machine code is built or read) if it is not loaded yet, waiting
    for a background load under way."""
    global _kernel, _adder, _backend
    with _loading:
        if _backend is None:
            loaded = _load()
            if loaded is not None:  # published only once warm: a caller on another thread never waits on it
                _kernel, _adder = loaded
            _backend = "numpy" if loaded is None else "numba"
    return _backend


def _load() -> tuple[Callable[..., Any], Callable[..., Any]] | None:
    """The compiled kernel and adder, each run once on a small input (numba compiles, or reads its cache, at a
    function's first call), or None (numba missing or switched off)."""
    if os.environ.get("PYGUARD_NUMBA", "1") == "0":
        return None
    try:
        import numba  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None
    kernel = numba.njit(cache=True, nogil=True)(_kernel_source)
    adder = numba.njit(cache=True, nogil=True)(_add_source)
    words, text = np.zeros(2, dtype=np.uint64), "pyguard: warming the kernel up"
    for previous in (None, words.copy()):
        _run_kernel(kernel, text, 5, words, 63, previous, 63, Scratch())
    adder(words, 63, np.zeros(1, dtype=np.uint64))
    return kernel, adder


def _load_in_background() -> None:
    """Start loading the kernel on a daemon thread of its own (once): :func:`score_batch` goes on with numpy."""
    global _loader
    with _loading:
        if _loader is not None or _backend is not None:
            return
        _loader = threading.Thread(target=backend, name="pyguard-kernel-load", daemon=True)
        _loader.start()


def score_batch(
    prepared: str,
    n: int,
    current: np.ndarray,
    current_shift: int,
    previous: np.ndarray | None,
    previous_shift: int,
    scratch: Scratch,
) -> tuple[int, np.ndarray]:
    """The batch step (see the module docstring): (number of distinct keys, the new keys); the new keys are added
    to ``current``. Compiled when numba is installed (and loaded: see :data:`_LOAD_COST_S`), else
    :func:`score_batch_numpy`. The new keys returned by the kernel live in ``scratch``: use them before the next
    call."""
    global _saved
    if _backend is None and _loader is None:
        _saved += _SAVED_PER_TEXT_S + len(prepared) * _SAVED_PER_CHAR_S  # (threads racing here only delay the load)
        if _saved >= _LOAD_COST_S:
            _load_in_background()
    kernel = _kernel
    if kernel is None:
        return score_batch_numpy(prepared, n, current, current_shift, previous, previous_shift)
    return _run_kernel(kernel, prepared, n, current, current_shift, previous, previous_shift, scratch)


def _run_kernel(
    kernel: Callable[..., Any],
    prepared: str,
    n: int,
    current: np.ndarray,
    current_shift: int,
    previous: np.ndarray | None,
    previous_shift: int,
    scratch: Scratch,
) -> tuple[int, np.ndarray]:
    """:func:`score_batch` by the compiled ``kernel``."""
    raw = prepared.encode("utf-8", "surrogatepass")
    count = len(raw) - 7
    if count < 1:
        if not raw:
            return 0, _EMPTY
        raw += b"\0" * (8 - len(raw))
        count = 1
    part, spare = scratch.fit(count)
    distinct, new = kernel(
        raw,  # the bytes themselves (numba reads a bytes object as a read-only buffer: no array built per call)
        n,
        current,
        current_shift,
        previous if previous is not None else current,
        previous_shift,
        previous is not None,
        part,
        spare,
        0 if count <= _ONE_BUCKET_KEYS else ((count - 1) // _BUCKET_KEYS).bit_length(),
        scratch.table,
    )
    return distinct, part[:new]
