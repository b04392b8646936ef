import json
import xml.etree.ElementTree as ET

import pytest
from rich.console import Console

from pyguard.check import GateConfig, check_runs, junit_xml, markdown, render, report_dict, report_json, summarize
from pyguard.check.outcomes import facts_from_footer


@pytest.fixture
def failing_report(make_runs):
    baseline = summarize(facts_from_footer(r) for r in make_runs(300, seed=1, types=("lookup", "incident")))
    runs = make_runs(300, seed=2, types=("lookup",)) + make_runs(300, seed=3, types=("incident",), stalled=0.25)
    report = check_runs(runs, GateConfig(max_stall_rate=0.15, max_p95_iterations=12), baseline)
    assert report.failures and len(report.failures) < len(report.checks)
    return report


def test_junit_has_one_testcase_per_check_and_a_failure_per_failed_check(failing_report):
    root = ET.fromstring(junit_xml(failing_report))
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == len(failing_report.checks)
    suite = root.find("testsuite")
    assert int(suite.get("tests")) == len(cases) and int(suite.get("failures")) == len(failing_report.failures)
    failed = [c for c in cases if c.find("failure") is not None]
    assert len(failed) == len(failing_report.failures)
    for case, check in zip(cases, failing_report.checks, strict=False):
        assert case.get("name") == check.name and case.get("classname") == f"pyguard.check.{check.task_type}"
        if not check.passed:
            assert case.find("failure").get("message") == check.message
            assert json.loads(case.find("failure").text)["name"] == check.name


def test_markdown_names_every_failure(failing_report):
    md = markdown(failing_report)
    assert md.startswith("## pyguard check: ❌ failed")
    failures_section = md.split("### Failures", 1)[1].split("<details>", 1)[0]
    for c in failing_report.failures:
        group = "all runs" if c.task_type == "*" else c.task_type
        line = next(line for line in failures_section.splitlines() if f"`{c.name}` | {group} |" in line)
        assert c.message in line
    assert "| incident |" in md and "| all runs |" in md


def test_markdown_of_a_passing_gate(make_runs):
    report = check_runs(make_runs(50, seed=1), GateConfig(max_stall_rate=0.5))
    md = markdown(report)
    assert "✅ passed" in md and "### Failures" not in md and "stall_rate" in md


def test_json_has_every_check_with_its_figures(failing_report):
    data = json.loads(report_json(failing_report))
    assert data["passed"] is False and data["exit_code"] == 1
    assert len(data["checks"]) == len(failing_report.checks)
    for c in data["checks"]:
        assert {"name", "task_type", "value", "threshold", "baseline", "p_value", "passed", "message"} <= set(c)
    assert data["groups"]["incident"]["outcomes"]["stalled"] > 0
    assert report_dict(failing_report)["runs"] == 600


def test_rich_rendering_lists_failures(failing_report):
    console = Console(record=True, width=200)
    render(failing_report, console)
    text = console.export_text()
    assert "pyguard check failed" in text
    for c in failing_report.failures:
        assert c.message.split(":")[0] in text
