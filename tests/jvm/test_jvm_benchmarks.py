"""The bridge's benchmark suites run and give well-formed JSON (tiny sizes; the figures themselves are not checked)."""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def suites():
    sys.path.insert(0, str(BENCH))
    try:
        yield lambda name: importlib.import_module(f"suites.{name}")
    finally:
        sys.path.remove(str(BENCH))


def test_overhead_suite_json(jvm, suites):
    result = suites("overhead").measure(runs=2, reps=1, warmup=1, probe_n=20)
    json.dumps(result)
    for key in (
        "per_call_us_guarded",
        "per_call_us_unguarded",
        "ratio",
        "per_call_us_guarded_deadline",
        "bridge_us_per_event_raw",
        "bridge_us_per_event_adapter_pool_thread",
    ):
        assert isinstance(result[key], float) and result[key] > 0, key
    assert set(result["styles"]) == {"aiservices", "executor"}
    assert set(result["styles"]["aiservices"]) == {
        "unguarded",
        "observe_only",
        "java_callback",
        "guarded",
        "guarded_deadline",
    }


def test_concurrency_suite_json(jvm, suites):
    result = suites("concurrency").measure(threads=(1, 3), runs=lambda n: 3, warmup=0)
    json.dumps(result)
    assert [lv["n"] for lv in result["threads"]] == [1, 3]
    # start_jvm() froze the start-up (its default) unless the environment said not to
    assert (result["startup_frozen"] > 0) == (os.environ.get("PYGUARD_FREEZE_GC", "1").strip() != "0")
    for lv in result["threads"]:
        assert lv["leaks"] == 0 and lv["iterations"] == 3 * result["calls_per_run"]
        assert lv["iterations_per_s"] > 0 and lv["p99_guard_us"] >= lv["p50_guard_us"] > 0
        assert lv["gc_full_collections"] >= 0 and lv["gc_full_pause_ms"] >= 0
        for variant in (lv["lane"], lv["frozen"]):
            assert variant["leaks"] == 0 and variant["p99_guard_us"] >= variant["p50_guard_us"] > 0
        assert lv["unguarded_iterations_per_s"] > 0
