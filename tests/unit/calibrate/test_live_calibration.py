"""Live calibration without a JVM: the task file, the id scheme and plan, labelling, resume (a fake runner)."""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path

import pytest

from pyguard.base.ending import verdict
from pyguard.base.errors import InputError, RunError
from pyguard.base.events import IterationEvent, Outcome, RunEnd, RunRecord, RunStart, ToolCall
from pyguard.calibrate import calibrate_runs, make_config
from pyguard.calibrate.runs import RunStatus, run_status
from pyguard.live.calibration import (
    LiveTask,
    PlannedRun,
    completed_runs,
    label_run,
    load_tasks,
    parse_run_id,
    parse_tasks,
    plan_runs,
    run_id_for,
    run_live,
)
from pyguard.loading import load_runs
from pyguard.trace import TraceWriter

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "calibration" / "tasks.toml"

TASKS = {
    "repeats": 3,
    "cap": 20,
    "tasks": [
        {
            "id": "held",
            "task_type": "lookup",
            "task": "What about order 34567?",
            "scenario": "convergent",
            "expect": "held",
        },
        {
            "id": "stock",
            "task_type": "lookup",
            "task": "Stock of SKU-991?",
            "scenario": "failing_tools",
            "expect_regex": r"\d+ units",
        },
        {"id": "cause", "task_type": "search", "task": "Why the delay?", "scenario": "divergent"},
        {"id": "export", "task_type": "search", "task": "Export done?", "scenario": "polling"},
    ],
}


def fake_record(run: PlannedRun) -> RunRecord:
    """A run as the JVM runner would return it: divergent never answers (cut at the cap), the rest answer."""
    sc = run.task.scenario
    n = run.cap + 1 if sc == "divergent" else 3 + run.seed % 4
    answered = sc != "divergent"
    events = [
        IterationEvent(
            run_id=run.run_id,
            index=k,
            total_tokens=200 + 50 * k,
            task_type=run.task.task_type,
            tool_calls=() if (answered and k == n) else (ToolCall(name="t", arguments=str(k)),),
        )
        for k in range(1, n + 1)
    ]
    answer = {
        "convergent": "Order 34567 is held at Newark",
        "failing_tools": "I could not read the inventory",
        "polling": "The export is DONE",
    }.get(sc)
    end = RunEnd(
        run_id=run.run_id,
        outcome=Outcome.SUCCEEDED if answered else Outcome.EXPIRED,
        answer=answer,
        iterations=n,
        censored=not answered,
    )
    return RunRecord(
        start=RunStart(run_id=run.run_id, task_type=run.task.task_type, task=run.task.task, agent_style=run.task.style),
        events=events,
        end=end,
    )


class Spy:
    """A thread-safe fake runner that counts each run id it carried out, and can fail on a given call."""

    def __init__(self, fail_on: int | None = None) -> None:
        self.calls: list[str] = []
        self._lock = threading.Lock()
        self.fail_on = fail_on

    def __call__(self, run: PlannedRun) -> RunRecord:
        with self._lock:
            self.calls.append(run.run_id)
            if self.fail_on is not None and len(self.calls) == self.fail_on:
                raise RuntimeError("the model endpoint went away")
        return fake_record(run)


@pytest.fixture
def taskset():
    return parse_tasks(TASKS)


# -- task file ---------------------------------------------------------------------------------------------------


def test_example_task_file_parses():
    ts = load_tasks(EXAMPLE)
    assert ts.repeats == 30 and ts.cap == 60
    assert {t.task_type for t in ts.tasks} == {"shipment_status", "back_office"}
    by_id = {t.id: t for t in ts.tasks}
    assert by_id["delayed-orders"].style == "executor"  # its own style wins over the file's default
    assert by_id["incident"].style == "aiservices"
    assert by_id["stock"].expect_regex == r"\d+ units"


def test_json_and_toml_give_the_same_task_set(tmp_path: Path):
    import tomli_w

    (tmp_path / "t.json").write_text(json.dumps(TASKS))
    (tmp_path / "t.toml").write_text(tomli_w.dumps(TASKS))
    assert load_tasks(tmp_path / "t.json") == load_tasks(tmp_path / "t.toml") == parse_tasks(TASKS)


def test_scenario_path_is_resolved_against_the_task_file(tmp_path: Path):
    from pyguard.jvm.scenarios import scenario_path

    (tmp_path / "sc").mkdir()
    (tmp_path / "sc" / "mine.json").write_text(scenario_path("convergent").read_text())
    (tmp_path / "t.toml").write_text('[[tasks]]\nid="a"\ntask_type="x"\ntask="q"\nscenario="sc/mine.json"\n')
    assert load_tasks(tmp_path / "t.toml").tasks[0].scenario == str((tmp_path / "sc" / "mine.json").resolve())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"tasks": []}, "no tasks"),
        ({"tasks": [{"id": "a", "task_type": "x", "scenario": "convergent"}]}, "task 1 ('a'): task is required"),
        ({"tasks": [{"id": "a#1", "task_type": "x", "task": "q", "scenario": "convergent"}]}, "no '#'"),
        ({"tasks": [{"id": "a", "task_type": "x", "task": "q", "scenario": "nope"}]}, "unknown scenario 'nope'"),
        ({"tasks": [{"id": "a", "task_type": "x", "task": "q", "scenario": "convergent", "style": "crew"}]}, "style"),
        (
            {"tasks": [{"id": "a", "task_type": "x", "task": "q", "scenario": "convergent", "expect_regex": "(("}]},
            "not a valid regular expression",
        ),
        (
            {"tasks": [{"id": "a", "task_type": "x", "task": "q", "scenario": "convergent", "verifier": "x"}]},
            "verifier is not a task-set key",
        ),
        ({"repeats": 0}, "repeats"),
        ({"tasks": TASKS["tasks"] + [TASKS["tasks"][0]]}, "repeated: held"),
    ],
)
def test_bad_task_sets_name_the_problem(change: dict, message: str):
    with pytest.raises(InputError, match="tasks.toml") as info:
        parse_tasks({**TASKS, **change}, source="tasks.toml")
    assert message in str(info.value)


def test_bad_files(tmp_path: Path):
    with pytest.raises(InputError, match="does not exist"):
        load_tasks(tmp_path / "missing.toml")
    (tmp_path / "bad.toml").write_text("tasks = [")
    with pytest.raises(InputError, match="not valid TOML"):
        load_tasks(tmp_path / "bad.toml")
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(InputError, match="not list"):
        load_tasks(tmp_path / "bad.json")


def test_verifier():
    t = LiveTask(id="a", task_type="x", task="q", scenario="convergent", expect="FedEx", expect_regex=r"\d{12}")
    assert t.verify("FedEx tracking 771234567890") is True
    assert t.verify("FedEx, no number") is False
    assert t.verify("771234567890 by UPS") is False
    assert t.verify(None) is False
    assert LiveTask(id="a", task_type="x", task="q", scenario="convergent").verify("anything") is None


# -- ids and plan ------------------------------------------------------------------------------------------------


def test_run_ids_round_trip():
    assert run_id_for("held-order", 3) == "held-order#3"
    assert parse_run_id("held-order#3") == ("held-order", 3)
    for bad in ("held-order", "held#0", "held#x", "#3", "a b#1"):
        assert parse_run_id(bad) is None


def test_plan_is_repeat_major_with_stable_distinct_seeds(taskset):
    plan = plan_runs(taskset)
    assert [p.run_id for p in plan[:5]] == ["held#1", "stock#1", "cause#1", "export#1", "held#2"]
    assert len(plan) == 12 and len({p.run_id for p in plan}) == 12
    assert all(p.cap == 20 for p in plan)
    assert [p.seed for p in plan] == [p.seed for p in plan_runs(parse_tasks(TASKS))]  # the same on a rerun
    assert len({p.seed for p in plan}) == 12
    assert all(0 <= p.seed < 2**63 for p in plan)
    assert len(plan_runs(taskset, repeats=5, cap=7)) == 20 and plan_runs(taskset, cap=7)[0].cap == 7
    with pytest.raises(InputError, match="--repeats"):
        plan_runs(parse_tasks({**TASKS, "repeats": None}))


# -- labelling -------------------------------------------------------------------------------------------------


def test_label_applies_the_expectation(taskset):
    plan = {p.run_id: p for p in plan_runs(taskset)}
    ok = label_run(plan["held#1"], fake_record(plan["held#1"]))
    assert ok.end.outcome is Outcome.SUCCEEDED and ok.end.success_label is True
    wrong = label_run(plan["stock#1"], fake_record(plan["stock#1"]))
    assert wrong.end.outcome is Outcome.SUCCEEDED and wrong.end.success_label is False  # the footer is not re-decided
    assert verdict(wrong.end).outcome is Outcome.FAILED and run_status(wrong) is RunStatus.FAILURE
    assert "expect_regex" in wrong.end.evidence["calibration"]["mismatch"]
    cut = label_run(plan["cause#1"], fake_record(plan["cause#1"]))
    assert cut.end.success_label is None and run_status(cut) is RunStatus.CENSORED
    free = label_run(plan["export#1"], fake_record(plan["export#1"]))
    assert free.end.success_label is None and run_status(free) is RunStatus.SUCCESS
    assert free.end.evidence["calibration"]["task_id"] == "export" and free.end.evidence["calibration"]["rep"] == 1


# -- running and resuming ------------------------------------------------------------------------------------------


def test_run_writes_one_trace_per_run_and_calibrates(taskset, tmp_path: Path):
    spy = Spy()
    live = run_live(taskset, tmp_path, runner=spy, threads=2)
    assert live.complete and live.ran == 12 and live.already_done == 0
    assert sorted(spy.calls) == sorted(p.run_id for p in plan_runs(taskset))
    assert sorted(f.name for f in tmp_path.iterdir()) == sorted(f"{p.run_id}.jsonl" for p in plan_runs(taskset))
    assert [r.run_id for r in live.records] == [p.run_id for p in plan_runs(taskset)]
    report = calibrate_runs(load_runs(tmp_path), make_config(failure_cost=5000, bootstrap=50))
    by_type = {t.task_type: t for t in report.task_types}
    assert (by_type["lookup"].successes, by_type["lookup"].failures) == (3, 3)
    assert (by_type["search"].successes, by_type["search"].censored) == (3, 3)


def test_limit_then_resume_runs_each_id_once(taskset, tmp_path: Path):
    spy = Spy()
    first = run_live(taskset, tmp_path, runner=spy, limit=5)
    assert (first.ran, first.remaining, first.complete) == (5, 7, False)
    assert spy.calls and len(spy.calls) == 5
    second = run_live(taskset, tmp_path, runner=spy)
    assert (second.already_done, second.ran, second.remaining) == (5, 7, 0)
    assert Counter(spy.calls).most_common(1)[0][1] == 1 and len(spy.calls) == 12
    third = run_live(taskset, tmp_path, runner=spy)
    assert third.ran == 0 and len(spy.calls) == 12
    more = run_live(taskset, tmp_path, runner=spy, repeats=4)  # more repeats: only the new ones run
    assert more.ran == 4 and sorted(spy.calls[12:]) == ["cause#4", "export#4", "held#4", "stock#4"]


def test_a_failing_run_stops_the_calibration_and_keeps_the_others(taskset, tmp_path: Path):
    spy = Spy(fail_on=4)
    with pytest.raises(RunError, match="the model endpoint went away") as info:
        run_live(taskset, tmp_path, runner=spy, threads=1)
    failed = spy.calls[3]
    assert failed in str(info.value) and "rerun to resume" in str(info.value)
    kept, _ = completed_runs(tmp_path, plan_runs(taskset))
    assert sorted(kept) == sorted(set(spy.calls) - {failed})  # every run carried out, bar the failed one, kept
    assert len(kept) < 12  # the runs not yet started were not started
    spy.fail_on = None
    again = run_live(taskset, tmp_path, runner=spy)
    assert again.complete and again.already_done == len(kept)
    assert Counter(spy.calls)[failed] == 2 and all(n == 1 for rid, n in Counter(spy.calls).items() if rid != failed)


def test_cut_short_runs_are_rerun_and_extras_ignored(taskset, tmp_path: Path):
    plan = plan_runs(taskset)
    with TraceWriter(tmp_path / "held#1.jsonl", mode="w") as w:  # a run killed before its footer
        w.start(RunStart(run_id="held#1", task_type="lookup"))
    (tmp_path / "stock#1.jsonl.part").write_text('{"type": "run_st')  # a write interrupted mid-file
    with TraceWriter(tmp_path / "other.jsonl", mode="w") as w:  # a run of something else
        w.write_run(RunRecord(start=RunStart(run_id="other#1"), end=RunEnd(run_id="other#1", outcome="succeeded")))
    done, ignored = completed_runs(tmp_path, plan)
    assert done == {} and ignored == ["other#1"]
    spy = Spy()
    live = run_live(taskset, tmp_path, runner=spy)
    assert live.complete and live.ignored == ["other#1"] and "held#1" in spy.calls
    assert load_runs(tmp_path / "held#1.jsonl")[0].end is not None


def test_a_changed_task_is_not_mixed_with_its_old_runs(taskset, tmp_path: Path):
    run_live(taskset, tmp_path, runner=Spy(), limit=4)
    changed = {**TASKS, "tasks": [{**TASKS["tasks"][0], "expect": "Newark"}] + TASKS["tasks"][1:]}
    with pytest.raises(InputError, match=r"run 'held#1' .* \(expect: 'held' -> 'Newark'\)"):
        run_live(parse_tasks(changed), tmp_path, runner=Spy())
    with pytest.raises(InputError, match="cap: 20 -> 30"):
        run_live(taskset, tmp_path, runner=Spy(), cap=30)


def test_bad_arguments(taskset, tmp_path: Path):
    with pytest.raises(InputError, match="threads=0"):
        run_live(taskset, tmp_path, runner=Spy(), threads=0)
    with pytest.raises(InputError, match="max runs=0"):
        run_live(taskset, tmp_path, runner=Spy(), limit=0)
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is a file"):
        run_live(taskset, tmp_path / "file", runner=Spy())
