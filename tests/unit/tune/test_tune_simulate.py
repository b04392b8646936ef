"""The search's budget simulation gives the very stops of replay_run, for random policies and runs of every kind
(polls, reflections, multi-turn conversations, caps); and the figures follow the metric definitions."""

import random

import numpy as np
import pytest

from pyguard.base.events import IterationEvent, Observation, Outcome, RunEnd, RunRecord, RunStart, ToolCall
from pyguard.engine import PolicyConfig
from pyguard.replay import replay_run
from pyguard.testing.synthetic import KINDS, generate
from pyguard.tune.probe import KIND_SPEND, probe_config, probe_run
from pyguard.tune.simulate import ProbeTable, RunSet
from pyguard.tune.space import Budget, build_policy


def _record(events, success=True, run_id=None, task_type="t"):
    run_id = run_id or events[0].run_id
    events = [e.model_copy(update={"run_id": run_id}) for e in events]
    return RunRecord(
        start=RunStart(run_id=run_id, task_type=task_type),
        events=events,
        end=RunEnd(run_id=run_id, outcome=Outcome.SUCCEEDED if success else Outcome.FAILED, success_label=success),
    )


def _two_turns() -> RunRecord:
    """A conversation: a first turn answered, then a user message opens a second turn that drifts."""
    a = generate("convergent", 3).events
    b = generate("divergent", 4).events
    user = Observation(kind="user", text="And the other order, 777?")
    second = [b[0].model_copy(update={"observations": (user,)}), *b[1:]]
    events = [e.model_copy(update={"index": i}) for i, e in enumerate([*a, *second], start=1)]
    return _record(events, success=False, run_id="two-turns")


def _records() -> list[RunRecord]:
    out = [
        _record(list(generate(kind, seed).events), KINDS[kind][0] == "legitimate", run_id=f"{kind}-{seed}")
        for kind in KINDS
        for seed in (0, 1)
    ]
    return out + [_two_turns()]


@pytest.mark.parametrize("early", [True, False], ids=["results-judged-early", "results-judged-late"])
def test_simulation_matches_replay_run(early):
    records = _records()
    rng = random.Random(7)
    base = PolicyConfig(judge_results_early=early)
    compared = 0
    for _ in range(6):
        stall = {
            "low_gain_streak": rng.choice([2, 3, 4]),
            "polling_allowance": rng.choice([0, 3, 10]),
            "error_storm_length": rng.choice([2, 3]),
            "max_reflections": rng.choice([0, 1, 2, 3]),
            "stop_on_fruitless_retry": rng.choice([True, False]),
        }
        table = ProbeTable(np.arange(len(records)), [probe_run(r, probe_config(base, stall)) for r in records])
        for _ in range(6):
            cap = rng.choice([4, 6, 9, 15, 40])
            b = Budget(
                base_budget=rng.randint(1, cap),
                hard_cap=cap,
                extension=rng.choice([0, 1, 4]),
                earn_threshold=rng.choice([0.05, 0.2, 0.5]),
                earn_per_iteration=rng.choice([0, 1, 2]),
            )
            config = build_policy(base, stall, {"t": b})
            real = [replay_run(r, config).stop_at or 0 for r in records]
            assert table.stops(b).tolist() == real, (stall, b)
            compared += len(records)
    assert compared > 500
    turns = table.subset(np.asarray([r.run_id == "two-turns" for r in records]))
    assert (turns.k[1:] == 1).any()  # the second turn was reached and counted from its own start
    assert turns.first.sum() == 2  # two turns, however many decisions each call has
    # early, a call's response is judged alone (its request's results were judged before it was sent)
    assert (table.kind == KIND_SPEND).any() == early


@pytest.mark.parametrize("early", [True, False], ids=["results-judged-early", "results-judged-late"])
def test_simulation_matches_replay_with_a_cap_and_turns_off(early):
    records = _records()
    base = PolicyConfig(budget_per_turn=False, caps={"max_tool_calls": 7}, judge_results_early=early)
    table = ProbeTable(np.arange(len(records)), [probe_run(r, probe_config(base, {})) for r in records])
    b = Budget(base_budget=5, hard_cap=12, extension=2, earn_threshold=0.2, earn_per_iteration=1)
    real = [replay_run(r, build_policy(base, {}, {"t": b})).stop_at or 0 for r in records]
    assert table.stops(b).tolist() == real
    assert any(s for s in real)


def _call_event(run_id, i, name, args, result_for_previous=None, final=False):
    obs = (
        ()
        if result_for_previous is None
        else (Observation(kind="tool", tool_call_id=f"c{i - 1}", text=result_for_previous),)
    )
    calls = () if final else (ToolCall(id=f"c{i}", name=name, arguments=args),)
    return IterationEvent(
        run_id=run_id, index=i, tool_calls=calls, observations=obs, total_tokens=100, text="done" if final else None
    )


def test_counts_follow_the_metric_definitions():
    # run 0: successful, 4 iterations, an edit requested in iteration 2; run 1: failed, 5 iterations, 1 call each
    edit = '{"command": "sed -i s/a/b/ f.py"}'
    ok = [
        _call_event("ok", 1, "bash", '{"command": "ls"}'),
        _call_event("ok", 2, "bash", edit, "f.py"),
        _call_event("ok", 3, "bash", '{"command": "pytest"}', ""),
        _call_event("ok", 4, "", "", "passed", final=True),
    ]
    bad = [_call_event("bad", i, "search", f'{{"q": {i}}}', None if i == 1 else "x") for i in range(1, 6)]
    runs = RunSet([_record(ok, True), _record(bad, False)])
    everyone = np.arange(2)
    c = runs.counts(everyone, np.array([3, 2]))
    assert (c.successes, c.false_stops, c.failed) == (1, 1, 1)
    assert c.failed_calls_saved == 3 and c.failed_calls == 5 and c.calls_saved == pytest.approx(0.6)
    assert c.failed_tokens_saved == 300 and c.tokens_saved == pytest.approx(0.6)
    assert c.caught == 1.0
    # artifact agents: a stop after the last edit (iteration 2) keeps the result; at it, it does not
    assert runs.counts(everyone, np.array([3, 0]), artifact=True).false_stops == 0
    assert runs.counts(everyone, np.array([2, 0]), artifact=True).false_stops == 1
    # a stop at the last iteration is not early; no stop saves nothing
    c = runs.counts(everyone, np.array([4, 0]))
    assert (c.false_stops, c.failed_calls_saved, c.failed_stopped) == (0, 0, 0)
