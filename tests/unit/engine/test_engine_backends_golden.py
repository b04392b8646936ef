"""The compiled novelty kernel (the ``fast`` extra, numba) and the numpy path, the reference, decide the golden corpus
identically: the same decisions, budgets, outcomes and gains, run by run (test_decisions_golden.py holds the numpy
path to the fixture; in one process the first texts are scored by numpy and the rest by the kernel once loaded,
so that test alone does not pin either)."""

from __future__ import annotations

import json

import pytest
from test_decisions_golden import FIXTURE, cases, record

from pyguard.engine import shingles


def _record_all(monkeypatch: pytest.MonkeyPatch, backend: str) -> dict[str, dict[str, dict]]:
    with monkeypatch.context() as m:
        if backend == "numpy":
            m.setattr(shingles, "_kernel", None)
            m.setattr(shingles, "_adder", None)
            m.setattr(shingles, "_backend", "numpy")
        elif shingles.backend() != "numba":
            pytest.skip("numba is not installed or switched off (PYGUARD_NUMBA=0)")
        return {name: {run.name: record(config, run) for run in runs} for name, config, runs in cases()}


def test_the_kernel_and_numpy_decide_the_golden_corpus_identically(monkeypatch: pytest.MonkeyPatch) -> None:
    reference = _record_all(monkeypatch, "numpy")
    compiled = _record_all(monkeypatch, "numba")
    golden = json.loads(FIXTURE.read_text())
    for case, runs in reference.items():
        for name, got in runs.items():
            assert compiled[case][name] == got, f"{case}/{name}: the kernel decided otherwise than numpy"
            want = golden[case][name]
            assert (got["x"], got["b"], got["n"], got["end"]) == (want["x"], want["b"], want["n"], want["end"]), name
            assert got["g"] == pytest.approx(want["g"], abs=1.5e-3), f"{case}/{name}: gains changed"
