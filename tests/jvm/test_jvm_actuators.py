"""Stops and reflections decided in Python act on the real loops; the Java fail-safe holds when Python fails."""

from __future__ import annotations

import threading

import pytest
from jvm_support import STYLES, reflect_at, stop_at

from pyguard.base.errors import ConfigError, RunError
from pyguard.base.events import Outcome
from pyguard.jvm import GuardStopped, build_agent, guard_model, run_agent, run_built, scripted_model


@pytest.mark.parametrize("style", STYLES)
def test_python_stop_ends_the_run_with_its_reason(jvm, style):
    model = scripted_model("logistics_incident", seed=0)
    r = run_agent(
        style, model, "Where is 12345?", callback=stop_at(3, rule="repeat_no_gain", reason="same call, same result")
    )
    assert r.status == "stopped"
    assert r.outcome is Outcome.STALLED and r.rule == "repeat_no_gain" and r.reason == "same call, same result"
    assert not r.fail_safe
    assert int(model.calls()) == r.stats.model_calls == len(r.events) == 3
    assert r.stats.tool_calls == 3 and r.stats.tool_executions == 2  # the tools of the stopped response never ran
    with pytest.raises(GuardStopped) as info:
        r.raise_for_status()
    assert info.value.result is r and "repeat_no_gain" in str(info.value)


@pytest.mark.parametrize("style", STYLES)
def test_reflection_reaches_the_model_which_recovers(jvm, style):
    model = scripted_model("oscillating", seed=1)
    r = run_agent(style, model, "status of 12345?", callback=reflect_at(2), max_model_calls=30)
    # recover_probability 0.8 under seed 1: the scripted model answers right after the reflection
    assert r.status == "answered", r
    assert r.answer.startswith("The status has not changed: Order 12345")
    assert int(model.recoveries()) == 1
    assert r.stats.model_calls == 3
    # the reflection is the guard's own words: it is not reported back as an observation
    assert all(o.kind == "tool" for o in r.events[2].observations)


@pytest.mark.parametrize("style", STYLES)
def test_fail_safe_holds_when_the_python_callback_raises(jvm, style):
    def broken(event):
        raise ZeroDivisionError("policy bug")

    model = scripted_model("oscillating")
    r = run_agent(style, model, "status?", callback=broken, max_model_calls=6)
    assert r.status == "stopped" and r.fail_safe
    assert r.outcome is Outcome.GUARD_ERROR and r.rule == "failsafe_cap"
    assert int(model.calls()) == 6
    assert r.stats.callback_failures == 6
    assert r.callback_errors == ("ZeroDivisionError: policy bug",) * 6
    assert "policy bug" in r.reason and "6 guard callback failure" in r.reason


def test_fail_safe_holds_when_no_callback_is_registered(jvm):
    r = run_agent("aiservices", scripted_model("divergent"), "why?", callback=None, max_model_calls=4)
    assert (r.status, r.outcome, r.stats.model_calls) == ("stopped", Outcome.GUARD_ERROR, 4)
    assert "no guard callback registered" in r.reason


def test_fail_safe_holds_when_the_callback_blocks_past_its_deadline(jvm):
    release = threading.Event()

    def stuck(event):
        release.wait()  # never answers in time; released after the run so no thread is left behind
        return None

    try:
        r = run_agent(
            "executor", scripted_model("divergent"), "why?", callback=stuck, max_model_calls=3, callback_timeout_ms=20
        )
    finally:
        release.set()
    # the first event missed its deadline: the guard of the run is given up and the run stops before its next model
    # call (one deadline per run; one parked thread per hung run)
    assert (r.status, r.outcome, r.rule, r.stats.model_calls, r.stats.callback_failures) == (
        "stopped",
        Outcome.GUARD_ERROR,
        "failsafe_deadline",
        1,
        1,
    )
    assert "did not answer within 20 ms (event 1" in r.stats.last_callback_error


def test_deadline_mode_delivers_decisions_on_time(jvm):
    # a deadline no healthy callback misses, loaded machine included: the decisions come through the pool thread
    r = run_agent(
        "aiservices",
        scripted_model("logistics_incident", seed=0),
        "x",
        callback=stop_at(2),
        callback_timeout_ms=600_000,
    )
    assert (r.status, r.stats.model_calls, r.stats.callback_failures) == ("stopped", 2, 0)


def test_healthy_guard_that_never_stops_expires_at_the_cap(jvm):
    r = run_agent("aiservices", scripted_model("divergent"), "why?", callback=lambda e: None, max_model_calls=5)
    assert (r.outcome, r.fail_safe, r.stats.model_calls, r.stats.tool_executions) == (Outcome.EXPIRED, True, 5, 4)


def test_wrong_return_type_is_a_counted_failure(jvm):
    r = run_agent("executor", scripted_model("convergent"), "x", callback=lambda e: {"action": "stop"})
    assert r.status == "answered" and r.stats.callback_failures == 4
    assert r.callback_errors[0].startswith("TypeError: a guard callback must return")


def test_cancellation_from_another_thread(jvm):
    def policy(event):
        if event.index == 3:
            guarded.request_stop()  # what a user's cancel button would do, from any thread
        return None

    guarded = guard_model(scripted_model("divergent"), policy, run_id="cancel-me")
    r = run_built(build_agent("aiservices", guarded), "why?", guarded)
    assert (r.status, r.outcome, r.rule, r.stats.model_calls) == ("stopped", Outcome.CANCELLED, "cancel", 3)


def test_bad_configuration_is_a_config_error(jvm):
    with pytest.raises(ConfigError, match="max_model_calls=0"):
        run_agent("aiservices", scripted_model("convergent"), "x", max_model_calls=0)
    with pytest.raises(ConfigError, match="agent style 'langgraph'"):
        run_agent("langgraph", scripted_model("convergent"), "x")
    with pytest.raises(ConfigError, match="model must be a Java LangChain4j ChatModel"):
        run_agent("executor", "gpt-4o", "x")
    with pytest.raises(ConfigError, match="max_loop_iterations=0"):
        run_agent("executor", scripted_model("convergent"), "x", max_loop_iterations=0)


def test_exhausted_run_raises_run_error_on_request(jvm):
    r = run_agent("aiservices", scripted_model("oscillating"), "x", guard=False, max_tool_calling_round_trips=2)
    assert r.status == "exhausted" and "exceeded 2 tool calling round trips" in r.reason
    with pytest.raises(RunError):
        r.raise_for_status()
