"""The trace of a failed test is kept as an artifact: a JSONL file under the trace dir, its path in the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from plugin_runs import MAKE_RESULT_SOURCE

from pyguard.pytest_plugin.artifacts import RunCollector, trace_file_name

TESTS = """
from plugin_runs import make_result
from pyguard.testing import assert_succeeded

STATUS = ("get_shipment_status", '{"orderId":"12345"}')

def test_loops(pyguard_runs):
    r = pyguard_runs.add(make_result([[STATUS]] * 4, outcome="stalled", gains=[1, 0, 0, 0], run_id="loop-1"))
    assert_succeeded(r, within=8)

def test_converges(pyguard_runs):
    r = pyguard_runs.add(make_result([[STATUS], "done"], run_id="ok-1"))
    assert_succeeded(r, within=8)

def test_no_runs():
    assert False
"""


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(plugin_runs=MAKE_RESULT_SOURCE, test_agent=TESTS)
    return pytester


def traces(folder: Path) -> dict[str, list[dict]]:
    return (
        {p.name: [json.loads(line) for line in p.read_text().splitlines()] for p in sorted(folder.glob("*.jsonl"))}
        if folder.exists()
        else {}
    )


def test_a_failed_test_keeps_its_trace_and_shows_the_path_and_summary(suite: pytest.Pytester):
    out = suite.path / "traces"
    result = suite.runpytest("--pyguard-trace-dir", str(out))
    result.assert_outcomes(passed=1, failed=2)
    kept = traces(out)
    assert list(kept) == ["test_agent.py__test_loops.jsonl"]  # passed tests and tests without runs leave nothing
    records = kept["test_agent.py__test_loops.jsonl"]
    assert [r["type"] for r in records] == ["run_start"] + ["iteration", "decision"] * 4 + ["run_end"]
    assert records[0]["run_id"] == "loop-1" and records[-1]["type"] == "run_end" and records[-1]["outcome"] == "stalled"
    result.stdout.fnmatch_lines(
        [
            "*- pyguard traces -*",
            f"trace of 1 run(s): {out / 'test_agent.py__test_loops.jsonl'}",
            "run loop-1: outcome=stalled*",
            "*repeated 4x: get_shipment_status*",
        ]
    )
    # the assertion message itself carries the trace summary
    result.stdout.fnmatch_lines(
        [
            "E * AssertionError: expected the run to succeed, but its outcome is 'stalled'",
            "E * run loop-1 (task type lookup): outcome=stalled",
            "*repeated fingerprints: get_shipment_status*x4*",
        ]
    )


def test_the_kept_trace_reads_back_with_the_trace_loader(suite: pytest.Pytester):
    load_runs = pytest.importorskip("pyguard.loading").load_runs
    out = suite.path / "traces"
    suite.runpytest("--pyguard-trace-dir", str(out))
    (run,) = load_runs(out / "test_agent.py__test_loops.jsonl")
    assert (run.run_id, len(run.events), run.end.outcome.value) == ("loop-1", 4, "stalled")


@pytest.mark.parametrize(
    ("keep", "expected"),
    [
        ("all", ["test_agent.py__test_converges.jsonl", "test_agent.py__test_loops.jsonl"]),
        ("none", []),
    ],
)
def test_keep_all_or_none(suite: pytest.Pytester, keep: str, expected: list[str]):
    out = suite.path / "traces"
    suite.runpytest("--pyguard-trace-dir", str(out), f"--pyguard-keep-traces={keep}").assert_outcomes(
        passed=1, failed=2
    )
    assert list(traces(out)) == expected


def test_the_default_trace_dir_is_under_pytest_basetemp(suite: pytest.Pytester):
    base = suite.path / "base"
    suite.runpytest(f"--basetemp={base}").assert_outcomes(passed=1, failed=2)
    assert list(traces(base / "pyguard-traces")) == ["test_agent.py__test_loops.jsonl"]


def test_the_trace_path_is_a_junit_property(suite: pytest.Pytester):
    out = suite.path / "traces"
    suite.runpytest("--pyguard-trace-dir", str(out), "--junitxml", str(suite.path / "junit.xml"))
    xml = (suite.path / "junit.xml").read_text()
    assert f'<property name="pyguard_trace" value="{out / "test_agent.py__test_loops.jsonl"}" />' in xml


def test_under_xdist_each_worker_writes_its_own_tests_traces(suite: pytest.Pytester):
    pytest.importorskip("xdist")
    out = suite.path / "traces"
    result = suite.runpytest("-n", "2", "--pyguard-trace-dir", str(out), "--pyguard-keep-traces=all")
    result.assert_outcomes(passed=1, failed=2)
    assert list(traces(out)) == ["test_agent.py__test_converges.jsonl", "test_agent.py__test_loops.jsonl"]
    result.stdout.fnmatch_lines(["*- pyguard traces -*", "trace of 1 run(s): *test_loops.jsonl"])


def test_trace_file_names_are_safe_and_distinct():
    assert trace_file_name("tests/test_a.py::TestX::test_y[p-1/2]") == "tests.test_a.py__TestX__test_y-p-1.2.jsonl"
    assert trace_file_name("a.py::t[x]") != trace_file_name("a.py::t[y]")


def test_the_collector_refuses_what_is_not_a_run_result():
    with pytest.raises(ValueError, match="pyguard_runs.add\\(\\) takes a pyguard RunResult, got dict"):
        RunCollector().add({"outcome": "succeeded"})  # type: ignore[arg-type]
