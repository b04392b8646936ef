"""The Guard API on real LangChain4j loops: outcomes, traces, cancellation, the user-agent path, fail-safe."""

from __future__ import annotations

import jpype
import pytest

from pyguard.base.decisions import Action
from pyguard.base.events import Outcome
from pyguard.engine import PolicyConfig
from pyguard.jvm import build_agent, load_scenario, run_built, scripted_model
from pyguard.live.guard import Guard, run_unguarded
from pyguard.loading import load_runs
from pyguard.trace import read_trace

TASK = "Where is order 12345?"


def stubborn_incident() -> dict:
    scenario = dict(load_scenario("logistics_incident"))
    scenario["on_reflection"] = {**scenario["on_reflection"], "recover_probability": 0.0}
    return scenario


@pytest.mark.parametrize("style", ["aiservices", "agentic", "executor"])
def test_each_style_stops_the_incident_honestly(jvm, style):
    result = Guard().run_scenario(stubborn_incident(), TASK, style=style, seed=3)
    assert result.outcome is Outcome.STALLED
    assert result.model_calls <= 6, result.summary()
    assert result.reflections, "the first stall must inject a reflection before stopping"
    assert result.evidence.get("rule"), result.evidence
    # The trace is the run: one event per model call, one decision per event, ids all this run's.
    assert len(result.decisions) == len(result.record.events) == result.model_calls
    assert {e.run_id for e in result.record.events} == {result.run_id}


def test_guarded_run_uses_a_fraction_of_the_unguarded_tokens(jvm):
    guarded = Guard().run_scenario("logistics_incident", TASK, seed=1)
    unguarded = run_unguarded("aiservices", scripted_model("logistics_incident", seed=1), TASK)
    assert unguarded.model_calls >= 10, unguarded.summary()
    assert guarded.model_calls < unguarded.model_calls / 2
    assert guarded.total_tokens < 0.5 * unguarded.total_tokens
    # token sums in the result equal the sum over the events the sensor reported
    assert guarded.total_tokens == sum(e.total_tokens for e in guarded.record.events)


def test_convergent_polling_and_pagination_are_not_cut(jvm):
    guard = Guard()
    for name in ("convergent", "polling", "pagination"):
        result = guard.run_scenario(name, "do the task", seed=1)
        assert result.outcome is Outcome.SUCCEEDED, result.summary()
        assert not result.reflections, result.summary()


def test_trace_is_written_as_the_run_goes_and_reads_back(jvm, tmp_path):
    result = Guard(trace_dir=tmp_path).run_scenario(stubborn_incident(), TASK, seed=3, task_type="lookup")
    assert result.trace_path is not None
    [record] = load_runs(result.trace_path)
    assert record.end is not None and record.end.outcome is Outcome.STALLED
    assert record.events == result.record.events
    assert record.start.task_type == "lookup"
    [run] = read_trace(result.trace_path).runs
    # the trace holds every decision recorded (a call's results judged before the next call add one that is not a
    # plain continue); the result keeps one per call, the one on its results replacing the one on its response
    per_call = {d.iteration: d for d in run.decisions}
    assert [d.action for d in per_call.values()] == [d.action for d in result.decisions]
    assert [d.iteration for d in run.decisions] == [1, 2, 2, 3] and run.decisions[2].action is Action.REFLECT


def test_agents_own_cap_is_expired_not_succeeded(jvm):
    # A policy generous enough not to act first: LangChain4j's maxToolCallingRoundTrips ends the run.
    config = PolicyConfig(base_budget=40, hard_cap=60)
    result = Guard(config).run("aiservices", scripted_model("divergent", seed=1), TASK, max_tool_calling_round_trips=2)
    assert result.outcome is Outcome.EXPIRED, result.summary()
    assert "own cap" in result.reason


def test_verifier_rejecting_the_answer_makes_the_run_failed(jvm):
    result = Guard(verifier=lambda answer: "DELIVERED" in answer).run_scenario("logistics_incident", TASK, seed=1)
    assert result.outcome is Outcome.FAILED
    assert result.answer  # the answer is kept beside the honest outcome


def test_cancel_mid_run_ends_cancelled_with_a_complete_trace(jvm, tmp_path):
    guard = Guard(trace_dir=tmp_path)
    run = guard.start_run(task=TASK)
    observe = run.observe

    def observe_then_cancel(event):
        decision = observe(event)
        if event.index == 2:
            run.cancel("user pressed stop")
        return decision

    run.observe = observe_then_cancel
    guarded = run.guarded_model(scripted_model("divergent", seed=1))
    agent = build_agent("aiservices", guarded)
    result = run.drive(lambda a: run_built(a, TASK, guarded), build=lambda: agent)
    assert result.outcome is Outcome.CANCELLED
    assert result.model_calls == 2
    [record] = load_runs(result.trace_path)
    assert record.end.outcome is Outcome.CANCELLED and len(record.events) == 2


def test_user_built_aiservices_agent_through_wrap_and_call(jvm):
    AiServices = jpype.JClass("dev.langchain4j.service.AiServices")
    ToolAssistant = jpype.JClass("dev.pyguard.bridge.ToolAssistant")
    LogisticsTools = jpype.JClass("dev.pyguard.bridge.demo.LogisticsTools")
    guard = Guard()
    with guard.start_run(task=TASK, task_type="lookup") as run:
        model = run.wrap(scripted_model(stubborn_incident(), seed=3))
        agent = AiServices.builder(ToolAssistant).chatModel(model).tools(LogisticsTools()).build()
        answer = run.call(lambda: agent.chat(TASK))  # stopped, and answered by the wrap-up (on_stop="answer")
    assert run.result.outcome is Outcome.STALLED
    assert answer == run.result.answer and run.result.answer_source == "wrap_up"
    with Guard(on_stop="raise").start_run(task=TASK, task_type="lookup") as raising:
        model = raising.wrap(scripted_model(stubborn_incident(), seed=3))
        agent = AiServices.builder(ToolAssistant).chatModel(model).tools(LogisticsTools()).build()
        with pytest.raises(jpype.JClass("dev.pyguard.bridge.GuardStopException")):  # stopped: raised, no answer
            raising.call(lambda: agent.chat(TASK))
    assert raising.result.outcome is Outcome.STALLED
    assert run.result.task_type == "lookup"

    # A run left without call() ends failed, never succeeded.
    with guard.start_run(task=TASK) as idle:
        idle.wrap(scripted_model("convergent", seed=1))
    assert idle.result.outcome is Outcome.FAILED


def test_policy_that_raises_is_bounded_by_the_java_fail_safe(jvm):
    guard = Guard(fail_safe_calls=5)
    run = guard.start_run(task=TASK)

    def broken(event):
        raise RuntimeError("policy bug")

    run.observe = broken
    guarded = run.guarded_model(scripted_model("divergent", seed=1))
    result = run.drive(lambda a: run_built(a, TASK, guarded), build=lambda: build_agent("aiservices", guarded))
    assert result.outcome is Outcome.GUARD_ERROR, result.summary()
    assert guarded.stats().model_calls == 5
    assert "policy bug" in result.reason


@pytest.mark.parametrize("fault", ["http_500", "http_429", "malformed_json"])
def test_server_faults_give_a_clear_failed_outcome(jvm, fault):
    from pyguard.jvm import start_openai_server

    with start_openai_server("convergent", fault=fault) as server:
        result = Guard().run("aiservices", server.chat_model(max_retries=0), TASK, tools=server)
    assert result.outcome is Outcome.FAILED, result.summary()
    assert result.reason
