"""The compiled kernel loads on a thread of its own: a decision never waits for numba to build or read its machine
code (seconds on a loaded machine, longer than a live guard's callback deadline), and numpy scores the texts, with
the same results, until the kernel is ready."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from pyguard.engine import shingles
from pyguard.engine.shingles import Scratch, score_batch_numpy

HANG_GUARD_S = 600  # only a hang ends the wait: the test synchronises on events
SHIFT = 64 - (16 - 6)  # a filter generation of 2**16 bits: 1024 words


@pytest.fixture()
def unloaded(monkeypatch: pytest.MonkeyPatch) -> None:
    earlier = shingles._loader  # a load an earlier test started ends first: it would publish over the reset
    if earlier is not None:
        earlier.join(HANG_GUARD_S)
        assert not earlier.is_alive()
    for name, value in (("_kernel", None), ("_adder", None), ("_backend", None), ("_saved", 0.0), ("_loader", None)):
        monkeypatch.setattr(shingles, name, value)


@pytest.mark.usefixtures("unloaded")
def test_a_long_text_is_scored_while_the_kernel_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numba")
    if shingles.os.environ.get("PYGUARD_NUMBA", "1") == "0":
        pytest.skip("the compiled kernel is switched off (PYGUARD_NUMBA=0)")
    started, release = threading.Event(), threading.Event()
    real_load = shingles._load

    def slow_load():  # the loader reaches numba, then waits for the test
        started.set()
        assert release.wait(HANG_GUARD_S)
        return real_load()

    monkeypatch.setattr(shingles, "_load", slow_load)
    text = "a tool result that starts the kernel's load " * 100
    monkeypatch.setattr(shingles, "_LOAD_COST_S", shingles._SAVED_PER_TEXT_S)  # this one text pays for the load
    words, reference = np.zeros(1 << 10, dtype=np.uint64), np.zeros(1 << 10, dtype=np.uint64)
    try:
        got = shingles.score_batch(text, 5, words, SHIFT, None, SHIFT, Scratch())
    except BaseException:
        release.set()  # the loader must not wait on a test that failed
        raise
    assert started.wait(HANG_GUARD_S)  # the load began, and is held: the text was scored all the same
    want = score_batch_numpy(text, 5, reference, SHIFT, None, SHIFT)
    assert got[0] == want[0] and sorted(got[1].tolist()) == sorted(want[1].tolist())
    assert np.array_equal(words, reference)
    assert shingles._kernel is None and shingles._backend is None  # nothing half-loaded is published
    release.set()
    loader = shingles._loader
    assert loader is not None
    loader.join(HANG_GUARD_S)
    assert not loader.is_alive()
    assert shingles.backend() == "numba" and shingles._kernel is not None
    again = shingles.score_batch(text, 5, np.zeros(1 << 10, dtype=np.uint64), SHIFT, None, SHIFT, Scratch())
    assert again[0] == want[0] and sorted(again[1].tolist()) == sorted(want[1].tolist())


@pytest.mark.usefixtures("unloaded")
def test_the_load_starts_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    release = threading.Event()

    def counted_load():
        calls.append(1)
        assert release.wait(HANG_GUARD_S)

    monkeypatch.setattr(shingles, "_load", counted_load)
    monkeypatch.setattr(shingles, "_LOAD_COST_S", shingles._SAVED_PER_TEXT_S)
    text = "x" * 4096
    try:
        for _ in range(5):
            shingles.score_batch(text, 5, np.zeros(1 << 10, dtype=np.uint64), SHIFT, None, SHIFT, Scratch())
    finally:
        release.set()
    loader = shingles._loader
    assert loader is not None
    loader.join(HANG_GUARD_S)
    assert calls == [1] and shingles._backend == "numpy"  # _load gave nothing: numpy from now on


@pytest.mark.usefixtures("unloaded")
def test_the_load_waits_until_numpy_has_scored_enough_to_pay_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(shingles, "_load", lambda: calls.append(1))  # gives nothing: numpy goes on
    text = "a short tool result, 40 characters long."
    saved = shingles._SAVED_PER_TEXT_S + len(text) * shingles._SAVED_PER_CHAR_S
    before = int(shingles._LOAD_COST_S / saved) - 1  # texts whose estimated saving is still below the load's cost
    words = np.zeros(1 << 10, dtype=np.uint64)
    for _ in range(before):
        shingles.score_batch(text, 5, words, SHIFT, None, SHIFT, Scratch())
    assert shingles._loader is None and calls == []  # a process that scored little has not paid for numba
    for _ in range(3):
        shingles.score_batch(text, 5, words, SHIFT, None, SHIFT, Scratch())
    loader = shingles._loader
    assert loader is not None
    loader.join(HANG_GUARD_S)
    assert calls == [1] and shingles._backend == "numpy"
