"""Record a run against a real model (LangChain4j's OpenAiChatModel over HTTP to the local OpenAI-compatible server)
and replay it offline with the scripted model: the same run, call by call; a drifted request is refused naming the call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyguard.jvm import scripted_model
from pyguard.jvm.recording import Recording
from pyguard.jvm.server import openai_chat_model, start_openai_server
from pyguard.live.guard import Guard

TASK = "Order 12345 is late. Why, and what can we do about it?"


@pytest.fixture
def recorded(jvm, tmp_path: Path):
    server = start_openai_server("logistics_incident")
    try:
        recording = Recording(openai_chat_model(server.base_url, "gpt-test"))
        live = Guard(trace_dir=None).run("aiservices", recording.model, TASK, tools="logistics")
        served = server.requests
    finally:
        server.stop()
    return live, recording.save(tmp_path / "incident.json"), served


def test_a_recorded_run_replays_offline_call_for_call(recorded):
    live, path, served = recorded
    assert served == live.model_calls  # the recording went through the real HTTP client, every call
    scenario = json.loads(path.read_text())
    assert [t.get("answer") is not None for t in scenario["turns"]] == [False] * (live.model_calls - 1) + [True]
    replayed = Guard(trace_dir=None).run("aiservices", scripted_model(str(path)), TASK, tools="logistics")
    assert (replayed.outcome, replayed.model_calls, replayed.total_tokens, replayed.answer) == (
        live.outcome,
        live.model_calls,
        live.total_tokens,
        live.answer,
    )
    assert [(d.action, d.rule) for d in replayed.decisions] == [(d.action, d.rule) for d in live.decisions]
    assert [[c.arguments for c in e.tool_calls] for e in replayed.record.events] == [
        [c.arguments for c in e.tool_calls] for e in live.record.events
    ]


def test_a_request_that_drifted_from_the_recording_is_refused_naming_the_call(recorded):
    _, path, _ = recorded
    drifted = Guard(trace_dir=None).run(
        "aiservices", scripted_model(str(path)), "Order 12346 is late.", tools="logistics"
    )
    assert not drifted.succeeded
    assert "drifted from the recording of scenario 'incident': user message 1, model call 1" in drifted.reason
    assert "the request now ends with: USER 'Order 12346 is late.'" in drifted.reason
