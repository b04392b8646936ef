"""The engine's benchmark suites run and return well-formed JSON (no timing is asserted)."""

import json
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "benchmarks"


@pytest.fixture
def suites(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import suites.detection as detection
    import suites.engine_scaling as engine_scaling

    return detection, engine_scaling


def test_engine_scaling_runs(suites, monkeypatch):
    _, scaling = suites
    monkeypatch.setattr(scaling, "SIZES", {"1KB": 1000, "100KB": 3000})  # small texts: a smoke test
    monkeypatch.setattr(scaling, "LENGTHS", (10, 1000))
    # keep the "1000-iteration" run short: the suite's shape is checked here, not its timing
    monkeypatch.setattr(scaling, "_events", lambda n, chars, texts, f=scaling._events: f(min(n, 40), chars, texts))
    result = json.loads(json.dumps(scaling.run(quick=True)))
    assert {r["iterations"] for r in result["rows"]} == {10, 1000}
    assert set(result["ratio_1000_vs_10"]) == {"1KB", "100KB"}
    assert all(r["us_per_decision_at_n"] > 0 for r in result["rows"])
    assert result["novelty_backend"] in ("numba", "numpy")
    replay = result["replay_one_core"]
    assert replay["runs"] > 100 and replay["events"] > replay["runs"]
    assert replay["runs_per_s"] > 0 and replay["events_per_s"] >= replay["runs_per_s"]
    assert result["prepare_json_100KB"]["masked_us"] > 0 and result["prepare_json_100KB"]["unmasked_us"] > 0
    adversarial = result["adversarial"]
    assert len(adversarial["rows"]) == 11 and all(r["cpu_ms_per_decision"] >= 0 for r in adversarial["rows"])
    assert adversarial["worst_cpu_ms"] == max(r["cpu_ms_per_decision"] for r in adversarial["rows"])
    assert adversarial["within_target"] == (adversarial["worst_cpu_ms"] < adversarial["target_ms"])


def test_detection_runs(suites, monkeypatch):
    detection, _ = suites
    monkeypatch.setattr(detection, "generate", lambda kind, seed, g=detection.generate: g(kind, seed % 2))
    result = json.loads(json.dumps(detection.run(quick=True)))
    for key in ("precision", "recall", "mean_delay", "false_stop_rate"):
        assert 0 <= result[key] <= (1 if key != "mean_delay" else 10)
    assert set(result["by_variation"]) == {"plain", "volatile", "parallel", "reread", "counter"}
    assert result["logistics_incident"]["stopped_at"][0] == 3  # judged before call 4: stopped after call 3
