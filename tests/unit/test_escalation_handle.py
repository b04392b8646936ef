"""The escalation handle without a JVM: built from an engine session that escalated, it round-trips through JSON and
refuses what it cannot vouch for."""

from __future__ import annotations

import json

import pytest

from pyguard.engine import EscalationConfig, Policy, PolicyConfig
from pyguard.errors import HandleError, RunError
from pyguard.escalation import AgentRef, EscalationHandle, resumed_run_id
from pyguard.events import IterationEvent, Observation, Outcome, ToolCall


def _lookup(i: int) -> IterationEvent:
    """The i-th model call of a run stuck on one lookup: the same call, the same result."""
    obs = (
        Observation(kind="user", text="Where is order 1?")
        if i == 1
        else Observation(tool_call_id=f"c{i - 1}", tool_name="get_status", text="Order 1: delayed at the hub.")
    )
    call = ToolCall(id=f"c{i}", name="get_status", arguments='{"id": "1"}')
    return IterationEvent(run_id="h1", index=i, tool_calls=(call,), observations=(obs,))


def _handle() -> EscalationHandle:
    policy = Policy(PolicyConfig(escalation=EscalationConfig(on_stall="escalate", resume_budget=3)))
    session = policy.new_run("h1")
    events: list[IterationEvent] = []
    while session.stopped is None:
        events.append(_lookup(len(events) + 1))
        session.observe(events[-1])
    assert session.stopped.outcome is Outcome.ESCALATED
    return EscalationHandle(
        run_id="h1",
        origin_run_id="h1",
        task="Where is order 1?",
        agent=AgentRef(name="bot"),
        escalation=session.stopped,
        resume_budget=3,
        events=tuple(events),
        conversation="[]",
    ).sealed()


def test_a_handle_round_trips_through_json_and_says_where_it_goes_next():
    handle = _handle()
    again = EscalationHandle.from_json(handle.to_json())
    assert again == handle and again.digest
    assert again.next_run_id == resumed_run_id("h1", 1) == "h1-r1"
    assert json.loads(handle.to_json())["version"] == 1
    assert again.summary()["rule"] == handle.escalation.rule


def test_a_handle_error_is_a_run_error_and_names_the_problem():
    raw = json.loads(_handle().to_json())
    raw["task"] = "Where is order 2?"
    with pytest.raises(RunError, match="changed after it was written"):
        EscalationHandle.from_json(json.dumps(raw))
    raw = json.loads(_handle().to_json())
    raw["surprise"] = 1
    with pytest.raises(HandleError, match="malformed at 'surprise'"):
        EscalationHandle.from_json(json.dumps(raw))
    short = _handle().model_copy(update={"events": _handle().events[:-1], "digest": ""}).sealed()
    with pytest.raises(HandleError, match="does not end in an escalation after its last event"):
        short.check()


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested deeper than pyguard reads"),
        ('{"kind": "pyguard.escalation", "version": ' + "9" * 5000 + "}", "longer than the limit of"),
    ],
    ids=["deep", "huge-integer"],
)
def test_a_hostile_handle_is_refused_as_a_handle_error_not_a_traceback(text, says):
    with pytest.raises(HandleError, match=says):
        EscalationHandle.from_json(text)
