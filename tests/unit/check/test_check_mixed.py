"""`pyguard check` on the mixed real-shaped fixture (tests/data/mixed_runs.jsonl): labels, like-with-like tokens,
table widths, and JUnit XML with a control character in a task type."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from pyguard.check import GateConfig, check_runs, policy_replayer
from pyguard.check.report import junit_xml, xml_safe
from pyguard.cli import main
from pyguard.loading import load_runs
from pyguard.replay import replay_runs

FIXTURE = Path(__file__).parents[2] / "data" / "mixed_runs.jsonl"


def _check(*args: str, columns: int = 100):  # noqa: ANN202
    return CliRunner().invoke(main, ["check", *args], env={"COLUMNS": str(columns)})


def _rewrite(tmp_path: Path, name: str, change) -> Path:  # noqa: ANN001
    """A copy of the fixture with ``change(run, line_number)`` applied to every run object."""
    out = tmp_path / name
    with out.open("w") as f:
        for i, line in enumerate(FIXTURE.read_text().splitlines()):
            run = json.loads(line)
            change(run, i)
            f.write(json.dumps(run) + "\n")
    return out


def test_success_comes_from_resolved_and_reward_labels_too() -> None:
    records = load_runs(FIXTURE)
    report = check_runs(records, GateConfig(), fmt="openai", make_replayer=lambda: policy_replayer(None))
    replayed = {r.id: r for r in replay_runs(records).runs}
    for task_type, label in (("retail_purchase", "reward"), ("web_research", "reward"), ("code_fix", "resolved")):
        group = report.summary.groups[task_type]
        expected = sum(
            1
            for r in records
            if r.task_type == task_type and r.end.success_label and replayed[r.run_id].stop_at is None
        )
        assert expected > 0, (task_type, label)
        assert group.count("succeeded") == expected, task_type  # type: ignore[arg-type]
    # runs that end in their final tool call (purchase) with reward 1.0 are successes, not cut-off runs
    assert report.summary.groups["retail_purchase"].count("succeeded") == 10  # type: ignore[arg-type]


def test_tokens_are_compared_like_with_like(tmp_path: Path) -> None:
    # The candidate uses 10% fewer tokens, but only the most expensive type (code_fix) still reports usage:
    # a raw pooled mean rises (the mix of runs with usage changed), every type's tokens fell.
    def cheaper(run: dict, i: int) -> None:
        for m in run["messages"]:
            if "usage" in m:
                if run["task_type"] == "code_fix":
                    m["usage"] = {k: int(v * 0.9) for k, v in m["usage"].items()}
                else:
                    del m["usage"]

    candidate = _rewrite(tmp_path, "candidate.jsonl", cheaper)
    baseline = tmp_path / "baseline.json"
    assert _check(str(FIXTURE), "--write-baseline", str(baseline)).exit_code == 0
    result = _check(str(candidate), "--baseline", str(baseline), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    base = json.loads(baseline.read_text())["groups"]
    assert data["groups"]["*"]["tokens_mean"] > sum(base["*"]["tokens"]) / len(base["*"]["tokens"])  # the trap
    tokens = {c["task_type"]: c for c in data["checks"] if c["name"] == "baseline.tokens"}
    overall = tokens["*"]
    assert overall["passed"] and overall["value"] < overall["baseline"]
    assert overall["n"] == data["groups"]["code_fix"]["tokens_runs"] == 13  # the runs it rests on
    assert "relative to their task type's baseline median" in overall["message"]
    assert "over the 1 type(s) with usage in both (code_fix)" in overall["message"]
    code = tokens["code_fix"]
    assert code["value"] < code["baseline"] and code["n"] == 13
    assert "over the 13 of 20 runs with usage" in code["message"]


def test_a_real_increase_in_tokens_still_fails(tmp_path: Path) -> None:
    def dearer(run: dict, i: int) -> None:
        for m in run["messages"]:
            if "usage" in m:
                m["usage"] = {k: int(v * 3) for k, v in m["usage"].items()}

    baseline = tmp_path / "baseline.json"
    assert _check(str(FIXTURE), "--write-baseline", str(baseline)).exit_code == 0
    result = _check(str(_rewrite(tmp_path, "dearer.jsonl", dearer)), "--baseline", str(baseline), "--json")
    assert result.exit_code == 1
    failed = {(c["name"], c["task_type"]) for c in json.loads(result.output)["checks"] if not c["passed"]}
    assert ("baseline.tokens", "*") in failed


@pytest.mark.parametrize("columns", [100, 80])
def test_tables_fit_the_terminal(columns: int, tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    assert _check(str(FIXTURE), "--write-baseline", str(baseline)).exit_code == 0
    result = _check(str(FIXTURE), "--baseline", str(baseline), columns=columns)
    assert result.exit_code == 0, result.output
    table_lines = result.output.split("FAIL")[0].split("pyguard check")[0].splitlines()
    assert max(len(line) for line in table_lines) <= columns
    row = next(line for line in table_lines if line.lstrip().startswith("code_fix"))
    assert "(13/20)" in row  # tokens say how many runs they rest on, on the row's own line


def test_junit_xml_with_a_control_character_in_a_task_type(tmp_path: Path) -> None:
    def odd_type(run: dict, i: int) -> None:
        if run["task_type"] == "web_research":
            run["task_type"] = "web\x01research\x1b[31m"

    runs = _rewrite(tmp_path, "odd.jsonl", odd_type)
    junit = tmp_path / "junit.xml"
    result = _check(str(runs), "--max-stall-rate", "0.01", "--junit-xml", str(junit))
    assert result.exit_code == 1  # the stall-rate threshold fails: failures carry the messages too
    root = ET.parse(junit).getroot()  # parses
    names = {case.get("classname") for case in root.iter("testcase")}
    assert "pyguard.check.web\\x01research\\x1b[31m" in names
    assert any(f.get("message") for f in root.iter("failure"))
    assert xml_safe("ok\ttab\nline") == "ok\ttab\nline"  # what XML can hold is kept


def test_junit_xml_of_a_report_parses_for_every_character() -> None:
    records = load_runs(FIXTURE)
    for r in records:
        if r.task_type == "refund_escalation":
            r.start = r.start.model_copy(update={"task_type": "refund\x00\x0b\ud800"})
    report = check_runs(
        records, GateConfig(max_stall_rate=0.0), fmt="openai", make_replayer=lambda: policy_replayer(None)
    )
    root = ET.fromstring(junit_xml(report).split("\n", 1)[1])
    assert any("refund\\x00\\x0b\\ud800" in (c.get("classname") or "") for c in root.iter("testcase"))
