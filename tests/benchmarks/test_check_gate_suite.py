"""The check_gate benchmark suite runs and returns well-formed JSON (tiny sizes; no rate or timing is asserted
beyond what a handful of trials can show)."""

import json
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def check_gate(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import suites.check_gate as check_gate

    monkeypatch.setattr(check_gate, "TRIALS", {True: 12, False: 12})
    monkeypatch.setattr(check_gate, "SIZES", (200, 500))
    return check_gate


def test_check_gate_runs_and_its_json_is_well_formed(check_gate):
    result = json.loads(json.dumps(check_gate.run(quick=True), allow_nan=False))
    assert result["alpha"] == 0.05 and result["trials"] == 12
    assert [s["runs"] for s in result["sizes"]] == [200, 500]
    for s in result["sizes"]:
        for key, ci in (
            ("false_alarm_rate", "false_alarm_ci"),
            ("power", "power_ci"),
            ("power_stall_check", "power_stall_check_ci"),
        ):
            assert 0.0 <= s[key] <= 1.0 and (s[key] * 12).is_integer()
            low, high = s[ci]
            assert 0.0 <= low <= s[key] <= high <= 1.0
        assert s["power_stall_check"] <= s["power"]  # a failed stall check fails the gate
    assert result["sizes"][-1]["power"] >= 0.5  # at 500 runs a doubled stall rate is caught in most of 12 pairs
    assert result["command"] == "python benchmarks/run.py check_gate --quick"
