"""The escalation handle without a JVM: built from an engine session that escalated, it round-trips through JSON and
refuses what it cannot vouch for."""

from __future__ import annotations

import hashlib
import json

import pytest

from pyguard.base.errors import HandleError, RunError
from pyguard.base.events import IterationEvent, Observation, Outcome, ToolCall
from pyguard.engine import EscalationConfig, Policy, PolicyConfig
from pyguard.escalation import AgentRef, EscalationHandle, resumed_run_id
from pyguard.live.resumption import rebuild


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


EARLY = PolicyConfig(
    judge_results_early=True,
    stop_on_fruitless_retry=False,  # the model asking again is let run: its result, the same, stops the run
    escalation=EscalationConfig(on_stall="escalate", resume_budget=3),
)


def _early_handle() -> tuple[EscalationHandle, list]:
    """A run whose escalation was decided on a call's tool results, before the next call was sent (as the guarded
    model does live): the results it was judged on are in no event."""
    session = Policy(EARLY).new_run("h1")
    events: list[IterationEvent] = []
    recorded: list = []
    while session.stopped is None:
        events.append(_lookup(len(events) + 1))
        recorded.append(session.observe(events[-1]))
        if session.stopped is None:  # call i's result, in call i+1's request: judged before that call is sent
            judged = session.observe_results(events[-1].index, _lookup(len(events) + 1).observations)
            if judged.action.value != "continue":
                recorded[-1] = judged
    stop = session.stopped
    assert stop.outcome is Outcome.ESCALATED and session.results_judged(stop.iteration) is not None
    handle = EscalationHandle(
        run_id="h1",
        origin_run_id="h1",
        agent=AgentRef(name="bot"),
        escalation=stop,
        resume_budget=3,
        events=tuple(events),
        results=session.results_judged(stop.iteration),
        conversation="[]",
    ).sealed()
    return handle, recorded


def test_an_escalation_decided_on_a_calls_results_is_rebuilt_from_the_results_the_handle_keeps():
    handle, recorded = _early_handle()
    again = EscalationHandle.from_json(handle.to_json())
    assert again == handle and again.results == _lookup(len(handle.events) + 1).observations
    events, decisions, session = rebuild(again, Policy(EARLY), "h1-r1")
    assert [e.run_id for e in events] == ["h1-r1"] * len(handle.events)
    assert session.stopped is not None and session.stopped.outcome is Outcome.ESCALATED
    assert session.stopped.iteration == len(handle.events) and session.stopped.rule == handle.escalation.rule
    assert [(d.iteration, d.action, d.rule) for d in decisions] == [(d.iteration, d.action, d.rule) for d in recorded]
    # without the results it was judged on, the escalation cannot be reproduced: refused, not guessed
    bare = handle.model_copy(update={"results": None, "digest": ""}).sealed()
    with pytest.raises(HandleError, match="does not escalate where its handle says"):
        rebuild(bare, Policy(EARLY), "h1-r1")


def test_a_handle_written_before_handles_kept_results_still_reads_and_rebuilds():
    handle = _handle()
    raw = json.loads(handle.to_json())
    del raw["results"]
    del raw["digest"]  # the digest such a handle was written with: blake2b of its body, keys sorted
    body = json.dumps(raw, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    raw["digest"] = hashlib.blake2b(body.encode("utf-8"), digest_size=16).hexdigest()
    old = EscalationHandle.from_json(json.dumps(raw))
    assert old.results is None
    # such a handle came from a guard that judged each call's results with the next call
    late = PolicyConfig(judge_results_early=False, escalation=EscalationConfig(on_stall="escalate", resume_budget=3))
    assert rebuild(old, Policy(late), "h1-r1")[2].stopped.outcome is Outcome.ESCALATED
