"""turn_starts: a user message after an answer starts a new turn; one while tools are being called does not."""

from __future__ import annotations

from pyguard.base.events import IterationEvent, Observation, ToolCall, turn_starts


def _event(index: int, *, tool: bool, user: bool = False) -> IterationEvent:
    obs = (Observation(kind="user", text="and another thing"),) if user else ()
    calls = (ToolCall(name="lookup"),) if tool else ()
    return IterationEvent(run_id="r", index=index, tool_calls=calls, observations=obs)


def test_a_user_message_after_an_answer_starts_a_turn() -> None:
    events = [
        _event(1, tool=True, user=True),
        _event(2, tool=False),
        _event(3, tool=True, user=True),
        _event(4, tool=False),
        _event(5, tool=False, user=True),
    ]
    assert turn_starts(events) == [0, 2, 4]


def test_a_user_message_while_tools_are_called_stays_in_the_turn() -> None:
    events = [_event(1, tool=True, user=True), _event(2, tool=True, user=True), _event(3, tool=False)]
    assert turn_starts(events) == [0]


def test_an_answer_followed_by_tool_results_only_is_not_a_new_turn() -> None:
    events = [_event(1, tool=False), _event(2, tool=True)]
    assert turn_starts(events) == [0]
    assert turn_starts([]) == []


def test_the_first_decision_of_a_later_turn_tells_java_where_the_turn_began():
    """The Java fail-safe counts per user turn once Python says where a turn began (``turn_start``)."""
    import json

    from pyguard.base.decisions import Action, Decision
    from pyguard.jvm.callback import CallbackAdapter

    decisions = iter(
        [
            Decision(action=Action.CONTINUE, iteration=1, turn=1),
            Decision(action=Action.CONTINUE, iteration=2, turn=1),
            Decision(action=Action.CONTINUE, iteration=3, turn=2),
            Decision(action=Action.CONTINUE, iteration=4, turn=2),
        ]
    )
    adapter = CallbackAdapter(lambda event: next(decisions), keep_events=False)
    replies = [json.loads(adapter.on_iteration(json.dumps({"run_id": "r", "index": k}))) for k in range(1, 5)]
    assert replies == [
        {"action": "continue"},
        {"action": "continue"},
        {"action": "continue", "turn_start": 2},
        {"action": "continue"},
    ]
