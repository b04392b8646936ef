"""A tiny live calibration on the JVM: 2 tasks x 3 repeats on shipped scenarios, stopped by --max-runs, resumed."""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

import pyguard.live.calibration as live
from pyguard.cli import main
from pyguard.loading import load_runs

TASKS = """
repeats = 3
cap = 40

[[tasks]]
id = "incident"
task_type = "shipment_status"
task = "Where is order 12345? Tell me its shipment status."
scenario = "logistics_incident"
expect = "in transit"

[[tasks]]
id = "export"
task_type = "export"
task = "Is the March export done?"
scenario = "polling"
style = "executor"
expect = "DONE"
"""


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch, jvm) -> list[str]:
    """The real JVM runner, counting the run ids it carries out."""
    calls: list[str] = []
    lock = threading.Lock()
    real = live.jvm_runner

    def runner(run):
        with lock:
            calls.append(run.run_id)
        return real(run)

    monkeypatch.setattr(live, "jvm_runner", runner)
    return calls


@pytest.mark.jvm
def test_interrupted_live_calibration_resumes_without_rerunning(counted: list[str], tmp_path: Path):
    tasks = tmp_path / "tasks.toml"
    tasks.write_text(TASKS)
    out = tmp_path / "calib"
    args = [
        "calibrate",
        "--live",
        str(tasks),
        "--failure-cost",
        "20000",
        "--out",
        str(out),
        "--threads",
        "2",
        "--bootstrap",
        "100",
        "--json",
    ]

    first = CliRunner().invoke(main, [*args, "--max-runs", "4"])
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["live"] | {"tasks": None, "traces": None} == {
        "tasks": None,
        "traces": None,
        "planned": 6,
        "already_done": 0,
        "ran": 4,
        "remaining": 2,
        "complete": False,
        "ignored": 0,
    }
    assert sorted(counted) == ["export#1", "export#2", "incident#1", "incident#2"]  # repeat by repeat
    assert not (out / "report.md").exists()

    second = CliRunner().invoke(main, args)
    assert second.exit_code == 0, second.output
    data = json.loads(second.stdout)
    assert (data["live"]["already_done"], data["live"]["ran"], data["live"]["complete"]) == (4, 2, True)
    assert Counter(counted) == Counter({f"{t}#{r}": 1 for t in ("incident", "export") for r in (1, 2, 3)})

    runs = {r.run_id: r for r in load_runs(out / "traces")}
    assert sorted(runs) == sorted(Counter(counted))
    for run in runs.values():  # real runs: every call sensed with its tokens, answered, verified
        assert run.end.outcome.value == "succeeded" and run.end.success_label is True
        assert len(run.events) == run.end.iterations >= 5 and not run.end.censored
        assert all(e.total_tokens for e in run.events) and run.events[-1].is_final
        assert run.start.agent_style == ("executor" if run.run_id.startswith("export") else "aiservices")
    by_type = {t["task_type"]: t for t in data["task_types"]}
    assert by_type["export"]["recommended_max_iterations"] == len(runs["export#1"].events)
    assert by_type["shipment_status"]["successes"] == 3
    assert min(len(runs[f"incident#{r}"].events) for r in (1, 2, 3)) >= 11  # the incident's repeated checks
    assert (out / "report.md").is_file() and (out / "plots").is_dir()

    # A run's seed comes from its id: rerunning a lost run replays the same scripted run.
    before = len(runs["incident#2"].events)
    (out / "traces" / "incident#2.jsonl").unlink()
    third = CliRunner().invoke(main, args)
    assert third.exit_code == 0, third.output
    assert counted[-1] == "incident#2" and len(counted) == 7
    assert len(load_runs(out / "traces" / "incident#2.jsonl")[0].events) == before
