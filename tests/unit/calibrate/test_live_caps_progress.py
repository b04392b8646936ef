"""Live calibration (issue 37, point 6): the agent's own maxToolCallingRoundTrips named where it cut runs, and progress
lines without a terminal (a CI log, a pipe)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_live_calibration import TASKS, fake_record

import pyguard.live.calibration as live
from pyguard.base.events import IterationEvent, Outcome, RunEnd, RunRecord, RunStart, ToolCall
from pyguard.cli import main
from pyguard.live.calibration import PlannedRun, agent_caps, parse_tasks
from pyguard.live.calibration.pool import execute

ROUND_TRIPS = 7
EXCEEDED = (
    "the agent's own cap ended the run: RuntimeException: Something is wrong, exceeded "
    f"{ROUND_TRIPS} tool calling round trips (maxToolCallingRoundTrips)"
)


def own_cap_record(run: PlannedRun) -> RunRecord:
    """A factory agent built with maxToolCallingRoundTrips(7): a divergent run is cut at 8 model calls."""
    if run.task.scenario != "divergent":
        return fake_record(run)
    n = ROUND_TRIPS + 1
    events = [
        IterationEvent(run_id=run.run_id, index=k, total_tokens=100 * k, tool_calls=(ToolCall(name="t"),))
        for k in range(1, n + 1)
    ]
    end = RunEnd(run_id=run.run_id, outcome=Outcome.EXPIRED, reason=EXCEEDED, iterations=n, censored=True)
    start = RunStart(run_id=run.run_id, task_type=run.task.task_type, task=run.task.task)
    return RunRecord(start=start, events=events, end=end)


@pytest.fixture
def tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(live, "jvm_runner", own_cap_record)
    monkeypatch.setattr(live, "preflight", lambda plan: None)
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(TASKS))
    return path


def test_the_agents_own_round_trip_cap_is_read_and_named(tasks: Path, tmp_path: Path) -> None:
    args = ["calibrate", "--live", str(tasks), "--cap", "60", "--failure-cost", "5000", "--bootstrap", "50"]
    res = CliRunner().invoke(main, [*args, "--traces", str(tmp_path / "tr"), "--json"], terminal_width=200)
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["live"]["agent_caps"] == [{"task_type": "search", "round_trips": 7, "model_calls": 8, "runs": 3}]
    warning = next(w for w in data["warnings"] if "maxToolCallingRoundTrips" in w)
    assert "your agent's own maxToolCallingRoundTrips(7) (LangChain4j) ended 3 runs at 8 model calls" in warning
    assert "below the calibration's cap of 60 model calls (--cap)" in warning
    assert "c(n) past 8 is unknown" in warning and "factory.round_trips_property" in warning
    # recalibrating the traces later names it too (the calibration's cap read from the runs' footers)
    again = CliRunner().invoke(main, ["calibrate", str(tmp_path / "tr"), "--failure-cost", "5000", "--bootstrap", "50"])
    assert again.exit_code == 0, again.output
    assert "maxToolCallingRoundTrips(7)" in again.stderr and "cap of 60" in again.stderr


def test_agent_caps_reads_langchain4js_message() -> None:
    plan = live.plan_runs(parse_tasks(TASKS), 2, 60)
    caps = agent_caps(own_cap_record(p) for p in plan)
    assert [(c.task_type, c.round_trips, c.model_calls, c.runs) for c in caps] == [("search", 7, 8, 2)]


def test_progress_lines_without_a_terminal(tasks: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(
        main,
        [
            "calibrate",
            "--live",
            str(tasks),
            "--failure-cost",
            "5000",
            "--bootstrap",
            "50",
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert res.exit_code == 0, res.output
    lines = [line for line in res.stderr.splitlines() if line.startswith("calibrating: ")]
    assert len(lines) == 12 and lines[-1].startswith("calibrating: 12/12 runs (ok ")


def test_progress_lines_thin_out_for_many_runs(tmp_path: Path) -> None:
    plan = live.plan_runs(parse_tasks(TASKS), 30, 20)  # 120 runs: a line about every 5%
    out = io.StringIO()
    execute(plan, tmp_path, fake_record, 2, {}, "lines", stream=out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 20 and lines[-1].startswith("calibrating: 120/120 runs")
