"""benchmarks/large_result.py runs (a small result, both processes) and prints one well-formed JSON object. No
figures asserted: memory and time are the benchmark's to measure, not a test's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "large_result.py"


@pytest.mark.jvm
def test_large_result_prints_the_bare_and_guarded_runs_and_the_comparison():
    done = subprocess.run([sys.executable, str(SCRIPT), "300000"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["size_chars"] == 300_000 and out["target_peak_growth_mb"] == 1
    bare, guarded = out["bare"], out["guarded"]
    assert bare["outcome"] == "answered" and guarded["outcome"] == "succeeded", out
    for row in (bare, guarded):
        assert {"run_s", "rss_before_mb", "peak_rss_mb", "peak_growth_mb", "java_heap_peak_mb"} <= row.keys()
        assert row["peak_rss_mb"] >= row["rss_before_mb"] > 0
    # the guarded run's trace recorded the result as a window, said so, and reads back
    assert guarded["trace_whole_chars"] == [300_000] and guarded["trace_reads_back"] is True
    assert out["guard_share_mb"] == guarded["peak_growth_mb"] - bare["peak_growth_mb"]
    assert out["within_target"] is (guarded["peak_growth_mb"] <= 1)
