"""The trace of a failed test is kept as an artifact: a JSONL file under the trace dir, its path in the report."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
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
    # the failure text itself carries the trace's path and the run's summary, where a CI's test view shows it
    failure = ET.parse(suite.path / "junit.xml").find(".//testcase[@name='test_loops']/failure")
    assert failure is not None and failure.text is not None
    assert f"trace of 1 run(s): {out / 'test_agent.py__test_loops.jsonl'}" in failure.text
    assert "run loop-1: outcome=stalled" in failure.text


def test_an_xfailed_test_keeps_its_trace(pytester: pytest.Pytester):
    pytester.makepyfile(
        plugin_runs=MAKE_RESULT_SOURCE,
        test_agent="""
import pytest
from plugin_runs import make_result

@pytest.mark.xfail(reason="the agent still loops")
def test_loops(pyguard_runs):
    r = pyguard_runs.add(make_result([[("lookup", "{}")]] * 3, outcome="stalled", gains=[1, 0, 0], run_id="x-1"))
    assert r.succeeded
""",
    )
    out = pytester.path / "traces"
    pytester.runpytest("--pyguard-trace-dir", str(out)).assert_outcomes(xfailed=1)
    assert list(traces(out)) == ["test_agent.py__test_loops.jsonl"]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_the_session_ends_with_a_summary_of_each_tests_runs(suite: pytest.Pytester, workers: list[str]):
    if workers:
        pytest.importorskip("xdist")
    result = suite.runpytest(*workers, "--pyguard-trace-dir", str(suite.path / "traces"))
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*= pyguard runs =*",
            "test *runs  calls    tokens  outcomes",
            "test_agent.py::test_loops * 1 * 4 * 1 stalled",
            "test_agent.py::test_converges * 1 * 2 * 1 succeeded",
            f"2 tests, 2 runs, 6 model calls, * tokens; 1 traces kept (e.g. {suite.path / 'traces'}*test_loops.jsonl)",
        ]
    )


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


@pytest.mark.parametrize(("given", "bits"), [([], 0o600), (["--pyguard-trace-mode", "640"], 0o640)])
def test_kept_traces_get_the_configured_permission_bits(suite: pytest.Pytester, given: list[str], bits: int):
    out = suite.path / "traces"
    suite.runpytest("--pyguard-trace-dir", str(out), *given).assert_outcomes(passed=1, failed=2)
    assert (out / "test_agent.py__test_loops.jsonl").stat().st_mode & 0o777 == bits


def test_a_bad_trace_mode_is_a_usage_error(suite: pytest.Pytester):
    result = suite.runpytest("--pyguard-trace-mode", "rw-r-----")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*pyguard_trace_mode = 'rw-r-----' is not valid: give octal permission bits*"])


def test_a_session_removes_the_traces_an_earlier_session_kept(suite: pytest.Pytester):
    out = suite.path / "traces"
    out.mkdir()
    (out / "test_agent.py__test_gone.jsonl").write_text('{"type": "run_start", "version": 1}\n')
    (out / "notes.jsonl").write_text('{"type": "something else"}\n')  # not a pyguard trace: left alone
    (out / "README.txt").write_text("kept")
    result = suite.runpytest("--pyguard-trace-dir", str(out))
    result.stdout.fnmatch_lines([f"pyguard traces: removed 1 kept by an earlier session from {out}*"])
    assert sorted(p.name for p in out.iterdir()) == ["README.txt", "notes.jsonl", "test_agent.py__test_loops.jsonl"]

    (out / "test_agent.py__test_gone.jsonl").write_text('{"type": "run_start", "version": 1}\n')
    suite.runpytest("--pyguard-trace-dir", str(out), "--pyguard-keep-earlier-traces")
    assert (out / "test_agent.py__test_gone.jsonl").exists()
