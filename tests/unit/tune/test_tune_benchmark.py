"""The tune benchmark suite runs (quick, shrunk further) and returns well-formed JSON (no timing asserted)."""

import json
from pathlib import Path

BENCH = Path(__file__).resolve().parents[3] / "benchmarks"


def test_tune_suite_quick_json_shape(monkeypatch, tiny_space):
    monkeypatch.syspath_prepend(str(BENCH))
    import suites.tune as suite

    monkeypatch.setattr(suite.SearchSpace, "quick", classmethod(lambda cls: tiny_space))

    real = suite.run.__globals__["known_best_runs"]
    monkeypatch.setitem(suite.run.__globals__, "known_best_runs", lambda n, seed=0: real(min(n, 60), seed))
    real_mix = suite.run.__globals__["tune_runs"]
    monkeypatch.setitem(suite.run.__globals__, "tune_runs", lambda n, seed=0: real_mix(min(n, 45), seed))
    result = json.loads(json.dumps(suite.run(quick=True)))
    rec, timing = result["recovery"], result["timing"]
    assert rec["seeds"] == len(rec["rows"]) == 2
    assert 0 <= rec["recovery_rate"] <= 1 and 0 <= rec["same_caps_rate"] <= 1
    assert set(rec["best_hard_caps"]) == {"lookup", "ops", "research"}
    for row in rec["rows"]:
        assert {"seed", "recovered", "test_false_stop_rate", "test_calls_saved", "hard_caps"} <= set(row)
    assert timing["seconds"] > 0 and timing["engine_passes"] >= 1 and timing["verification_mismatches"] == 0
