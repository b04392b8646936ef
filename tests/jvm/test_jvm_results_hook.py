"""The request path: call i's tool results are judged before call i+1 is sent (GuardCallback.onResults), so a stop
replaces call i+1 (the wrap-up answers it, or the run stops there) instead of following it."""

from __future__ import annotations

import pytest

from pyguard.base.decisions import Action, Decision
from pyguard.base.events import Observation, Outcome
from pyguard.jvm import build_agent, guard_model, run_built, scripted_model


def _stop_on_results(at: int, seen: list[tuple[int, list[Observation]]]):
    def judge(index: int, observations: list[Observation]) -> Decision | None:
        seen.append((index, observations))
        if index >= at:
            return Decision(action=Action.STOP, outcome=Outcome.STALLED, rule="test_rule", reason="same result")
        return None

    return judge


@pytest.mark.parametrize("style", ["aiservices", "executor"])
def test_a_stop_on_call_is_results_means_call_i_plus_1_is_never_made(jvm, style):
    seen: list[tuple[int, list[Observation]]] = []
    model = scripted_model("logistics_incident", seed=0)
    guarded = guard_model(model, lambda e: None, run_id="r-hook", results_fn=_stop_on_results(2, seen))
    r = run_built(build_agent(style, guarded), "Where is 12345?", guarded)
    assert r.status == "stopped" and r.outcome is Outcome.STALLED and r.rule == "test_rule"
    # judged after call 1 (continue) and after call 2 (stop): call 3 was never sent
    assert [i for i, _ in seen] == [1, 2]
    assert int(model.calls()) == r.stats.model_calls == 2
    assert r.stats.tool_executions == 2  # the tools of calls 1 and 2 ran; their results were judged
    assert all(o.kind == "tool" and o.text for _, obs in seen for o in obs)


def test_answered_stop_on_results_replaces_the_next_call_with_the_wrap_up(jvm):
    seen: list[tuple[int, list[Observation]]] = []
    model = scripted_model("logistics_incident", seed=0)
    guarded = guard_model(model, lambda e: None, run_id="r-hook-answer", results_fn=_stop_on_results(2, seen))
    guarded.answer_on_stop("Answer now from what you have. ({reason})")
    r = run_built(build_agent("aiservices", guarded), "Where is 12345?", guarded)
    assert [i for i, _ in seen] == [1, 2]
    assert r.status == "answered" and r.answer  # the wrap-up's answer ends the loop
    wrap = guarded.wrap_up()
    assert wrap is not None and wrap.rule == "test_rule" and wrap.outcome == "stalled"
    # two guarded calls, then the wrap-up (made on the user's model directly) in place of call 3
    assert r.stats.model_calls == 2 and int(model.calls()) == 3


def test_without_a_results_judge_the_results_wait_for_the_next_event(jvm):
    model = scripted_model("logistics_incident", seed=0)
    guarded = guard_model(model, lambda e: None, run_id="r-nohook", max_model_calls=4)
    r = run_built(build_agent("aiservices", guarded), "Where is 12345?", guarded)
    assert r.stats.callback_failures == 0  # onResults' default reply (null) is no failure


@pytest.mark.parametrize("style", ["aiservices", "executor"])
def test_a_guard_judging_results_early_stops_the_incident_one_call_sooner(jvm, style):
    from pyguard.engine import PolicyConfig
    from pyguard.jvm import load_scenario
    from pyguard.live.guard import Guard

    task = "Where is order 12345? Tell me its status."
    stubborn = dict(load_scenario("logistics_incident"))  # an agent that never reacts to a reflection
    stubborn["on_reflection"] = {**stubborn["on_reflection"], "recover_probability": 0.0}
    late = Guard(PolicyConfig(judge_results_early=False)).run_scenario(stubborn, task, style=style, seed=0)
    early = Guard(PolicyConfig(judge_results_early=True)).run_scenario(stubborn, task, style=style, seed=0)
    assert late.outcome is early.outcome is Outcome.STALLED, (late.summary(), early.summary())
    assert early.model_calls == late.model_calls - 1, (late.summary(), early.summary())
    # one decision per model call; the stop is the decision on the last call's results
    assert len(early.decisions) == len(early.record.events) == early.model_calls
    assert early.decisions[-1].stops and early.decisions[-1].iteration == early.model_calls
