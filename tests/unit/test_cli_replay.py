"""`pyguard replay` through click's CliRunner: JSON shape, table output, exit codes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from pyguard.cli import main

RECORDINGS = Path(__file__).parents[1] / "data" / "recordings"
RUN_KEYS = {
    "id",
    "task_type",
    "success",
    "iterations",
    "stop_at",
    "reason",
    "reflect_at",
    "tool_calls",
    "tool_calls_saved",
    "tokens",
    "tokens_partial",
    "tokens_saved",
}
GROUP_KEYS = {
    "runs",
    "stopped",
    "reflected",
    "tool_calls",
    "tool_calls_saved",
    "tokens",
    "tokens_saved",
    "runs_without_usage",
}


def _invoke(*args: str):  # noqa: ANN202
    return CliRunner().invoke(main, ["replay", *args], catch_exceptions=False)


@pytest.fixture()
def tight_policy(tmp_path: Path) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text("base_budget = 3\nhard_cap = 3\n[caps]\nmax_model_calls = 3\n")
    return path


@pytest.mark.parametrize("name, fmt", [("openai_runs.jsonl", "openai"), ("pyguard_trace.jsonl", "pyguard")])
def test_json_output_shape(name: str, fmt: str) -> None:
    result = _invoke(str(RECORDINGS / name), "--format", fmt, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data) == {"runs", "summary", "config"}
    assert data["runs"] and all(set(r) == RUN_KEYS for r in data["runs"])
    summary = data["summary"]
    for group in ("successful", "failed", "unlabelled"):
        assert set(summary[group]) == GROUP_KEYS
    assert summary["runs"] == len(data["runs"])
    assert "continue" in summary["reflections"]


def test_json_values_with_a_tight_policy(tight_policy: Path) -> None:
    result = _invoke(str(RECORDINGS / "openai_runs.jsonl"), "--config", str(tight_policy), "--json")
    assert result.exit_code == 0, result.output
    runs = {r["id"]: r for r in json.loads(result.output)["runs"]}
    loop = runs["loop-fail"]
    assert (loop["success"], loop["iterations"], loop["stop_at"]) == (False, 8, 3)
    assert loop["tool_calls"] == 7 and loop["tool_calls_saved"] == 4
    assert loop["tokens"] == 3004 and 0 < loop["tokens_saved"] < loop["tokens"]
    cut = runs["cutoff"]
    assert cut["stop_at"] == 3 and cut["tokens"] is None and cut["tokens_saved"] is None  # no usage recorded
    assert runs["openai_runs[3]"]["success"] is None  # no label: unknown
    assert runs["lookup-ok"]["stop_at"] is None and runs["lookup-ok"]["tool_calls_saved"] == 0
    summary = json.loads(result.output)["summary"]
    assert summary["failed"]["stopped"] == 2 and summary["censored"] == ["cutoff"]


def test_table_output(tight_policy: Path) -> None:
    result = _invoke(str(RECORDINGS / "pyguard_trace.jsonl"), "--config", str(tight_policy), "--runs")
    assert result.exit_code == 0, result.output
    for needle in ("inc-1", "look-1", "pyguard replay: 2 runs, 1 would be stopped", "all runs", "continue"):
        assert needle in result.output


@pytest.mark.parametrize(
    "args, needle",
    [
        (["nope.jsonl"], "does not exist"),
        ([str(RECORDINGS / "pyguard_trace.jsonl"), "--format", "openai", "--strict"], "format='pyguard'"),
        ([str(RECORDINGS / "pyguard_trace.jsonl"), "--format", "openai"], "no records that could be read"),
        ([str(RECORDINGS / "openai_runs.jsonl"), "--config", "missing.toml"], "missing.toml"),
    ],
)
def test_bad_input_exits_2_with_the_message(args: list[str], needle: str) -> None:
    result = CliRunner().invoke(main, ["replay", *args])
    assert result.exit_code == 2
    assert needle in result.output
    assert "Traceback" not in result.output


def test_malformed_trace_exits_2_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = (RECORDINGS / "pyguard_trace.jsonl").read_text().splitlines()
    lines[4] = "not a record"
    path.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(main, ["replay", str(path)])
    assert result.exit_code == 2 and f"{path}:5" in result.output


def test_a_torn_record_makes_its_run_incomplete_naming_the_line(tmp_path: Path) -> None:
    """A record cut mid-write inside the file (a disk that filled): its run is listed as incomplete, never scored as
    it ended (issue 33); the command still replays."""
    path = tmp_path / "t.jsonl"
    lines = (RECORDINGS / "pyguard_trace.jsonl").read_text().splitlines()
    lines[4] = lines[4][:-5]
    path.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(main, ["replay", str(path), "--json"])
    assert result.exit_code == 0, result.output
    assert f"warning: {path}: run " in result.output and "line 5 is torn" in result.output
    summary = json.loads(result.output[result.output.index("{") :])["summary"]
    assert len(summary["incomplete"]) == 1


def test_bad_config_value_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text("base_budget = 0\n")
    result = CliRunner().invoke(main, ["replay", str(RECORDINGS / "openai_runs.jsonl"), "--config", str(path)])
    assert result.exit_code == 2 and "base_budget" in result.output


MIXED = Path(__file__).parents[1] / "data" / "mixed_runs.jsonl"


def test_default_output_is_the_summary_per_task_type_and_overall() -> None:
    result = CliRunner().invoke(main, ["replay", str(MIXED)], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for name in ("code_fix", "order_support", "refund_escalation", "retail_purchase", "web_research", "all runs"):
        assert any(line.lstrip().startswith(name) for line in lines), name
    # no per-run rows (the cut-off runs are named on one line of their own)
    assert "support-02" not in result.output and not any(line.lstrip().startswith("swe-03") for line in lines)
    assert len(lines) < 30 and max(len(line) for line in lines) <= 100
    assert "--runs" in result.output
    per_run = CliRunner().invoke(main, ["replay", str(MIXED), "--runs"], env={"COLUMNS": "100"})
    assert per_run.exit_code == 0 and "support-02" in per_run.output and "swe-03" in per_run.output


def test_summary_stays_readable_at_80_columns() -> None:
    result = CliRunner().invoke(main, ["replay", str(MIXED)], env={"COLUMNS": "80"})
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) <= 80
    row = next(line for line in lines if line.lstrip().startswith("code_fix"))
    assert re.search(r"\d+% of 180\b", row), row  # the figures of a row stay on its line (180 failed-run calls)


def test_json_rows_carry_the_task_type_and_the_summary_has_per_type_rows() -> None:
    result = _invoke(str(MIXED), "--json")
    data = json.loads(result.output)
    assert {r["task_type"] for r in data["runs"]} == {
        "code_fix",
        "order_support",
        "refund_escalation",
        "retail_purchase",
        "web_research",
    }
    rows = {t["task_type"]: t for t in data["summary"]["task_types"]}
    assert list(rows)[-1] == "*" and rows["*"]["runs"] == len(data["runs"]) == 84
    assert sum(rows[k]["runs"] for k in rows if k != "*") == 84
    support = rows["order_support"]
    by_run = [r for r in data["runs"] if r["task_type"] == "order_support"]
    assert support["stopped"] == sum(r["stop_at"] is not None for r in by_run)
    assert support["failed_stopped"] == sum(r["stop_at"] is not None and r["success"] is False for r in by_run)
    assert support["tool_calls_saved"] == sum(r["tool_calls_saved"] for r in by_run)


def test_the_per_run_table_stays_readable_at_80_columns() -> None:
    result = CliRunner().invoke(main, ["replay", str(MIXED), "--runs"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) <= 80
    rows = [line for line in lines if line.lstrip().startswith(("support-02", "swe-03"))]
    assert len(rows) >= 2  # each run's row on a line of its own, its id whole
