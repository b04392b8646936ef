"""benchmarks/replay_speed.py on the committed real fixtures: one JSON object, each source measured under both
trees (here the same tree twice), the same stops in both, the totals adding up (shape and consistency, not speed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_replay_speed_measures_both_trees_on_the_same_runs() -> None:
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "replay_speed.py"),
            "--data",
            str(ROOT / "tests" / "data" / "real"),
            "--before",
            str(ROOT),
            "--sources",
            "tau2-telecom",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    result = json.loads(out.stdout)
    assert set(result["sources"]) == {"tau2-telecom"}
    for row in result["sources"].values():
        before, after = row["before"], row["after"]
        assert row["same_stops"] is True and before["stops"] == after["stops"]
        assert before["runs"] == after["runs"] > 0 and before["calls"] == after["calls"] >= before["runs"]
        assert after["calls_per_s"] > 0 and after["calls_per_cpu_s"] > 0 and row["ratio"] > 0
    calls = sum(row["after"]["calls"] for row in result["sources"].values())
    assert result["after"]["calls"] == result["before"]["calls"] == calls
    assert len(result["machine"]["load_average_end"]) == 3 and result["cpu_ratio"] > 0
