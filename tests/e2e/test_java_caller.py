"""Issue 32: a stop a Java caller can see. Java code that holds a user's AiServices agent (``dev.usercode.Desk``,
around the agent of the user's own factory, guarded through ``guard.attach``) reads how each call ended without
Python (``AgentGuardedChatModel.lastOutcome()``, an outcome listener); ``on_stop="raise"`` raises Java's
``GuardStopException`` through attach, ``GuardedRun.call`` and ``Guard.agent`` alike; a watched agent's turns end
with the call, LangChain4j's own round-trip cap included, without the guard being told that cap."""

from __future__ import annotations

import pytest

import pyguard.jvm
from pyguard.base.events import Outcome
from pyguard.live.guard import Guard
from tests.e2e._agents import TASK, answering_model, informative_model, stuck_model, user_classes

pytestmark = pytest.mark.jvm
# Every guard here decides on the agent's thread (callback_timeout_ms=0): under load a decision can miss the 10 s
# callback deadline, and the Java fail-safe then stops the run guard_error; these tests count stops, not deadlines.


@pytest.fixture(scope="module")
def user(jvm):
    return user_classes("Desk", "UserAgents")


def desk(user, guard, *, round_trips=100, told=True, watch=False, model=None):
    Desk, _ = user
    ag = guard.attach(model or stuck_model(), max_tool_calling_round_trips=round_trips if told else None)
    return ag, Desk(ag.model, ag.before_tool_execution(), round_trips, watch)


def test_java_reads_how_a_stopped_call_ended_under_on_stop_answer(user):
    ag, d = desk(user, Guard(callback_timeout_ms=0))
    seen = d.handle(TASK)
    result = ag.results[-1]
    assert d.raised() is None and str(d.answer()) == result.answer  # chat() returned a plain String
    assert result.outcome is Outcome.STALLED and result.answer_source == "wrap_up", result.summary()
    assert (str(seen.runId()), str(seen.outcome()), str(seen.answerSource())) == (result.run_id, "stalled", "wrap_up")
    assert str(seen.rule()) == result.evidence["rule"] and str(seen.reason()) == result.reason
    assert seen.stopped() and not seen.succeeded()
    assert int(seen.modelCalls()) == result.model_calls and int(seen.totalTokens()) == result.total_tokens
    assert [str(o.runId()) for o in d.heard()] == [result.run_id]  # the listener heard it too


def test_java_reads_a_model_answer_as_succeeded(user):
    ag, d = desk(user, Guard(callback_timeout_ms=0), model=answering_model())
    seen = d.handle(TASK)
    assert d.raised() is None, str(d.raised())
    assert ag.results[-1].outcome is Outcome.SUCCEEDED
    assert (str(seen.outcome()), str(seen.answerSource()), seen.stopped()) == ("succeeded", "model", False)


def test_on_stop_raise_through_attach_raises_the_java_class_and_java_reads_the_outcome(user):
    ag, d = desk(user, Guard(on_stop="raise", callback_timeout_ms=0))
    seen = d.handle(TASK)
    assert isinstance(d.raised(), pyguard.jvm.GuardStopException)
    assert (str(seen.outcome()), seen.answerSource()) == ("stalled", None)
    assert ag.open_runs == [] and str(seen.runId()) == ag.results[-1].run_id
    _, UserAgents = user
    agent = UserAgents.create(ag.model, ag.before_tool_execution(), 100)
    with pytest.raises(pyguard.jvm.GuardStopException) as raised:  # from Python: the same class
        agent.chat(TASK)
    assert str(raised.value.outcome()) == "stalled" and str(raised.value.runId()) == ag.results[-1].run_id


def test_on_stop_raise_through_run_call_raises(user):
    _, UserAgents = user
    guard = Guard(on_stop="raise", callback_timeout_ms=0)
    with guard.start_run(task=TASK) as run:
        agent = UserAgents.create(run.wrap(stuck_model()), run.before_tool_execution(), 100)
        with pytest.raises(pyguard.jvm.GuardStopException) as raised:
            run.call(lambda: agent.chat(TASK))
    assert run.result.outcome is Outcome.STALLED and str(raised.value.runId()) == run.run_id


def test_on_stop_raise_through_guard_agent_raises(user):
    guard = Guard(on_stop="raise", callback_timeout_ms=0)
    agent = guard.agent("aiservices", stuck_model(), tools="logistics")
    with pytest.raises(pyguard.jvm.GuardStopException) as raised:
        agent.chat(TASK)
    result = agent.agent_guard.results[-1]
    assert result.outcome is Outcome.STALLED and str(raised.value.runId()) == result.run_id
    assert agent.agent_guard.open_runs == []
    agent.close()


def test_on_stop_answer_through_guard_agent_still_returns_the_result(user):
    agent = Guard(callback_timeout_ms=0).agent("aiservices", stuck_model(), tools="logistics")
    result = agent.chat(TASK)
    assert result.outcome is Outcome.STALLED and result.answer_source == "wrap_up"
    agent.close()


@pytest.mark.parametrize("java", [False, True])
def test_a_watched_agent_not_told_its_cap_records_each_turn_as_itself(user, java):
    # LangChain4j's cap of 2 round trips ends each turn (3 model calls); the agent learns something new with every
    # call, so no stall comes first
    ag, d = desk(user, Guard(callback_timeout_ms=0), round_trips=2, told=False, watch=True, model=informative_model())
    _, UserAgents = user
    agent = ag.watch(UserAgents.create(ag.model, ag.before_tool_execution(), 2))
    for turn in range(2):
        message = f"{TASK} (turn {turn})"
        if java:
            seen = d.handle(message)
            assert "maxToolCallingRoundTrips" in str(d.raised())
        else:
            with pytest.raises(Exception, match="maxToolCallingRoundTrips"):
                agent.chat(message)
            seen = None
        assert ag.open_runs == []  # ended with the call that started it, not at the next turn
        latest = ag.results[-1]
        assert latest.record.start.task == message and len(ag.results) == turn + 1
        assert latest.outcome is Outcome.EXPIRED and latest.model_calls == 3, latest.summary()
        if seen is not None:
            assert (str(seen.runId()), str(seen.outcome())) == (latest.run_id, "expired")
