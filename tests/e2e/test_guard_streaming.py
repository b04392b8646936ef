"""Streaming agents guarded end to end: LangChain4j AiServices whose method returns a ``TokenStream``, around the
scripted ``StreamingChatModel`` and around LangChain4j's real ``OpenAiStreamingChatModel`` reading server-sent events
from pyguard's local server. One event per completed model call, with usage; decisions applied before the next call;
a stop never leaves a half-written answer reported as a success."""

from __future__ import annotations

from pyguard.base.decisions import Action
from pyguard.base.events import Outcome
from pyguard.jvm import load_scenario, scripted_model, start_openai_server
from pyguard.jvm.streaming import openai_streaming_chat_model, scripted_streaming_model
from pyguard.live.guard import Guard
from pyguard.trace import read_trace

TASK = "Where is order 12345? Tell me its shipment status."


def _stubborn() -> dict:
    data = dict(load_scenario("logistics_incident"))
    data["on_reflection"] = {**data["on_reflection"], "recover_probability": 0.0}
    return data


def test_a_converging_streaming_run_succeeds_with_the_same_events_as_a_blocking_one(jvm, tmp_path):
    chunks: list[str] = []
    streamed = Guard(trace_dir=tmp_path).run_streaming(
        scripted_streaming_model("convergent"), TASK, run_id="s-conv", on_partial=chunks.append
    )
    blocking = Guard().run("aiservices", scripted_model("convergent"), TASK)
    assert streamed.outcome is Outcome.SUCCEEDED, streamed.reason
    assert streamed.model_calls == blocking.model_calls == 4
    # one event per completed call, with the usage the model reported at onCompleteResponse
    assert [e.total_tokens for e in streamed.record.events] == [e.total_tokens for e in blocking.record.events]
    assert all(e.total_tokens for e in streamed.record.events)
    assert streamed.answer == blocking.answer
    # the answer arrived in chunks before it completed
    assert len(chunks) > 3 and "".join(chunks).endswith(streamed.answer or "?")
    trace = read_trace(tmp_path / "s-conv.jsonl").runs[0]
    assert len(trace.record.events) == 4 and trace.record.end is not None
    assert trace.record.end.outcome is Outcome.SUCCEEDED


def test_a_looping_streaming_run_is_stopped_stalled_and_never_reported_as_succeeded(jvm):
    result = Guard().run_streaming(scripted_streaming_model(_stubborn()), TASK, tools="logistics")
    assert result.outcome is Outcome.STALLED, result.reason
    assert result.model_calls == 3  # the unguarded run makes 12; judged before call 3, the reflection goes into it
    assert [d.action for d in result.decisions] == [Action.CONTINUE, Action.REFLECT, Action.STOP]
    assert result.answer is None


def test_the_reflection_reaches_the_next_streamed_request(jvm):
    # logistics_incident answers with its on_reflection text only when a request carries the guard's reflection
    result = Guard().run_streaming(scripted_streaming_model("logistics_incident"), TASK, tools="logistics")
    assert result.outcome is Outcome.SUCCEEDED
    assert result.reflections == [2]  # on call 2's results, before call 3 is sent
    assert (result.answer or "").startswith("I already have the status, so I will stop re-checking.")


def test_a_stop_mid_stream_ends_the_call_and_the_partial_text_is_no_answer(jvm):
    guard = Guard()
    seen: list[str] = []

    def on_partial(chunk: str) -> None:
        seen.append(chunk)
        if len(seen) == 3:  # halfway through the final answer: cancel the run from its own stream
            assert guard.cancel_all("the user closed the chat") == 1

    result = guard.run_streaming(scripted_streaming_model("convergent"), TASK, on_partial=on_partial)
    full = Guard().run("aiservices", scripted_model("convergent"), TASK).answer or ""
    assert result.outcome is Outcome.CANCELLED, result.reason
    assert len(seen) == 3 and full.startswith("".join(seen)) and len("".join(seen)) < len(full)
    assert result.answer != full and not (result.answer or "").startswith("".join(seen))
    # the cut call is one event, with the stop as its error; no event has the unfinished text
    last = result.record.events[-1]
    assert last.error is not None and "GuardStopException" in last.error and last.text is None


def test_openai_streaming_chat_model_over_server_sent_events(jvm):
    with start_openai_server("convergent") as server:
        chunks: list[str] = []
        model = openai_streaming_chat_model(server.base_url, "convergent")
        ok = Guard().run_streaming(model, TASK, tools=server, on_partial=chunks.append)
        sent = int(server.java.reportedInputTokens()) + int(server.java.reportedOutputTokens())
    assert ok.outcome is Outcome.SUCCEEDED, ok.reason
    assert ok.model_calls == 4 and ok.total_tokens == sent  # usage from the stream's last chunk
    assert "".join(chunks).endswith(ok.answer or "?")
    with start_openai_server(_stubborn()) as server:
        stuck = Guard().run_streaming(openai_streaming_chat_model(server.base_url), TASK, tools=server)
        requests = server.requests
    assert stuck.outcome is Outcome.STALLED and stuck.model_calls == 3 and requests == 3
