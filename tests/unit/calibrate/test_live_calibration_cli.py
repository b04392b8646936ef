"""``pyguard calibrate --live`` through click's CliRunner, with a fake runner in place of the JVM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_live_calibration import TASKS, Spy

import pyguard.live.calibration as live
from pyguard.cli import main


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Spy:
    spy = Spy()
    monkeypatch.setattr(live, "jvm_runner", spy)
    monkeypatch.setattr(live, "preflight", lambda plan: None)
    return spy


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(TASKS))
    return path


def _cli(*args: str):
    return CliRunner().invoke(main, ["calibrate", *args], terminal_width=200)


def test_live_then_resume_then_recalibrate_the_traces(spy: Spy, tasks: Path, tmp_path: Path):
    out = tmp_path / "out"
    common = ["--live", str(tasks), "--failure-cost", "5000", "--out", str(out), "--bootstrap", "50", "--json"]
    first = _cli(*common, "--max-runs", "5")
    assert first.exit_code == 0, first.output
    data = json.loads(first.stdout)
    assert data["task_types"] == [] and data["live"]["complete"] is False
    assert (data["live"]["ran"], data["live"]["remaining"]) == (5, 7)
    assert "run the same command again" in first.stderr
    assert not (out / "report.md").exists()

    second = _cli(*common)
    assert second.exit_code == 0, second.output
    data = json.loads(second.stdout)
    assert data["live"] | {"tasks": None} == {
        "tasks": None,
        "traces": str(out / "traces"),
        "planned": 12,
        "already_done": 5,
        "ran": 7,
        "remaining": 0,
        "complete": True,
        "ignored": 0,
    }
    assert {t["task_type"]: t["runs"] for t in data["task_types"]} == {"lookup": 6, "search": 6}
    assert len(spy.calls) == len(set(spy.calls)) == 12
    assert (out / "report.md").is_file() and (out / "CalibratedLimits.java").is_file()

    again = _cli(str(out / "traces"), "--failure-cost", "5000", "--bootstrap", "50", "--json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["task_types"] == data["task_types"]  # the traces are ordinary recorded runs


def test_live_table_and_repeats_override(spy: Spy, tasks: Path, tmp_path: Path):
    result = _cli(
        "--live",
        str(tasks),
        "--repeats",
        "2",
        "--threads",
        "1",
        "--cap",
        "9",
        "--traces",
        str(tmp_path / "tr"),
        "--failure-cost",
        "5000",
        "--bootstrap",
        "50",
    )
    assert result.exit_code == 0, result.output
    assert "lookup" in result.stdout and "search" in result.stdout
    assert len(spy.calls) == 8 and len(list((tmp_path / "tr").glob("*.jsonl"))) == 8


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "pass RUNS"),
        (["runs.jsonl", "--live", "TASKS"], "not both"),
        (["runs.jsonl", "--repeats", "3", "--failure-cost", "1"], "--repeats only apply with --live"),
        (["--live", "TASKS", "--format", "openai", "--out", "o", "--failure-cost", "1"], "--format openai applies"),
        (["--live", "TASKS", "--failure-cost", "1"], "--out DIR"),
        (["--live", "TASKS", "--out", "o"], "missing --failure-cost"),
        (["--live", "TASKS", "--out", "o", "--failure-cost", "-1"], "positive finite"),
        (["--live", "TASKS", "--out", "o", "--failure-cost", "1", "--threads", "0"], "--threads 0"),
        (["--live", "TASKS", "--out", "o", "--failure-cost", "1", "--repeats", "0"], "--repeats 0"),
        (["--live", "missing.toml", "--out", "o", "--failure-cost", "1"], "does not exist"),
    ],
)
def test_bad_input_exits_2(spy: Spy, tasks: Path, tmp_path: Path, args: list[str], message: str):
    args = [str(tasks) if a == "TASKS" else str(tmp_path / a) if a in ("o", "missing.toml") else a for a in args]
    result = _cli(*args)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.stderr.split()) and "Traceback" not in result.output
    assert spy.calls == []


def test_a_failing_run_exits_1_and_keeps_the_finished_runs(
    monkeypatch: pytest.MonkeyPatch, tasks: Path, tmp_path: Path
):
    spy = Spy(fail_on=3)
    monkeypatch.setattr(live, "jvm_runner", spy)
    monkeypatch.setattr(live, "preflight", lambda plan: None)
    result = _cli("--live", str(tasks), "--out", str(tmp_path / "o"), "--failure-cost", "1", "--threads", "1")
    assert result.exit_code == 1
    assert "could not be carried out" in " ".join(result.stderr.split())
    assert len(list((tmp_path / "o" / "traces").glob("*.jsonl"))) >= 2
