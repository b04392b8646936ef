"""The run lifecycle across the bridge (issue 13): Java's endings and stops read in one place, the run's counters
mapped once, and a stop decision without an outcome refused (never defaulted in Java) with the fail-safe ending the
run safely."""

from __future__ import annotations

from pathlib import Path

import jpype
import pytest

from pyguard.base.ending import Ending
from pyguard.base.events import Outcome
from pyguard.jvm import build_agent, guard_model, run_built, scripted_model
from pyguard.jvm.ending import ending_of_exception
from pyguard.live.guard import Guard

ROUNDS = Path(__file__).resolve().parents[1] / "data" / "scenarios" / "rounds.json"
"""An agent that learns something new with every call (no stall before its sixth): it reaches a cap."""


def test_a_stop_without_an_outcome_is_a_guard_failure_and_the_fail_safe_ends_the_run(jvm):
    @jpype.JImplements("dev.pyguard.bridge.GuardCallback")
    class NoOutcome:
        @jpype.JOverride
        def onIteration(self, event_json):  # noqa: N802 - Java name
            return '{"action": "stop", "reason": "looping"}'

    GuardedChatModel = jpype.JClass("dev.pyguard.bridge.GuardedChatModel")
    GuardConfig = jpype.JClass("dev.pyguard.bridge.GuardConfig")
    model = scripted_model("oscillating")
    guarded = GuardedChatModel(model, GuardConfig.of("no-outcome").withMaxModelCalls(3), NoOutcome())
    res = run_built(build_agent("executor", guarded), "status?")
    assert (res.status, res.outcome, res.fail_safe) == (Ending.STOPPED, Outcome.GUARD_ERROR, True)
    assert res.stats is not None and res.stats.model_calls == 3 and res.stats.callback_failures == 3
    assert 'has no "outcome"' in (res.stats.last_callback_error or "")


def test_a_stop_inside_a_users_exception_is_read_as_a_stop(jvm):
    guarded = guard_model(scripted_model("oscillating"), lambda e: None, run_id="u1")
    guarded.request_stop(Outcome.CANCELLED, "bye", "cancel")
    with pytest.raises(Exception) as info:
        try:
            guarded.java.chat("hello")
        except Exception as stop:
            # a user's agent may wrap the stop in its own exception
            raise jpype.JClass("java.lang.RuntimeException")("the agent failed", stop) from None
    ending = ending_of_exception(info.value, last_text="partial")
    assert (ending.ending, ending.stop_outcome, ending.reason, ending.last_text) == (
        Ending.STOPPED,
        Outcome.CANCELLED,
        "bye",
        "partial",
    )


def test_the_run_counters_cross_once_and_agree_with_java(jvm):
    guarded = guard_model(scripted_model("logistics_incident", seed=1), lambda e: None, run_id="c1")
    res = run_built(build_agent("aiservices", guarded, tools="logistics"), "Where is order 12345?")
    java = guarded.java.stats()
    for got in (guarded.stats(), res.stats):
        assert got is not None
        assert (got.model_calls, got.events, got.events_delivered, got.tool_calls, got.tool_executions) == (
            java.modelCalls(),
            java.events(),
            java.eventsDelivered(),
            java.toolCallsRequested(),
            java.toolExecutions(),
        )
        assert got.last_text == str(java.lastText())


def test_an_unguarded_run_and_a_guarded_one_end_through_the_same_mapping(jvm):
    from pyguard.live.guard import run_unguarded

    unguarded = run_unguarded("aiservices", scripted_model(ROUNDS), "x", max_tool_calling_round_trips=3)
    assert unguarded.outcome is Outcome.EXPIRED
    assert unguarded.reason.startswith("the agent's own cap ended the run without an answer (")
    assert unguarded.total_tokens == sum(e.tokens or 0 for e in unguarded.record.events)
    # on_stop="raise": the guard knows the cap, so the cap's last response still asking for tools ends the turn with
    # the guard's exception (LangChain4j would make one more call and throw whatever it answered); same outcome
    raising = Guard(on_stop="raise")
    guarded = raising.run("aiservices", scripted_model(ROUNDS), "x", max_tool_calling_round_trips=3)
    assert (
        (guarded.outcome, guarded.model_calls) == (Outcome.EXPIRED, unguarded.model_calls - 1) == (Outcome.EXPIRED, 3)
    )
    assert "the agent's own cap (LangChain4j's maxToolCallingRoundTrips=3) was reached" in guarded.reason
    # answering stops (the default): the cap's last response still asking for tools is answered by the wrap-up
    answered = Guard().run("aiservices", scripted_model(ROUNDS), "x", max_tool_calling_round_trips=3)
    assert (answered.outcome, answered.model_calls, answered.answer_source) == (Outcome.EXPIRED, 3, "wrap_up")


def test_the_fail_safe_default_without_a_policy_lives_in_java_only(jvm):
    import pyguard.jvm
    from pyguard.jvm import guard_model

    java_default = int(jpype.JClass("dev.pyguard.bridge.GuardConfig").DEFAULT_MAX_MODEL_CALLS)
    assert pyguard.jvm.DEFAULT_MAX_MODEL_CALLS == java_default
    guarded = guard_model(scripted_model("convergent"), lambda e: None, run_id="d1")
    assert int(guarded.java.config().maxModelCalls()) == java_default
    guard = Guard()
    run = guard.start_run(task="x")
    assert int(run.guarded_model(scripted_model("convergent")).java.config().maxModelCalls()) == guard.fail_safe_calls
    run.abandon()


def test_the_agent_loop_cap_under_its_old_name_still_caps_the_loop(jvm):
    from pyguard.live.guard import run_unguarded

    with pytest.warns(DeprecationWarning, match="max_loop_iterations"):
        old = run_unguarded("executor", scripted_model("divergent"), "why?", max_iterations=3)
    new = run_unguarded("executor", scripted_model("divergent"), "why?", max_loop_iterations=3)
    assert (old.outcome, old.model_calls) == (new.outcome, new.model_calls) == (Outcome.EXPIRED, 3)
