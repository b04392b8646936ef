"""Offline replay through the real engine (pyguard.engine.Policy): stop points, savings, summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyguard.base.decisions import Action
from pyguard.base.events import IterationEvent, Observation, Outcome, RunEnd, RunRecord, RunStart, ToolCall
from pyguard.engine import Policy, PolicyConfig
from pyguard.loading import load_runs
from pyguard.replay import REFLECTION_NOTE, ReplayReport, recorded_success, replay_run, replay_runs
from pyguard.trace import parse_openai_runs

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


def _record(
    run_id: str, n: int, *, label: bool | None, tokens: bool = True, final: bool = True, calls_per_iter: int = 1
) -> RunRecord:
    """A run of n model calls searching distinct things (the last one answers unless final=False)."""
    events = []
    for i in range(1, n + 1):
        last = i == n and final
        events.append(
            IterationEvent(
                run_id=run_id,
                index=i,
                input_tokens=100 * i if tokens else None,
                output_tokens=10 if tokens else None,
                total_tokens=100 * i + 10 if tokens else None,
                tool_calls=()
                if last
                else tuple(
                    ToolCall(id=f"{i}.{k}", name="search", arguments=f'{{"q": "topic {i}.{k}"}}')
                    for k in range(calls_per_iter)
                ),
                observations=tuple(
                    Observation(
                        tool_call_id=f"{i - 1}.{k}",
                        tool_name="search",
                        text=f"fresh fact number {i}.{k}: {'lorem ipsum ' * i}",
                    )
                    for k in range(calls_per_iter)
                )
                if i > 1
                else (),
                text="the answer" if last else None,
            )
        )
    end = RunEnd(
        run_id=run_id,
        outcome=Outcome.SUCCEEDED if final else Outcome.EXPIRED,
        iterations=n,
        success_label=label,
        censored=not final,
        evidence={"imported_from": "openai"},
    )
    return RunRecord(start=RunStart(run_id=run_id), events=events, end=end)


def _capped(n: int) -> PolicyConfig:
    """A policy that allows exactly n model calls (budget and hard cap both n)."""
    return PolicyConfig(base_budget=n, hard_cap=n, caps={"max_model_calls": n})


def test_cap_stop_gives_stop_at_and_savings_of_later_iterations() -> None:
    rec = _record("r", 7, label=False, calls_per_iter=2)
    run = replay_run(rec, _capped(3))
    assert run.stop_at == 3 and run.reason
    assert run.iterations == 7 and run.tool_calls == 12
    assert run.tool_calls_saved == sum(len(e.tool_calls) for e in rec.events[3:]) == 6
    assert run.tokens == sum(e.total_tokens for e in rec.events)
    assert run.tokens_saved == sum(e.total_tokens for e in rec.events[3:])
    assert run.outcome is not Outcome.SUCCEEDED


def test_replay_matches_driving_the_engine_by_hand() -> None:
    rec = _record("r", 6, label=True)
    config = _capped(4)
    session = Policy(config, clock=lambda: 0.0).new_run(run_id="r")
    expected = None
    for e in rec.events:
        d = session.observe(e)
        if d.action is Action.STOP:
            expected = e.index
            break
    assert replay_run(rec, config).stop_at == expected


def test_short_run_is_not_stopped_and_saves_nothing() -> None:
    run = replay_run(_record("r", 2, label=True), _capped(5))
    assert (run.stop_at, run.reason, run.tool_calls_saved, run.tokens_saved) == (None, None, 0, 0)


def test_missing_usage_gives_null_tokens() -> None:
    report = replay_runs([_record("r", 6, label=None, tokens=False)], _capped(2))
    (run,) = report.runs
    assert run.stop_at == 2 and run.tokens is None and run.tokens_saved is None
    assert report.to_dict()["runs"][0]["tokens"] is None
    assert report.summary.unlabelled.runs_without_usage == 1 and report.summary.unlabelled.tokens is None


def test_summary_separates_successful_failed_and_unlabelled() -> None:
    runs = [
        _record("ok-long", 6, label=True),
        _record("ok-short", 2, label=True),
        _record("bad-long", 8, label=False),
        _record("bad-cut", 5, label=False, final=False),
        _record("unknown", 6, label=None, tokens=False),
    ]
    report = replay_runs(runs, _capped(3))
    s = report.summary
    assert (s.runs, s.stopped) == (5, 4)
    assert (s.successful.runs, s.successful.stopped) == (2, 1)
    assert (s.failed.runs, s.failed.stopped) == (2, 2)
    by_id = {r.id: r for r in report.runs}
    assert s.failed.tool_calls_saved == by_id["bad-long"].tool_calls_saved + by_id["bad-cut"].tool_calls_saved
    assert s.failed.tokens_saved == by_id["bad-long"].tokens_saved + by_id["bad-cut"].tokens_saved
    assert s.successful.tokens == by_id["ok-long"].tokens + by_id["ok-short"].tokens
    assert s.censored == ["bad-cut"] and s.incomplete == []
    assert s.reflections == REFLECTION_NOTE and "continue" in s.reflections


def test_json_has_exactly_the_documented_run_keys() -> None:
    report = replay_runs(load_runs(RECORDINGS / "openai_runs.jsonl"))
    data = report.to_dict()
    assert set(data) == {"runs", "summary"}
    for run in data["runs"]:
        assert set(run) == RUN_KEYS
    assert ReplayReport.model_validate(data).to_dict() == data


def test_default_policy_report_is_consistent_on_both_example_recordings() -> None:
    for name in ("openai_runs.jsonl", "pyguard_trace.jsonl"):
        records = load_runs(RECORDINGS / name)
        report = replay_runs(records)
        for rec, run in zip(records, report.runs, strict=True):
            assert run.id == rec.run_id and run.iterations == len(rec.events)
            cut = run.stop_at if run.stop_at is not None else len(rec.events)
            assert 1 <= cut <= len(rec.events)
            assert run.tool_calls_saved == sum(len(e.tool_calls) for e in rec.events[cut:])
            assert all(1 <= i <= cut for i in run.reflect_at)
            assert (run.reason is None) == (run.stop_at is None)


def test_incomplete_run_is_listed_and_unlabelled() -> None:
    rec = _record("open", 3, label=None)
    rec.end = None
    report = replay_runs([rec, _record("done", 2, label=True)], _capped(10))
    assert report.summary.incomplete == ["open"]
    assert report.runs[0].success is None
    assert report.summary.unlabelled.runs == 1


@pytest.mark.parametrize(
    "outcome, label, imported, expected",
    [
        (Outcome.SUCCEEDED, None, False, True),
        (Outcome.STALLED, None, False, False),
        (Outcome.CANCELLED, None, False, None),
        (Outcome.SUCCEEDED, None, True, None),  # an unlabelled recording is unknown, not a success
        (Outcome.SUCCEEDED, False, True, False),
        (Outcome.STALLED, True, False, True),
    ],
)
def test_recorded_success(outcome: Outcome, label: bool | None, imported: bool, expected: bool | None) -> None:
    evidence = {"imported_from": "openai"} if imported else {}
    rec = RunRecord(
        start=RunStart(run_id="r"), end=RunEnd(run_id="r", outcome=outcome, success_label=label, evidence=evidence)
    )
    assert recorded_success(rec) is expected


def test_openai_import_to_replay_keeps_unknown_labels_unknown() -> None:
    (rec,) = parse_openai_runs(
        [{"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]}]
    )
    assert replay_runs([rec]).runs[0].success is None


def test_recorded_clock_follows_timestamps_then_latencies() -> None:
    from pyguard.replay import RecordedClock

    rec = _record("slow", 4, label=False)
    rec.start = rec.start.model_copy(update={"started_at_ms": 1_000_000.0})
    rec.events = [
        rec.events[0].model_copy(update={"timestamp_ms": 1_010_000.0}),
        rec.events[1].model_copy(update={"latency_ms": 5_000.0}),
        rec.events[2].model_copy(update={"timestamp_ms": 1_005_000.0}),  # out of order: time never goes back
        rec.events[3],
    ]
    clock = RecordedClock()
    clock.reset(rec)
    seen = [clock()]
    for e in rec.events:
        clock.advance(e)
        seen.append(clock())
    assert seen == [1000.0, 1010.0, 1015.0, 1015.0, 1015.0]


def test_each_replayed_run_carries_its_guarded_footer_and_decisions() -> None:
    stopped_rec, kept_rec = _record("long", 7, label=False), _record("short", 2, label=True)
    report = replay_runs([stopped_rec, kept_rec], _capped(3))
    stopped, kept = report.runs
    assert stopped.end is not None and stopped.end.outcome is not Outcome.SUCCEEDED
    assert stopped.end.outcome is stopped.decisions[-1].outcome and stopped.end.reason == stopped.reason
    assert (stopped.end.iterations, stopped.end.tool_calls) == (3, 3)
    assert stopped.end.total_tokens == sum(e.total_tokens for e in stopped_rec.events[:3])
    assert stopped.end.evidence["replayed"] is True and stopped.end.success_label is None
    # each call's response, then (before the next call) its tool results; the stop on call 3's response
    assert [d.iteration for d in stopped.decisions] == [1, 1, 2, 2, 3]
    assert kept.end == kept_rec.end and [d.iteration for d in kept.decisions] == [1, 1, 2]
    late = replay_runs([stopped_rec, kept_rec], _capped(3).model_copy(update={"judge_results_early": False})).runs
    assert [d.iteration for d in late[0].decisions] == [1, 2, 3] and len(late[1].decisions) == 2
    assert "end" not in report.to_dict()["runs"][0] and "decisions" not in report.to_dict()["runs"][0]


def _turn(
    run_id: str, index: int, *, q: str | None, user: str | None = None, result: str | None = None
) -> IterationEvent:
    obs = []
    if result is not None:
        obs.append(Observation(tool_call_id=f"c{index - 1}", tool_name="search", text=result))
    if user is not None:
        obs.append(Observation(kind="user", text=user))
    return IterationEvent(
        run_id=run_id,
        index=index,
        observations=tuple(obs),
        tool_calls=(ToolCall(id=f"c{index}", name="search", arguments=f'{{"q": "{q}"}}'),) if q else (),
        text=None if q else f"answer {index}",
    )


def test_the_stop_point_and_the_budget_reason_agree_in_a_conversation() -> None:
    # The budget (2) runs out on an answer (call 2, which the engine lets through); the user goes on and call 3
    # is the first to be checked: the stop is at 3 and the reason must say 3, not "budget of 2 used".
    events = [
        _turn("conv", 1, q="order 1", user="Where is order 1?"),
        _turn("conv", 2, q=None, result="order 1: shipped"),
        _turn("conv", 3, q="order 2", user="And order 2?"),
        _turn("conv", 4, q="order 3", result="order 2: packed"),
        _turn("conv", 5, q=None, result="order 3: late"),
    ]
    record = RunRecord(
        start=RunStart(run_id="conv", task_type="support"),
        events=events,
        end=RunEnd(run_id="conv", outcome=Outcome.SUCCEEDED, iterations=5, success_label=True),
    )
    whole_run = PolicyConfig(base_budget=2, hard_cap=10, earn_per_iteration=0, extension=0, budget_per_turn=False)
    run = replay_run(record, whole_run)
    assert run.stop_at == 3 and run.rule == "budget"
    assert run.reason == "3 model calls made, over the iteration budget of 2"
    assert run.end.iterations == 3 and "3 model calls" in run.end.reason
    # per turn (the default): the second turn has its own budget of 2, used up at call 4
    run = replay_run(record, PolicyConfig(base_budget=2, hard_cap=10, earn_per_iteration=0, extension=0))
    assert run.stop_at == 4 and run.reason == "iteration budget of 2 model calls used in turn 2"


def test_every_budget_stop_on_the_mixed_file_names_its_own_stop_point() -> None:
    records = load_runs(Path(__file__).parents[1] / "data" / "mixed_runs.jsonl")
    report = replay_runs(records, PolicyConfig(base_budget=3, hard_cap=6, earn_per_iteration=0))
    budget_stops = [r for r in report.runs if r.rule == "budget"]
    assert len(budget_stops) > 10
    for r in budget_stops:
        assert f"{r.stop_at} model calls" in r.reason or f"hard cap {r.stop_at}" in r.reason, (
            r.id,
            r.stop_at,
            r.reason,
        )
