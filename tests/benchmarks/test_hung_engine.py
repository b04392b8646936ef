"""benchmarks/hung_engine.py runs (a short deadline, the engine hung at model call 1, one warm run) and prints one
well-formed JSON object. No timing asserted: how long the caller is held is the benchmark's to measure."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "hung_engine.py"


@pytest.mark.jvm
def test_hung_engine_prints_each_runs_hold_and_the_comparison_with_the_target():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--deadline-ms", "200", "--at", "1", "--repeats", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["deadline_ms"] == 200 and out["hang_at_call"] == 1 and len(out["warm"]) == 1
    runs = [out["cold"], *out["warm"]]
    for run in runs:
        # nothing comes before call 1's decision, so it is the one that misses the deadline: the run ends at once
        assert run["outcome"] == "guard_error" and run["model_calls"] >= 1, run
        assert run["over_deadline_s"] == pytest.approx(run["held_s"] - 0.2, abs=0.002)
    assert out["worst_over_deadline_s"] == max(r["over_deadline_s"] for r in runs)
    assert out["within_target"] is (out["worst_over_deadline_s"] <= out["target_over_deadline_s"])
