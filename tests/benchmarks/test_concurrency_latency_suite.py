"""The concurrency_latency suite runs guarded and unguarded agents on a slow scripted model and gives well-formed
JSON (tiny sizes; the timings themselves are not checked)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def suite():
    sys.path.insert(0, str(BENCH))
    try:
        import importlib

        yield importlib.import_module("suites.concurrency_latency")
    finally:
        sys.path.remove(str(BENCH))


def test_quick_mode_json(jvm, suite):
    result = suite.measure(agents=3, levels=[((5, 10), 2)], calls=3, warmup=0)
    json.dumps(result)
    [level] = result["levels"]
    assert level["latency_ms"] == [5, 10] and level["agents"] == 3 and level["runs_per_agent"] == 2
    assert level["unguarded"]["runs"] == 6 and level["unguarded"]["model_calls"] == 18
    for name in ("guarded", "frozen"):
        g = level[name]
        assert g["leaks"] == 0 and g["runs"] == 6 and g["model_calls"] == 18
        assert g["guard_us"]["max"] >= g["guard_us"]["p99"] >= g["guard_us"]["p50"] > 0
        assert set(g["added_ms"]) == {"p50", "p99"} and isinstance(g["met"], bool)
        assert g["gc_full_collections"] >= 0


def test_scripted_model_takes_its_latency(jvm):
    """The scripted model's latency_ms holds each call at least that long (a lower bound only: no timing upper bound),
    and a bad value is refused with the value named."""
    import time

    from pyguard.base.errors import InputError
    from pyguard.jvm import build_agent, run_built, scripted_model

    model = scripted_model({"name": "slow", "latency_ms": [30, 40], "turns": [{"answer": "done"}]})
    t0 = time.perf_counter()
    result = run_built(build_agent("aiservices", model), "go")
    assert result.status == "answered" and time.perf_counter() - t0 >= 0.030
    for bad in (-1, [40, 30], "fast", [1, 2, 3]):
        with pytest.raises(InputError, match="latency_ms"):
            scripted_model({"name": "slow", "latency_ms": bad, "turns": [{"answer": "done"}]})
