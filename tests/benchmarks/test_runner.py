"""benchmarks/run.py: one JSON object per suite, stamped with the suite, mode, date, command, commit and machine; bad
names rejected."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

RUN = Path(__file__).resolve().parents[2] / "benchmarks" / "run.py"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(RUN), *args], capture_output=True, text=True, timeout=300)


def test_calibrate_scale_quick_prints_one_well_formed_json_object():
    done = _run("calibrate_scale", "--quick", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["suite"] == "calibrate_scale" and result["quick"] is True
    assert {"date", "machine", "commit", "run_seconds"} <= result.keys() and result["machine"]["cpus"] >= 1
    assert result["command"].endswith("python benchmarks/run.py calibrate_scale --quick --json")
    assert len(result["machine"]["load_average"]) == 3 and len(result["machine"]["load_average_end"]) == 3
    assert result["runs"] == 10_000 and result["model_calls"] > result["runs"]
    # each figure is rounded to 1 ms on its own, so the rounded total may differ from the rounded sum by 1 ms
    assert abs(result["total_s"] - (result["extract_s"] + result["estimate_s"])) <= 0.0011
    for n_star, low, high in result["recommended"].values():
        assert low <= n_star <= high


def test_unknown_suite_is_refused_with_the_list_of_suites():
    done = _run("no_such_suite", "--json")
    assert done.returncode == 2
    assert "unknown suite 'no_such_suite'" in done.stderr and "frontier" in done.stderr
