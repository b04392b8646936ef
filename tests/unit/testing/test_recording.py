"""A recorded run's calls as a scenario (pure Python; the recording itself is tested in tests/jvm/test_jvm_recording.py)."""

from __future__ import annotations

import pytest

from pyguard.base.errors import InputError
from pyguard.testing.recording import scenario_from_calls


def call(u: int, n: int, digest: str, *, text: str | None = None, tools: list | None = None, **extra) -> dict:
    out = {"user_turn": u, "turn": n, "user": f"message {u + 1}", "wrap_up": False, "request_digest": digest}
    out["tool_calls"] = tools or []
    if text is not None:
        out["text"] = text
    return {**out, **extra}


LOOKUP = [{"name": "lookup", "arguments": '{"id":"7"}'}]


def test_one_task_becomes_turns_with_usage_and_digests():
    calls = [
        call(0, 0, "d1", tools=LOOKUP, input_tokens=10, output_tokens=3),
        call(0, 1, "d2", text="done", input_tokens=20, output_tokens=4),
    ]
    assert scenario_from_calls(calls, name="late") == {
        "name": "late",
        "description": "recorded from a real model; replayed offline (pyguard.testing.recording)",
        "toolset": "none",
        "usage": {"report": True},
        "turns": [
            {"tool_calls": LOOKUP, "input_tokens": 10, "output_tokens": 3, "request_digest": "d1"},
            {"answer": "done", "input_tokens": 20, "output_tokens": 4, "request_digest": "d2"},
        ],
    }


def test_several_user_messages_become_a_conversation_and_the_wrap_up_its_answer():
    calls = [
        call(0, 0, "a", text="hi"),
        call(1, 0, "b", tools=LOOKUP, text="let me look"),
        {**call(1, 1, "c", text="I had to stop: 7 is late"), "wrap_up": True},
    ]
    scenario = scenario_from_calls(calls, name="chat")
    assert scenario["usage"] == {"report": False}  # no call reported usage
    assert scenario["conversation"] == [
        {"user": "message 1", "turns": [{"answer": "hi", "request_digest": "a"}]},
        {"user": "message 2", "turns": [{"tool_calls": LOOKUP, "text": "let me look", "request_digest": "b"}]},
    ]
    assert scenario["wrap_up"] == {"answer": "I had to stop: 7 is late"}


@pytest.mark.parametrize(
    ("calls", "message"),
    [
        ([], "recording 'x' holds no model call"),
        (
            [call(0, 0, "a", text="1"), call(0, 0, "b", text="2")],
            "two different requests for user message 1, model call 1",
        ),
        ([call(0, 1, "a", text="1")], "misses model call 1 of user message 1"),
    ],
)
def test_a_recording_that_cannot_replay_is_refused(calls, message):
    with pytest.raises(InputError, match=message):
        scenario_from_calls(calls, name="x")


def test_the_same_request_recorded_twice_is_one_turn():
    calls = [call(0, 0, "a", text="same"), call(0, 0, "a", text="same")]
    assert scenario_from_calls(calls, name="x")["turns"] == [{"answer": "same", "request_digest": "a"}]
