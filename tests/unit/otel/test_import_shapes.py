"""Other emitters' GenAI spans import as runs: one agent, two model calls (a tool call, then the answer) and the tool
call between them, in each emitter's published shape (OpenLLMetry, OpenInference, Quarkus LangChain4j, content in
span events), plus Jaeger's /api/v3 envelope, enum-name status codes and string finish reasons."""

from __future__ import annotations

import json

import pytest

from pyguard.base.events import Outcome
from pyguard.otel import import_otlp

TRACE = "0af7651916cd43dd8448eb211c80319c"
T0 = 1_700_000_000_000_000_000
MS = 1_000_000


def value(v):
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, list):
        return {"arrayValue": {"values": [value(x) for x in v]}}
    return {"stringValue": v}


def span(span_id, name, attrs, *, parent=None, start=0, end=1, status=None, events=()):
    out = {
        "traceId": TRACE,
        "spanId": f"{span_id:016x}",
        "name": name,
        "startTimeUnixNano": str(T0 + start * MS),
        "endTimeUnixNano": str(T0 + end * MS),
        "attributes": [{"key": k, "value": value(v)} for k, v in attrs.items()],
        "events": [
            {
                "name": n,
                "timeUnixNano": str(T0 + end * MS),
                "attributes": [{"key": k, "value": value(v)} for k, v in a.items()],
            }
            for n, a in events
        ],
    }
    if parent is not None:
        out["parentSpanId"] = f"{parent:016x}"
    if status is not None:
        out["status"] = status
    return out


def write(tmp_path, spans, envelope=False):
    body = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    path = tmp_path / "spans.json"
    path.write_text(json.dumps({"result": body} if envelope else body))
    return path


def check_run(path, *, tokens=(120, 20, 180, 30), tool_text="in transit", arguments='{"id": "1"}'):
    (run,) = import_otlp(path).runs
    first, second = run.events
    assert [c.name for c in first.tool_calls] == ["get_status"] and not second.tool_calls
    assert (first.input_tokens, first.output_tokens, second.input_tokens, second.output_tokens) == tokens
    if arguments is not None:
        assert json.loads(first.tool_calls[0].arguments) == json.loads(arguments)
    if tool_text is not None:
        (obs,) = [o for o in second.observations if o.kind == "tool"]
        assert tool_text in obs.text
    return run


def test_openllmetry_spans(tmp_path):
    # traceloop: llm.request.type, gen_ai.system, deprecated usage names, indexed prompt/completion attributes
    chat = {"llm.request.type": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o"}
    spans = [
        span(1, "support.agent", {"traceloop.span.kind": "agent", "traceloop.entity.name": "support"}, end=10),
        span(
            2,
            "openai.chat",
            {
                **chat,
                "gen_ai.usage.prompt_tokens": 120,
                "gen_ai.usage.completion_tokens": 20,
                "llm.usage.total_tokens": 140,
                "gen_ai.prompt.0.role": "user",
                "gen_ai.prompt.0.content": "Where is order 1?",
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.finish_reason": "tool_calls",
                "gen_ai.completion.0.tool_calls.0.id": "call_1",
                "gen_ai.completion.0.tool_calls.0.name": "get_status",
                "gen_ai.completion.0.tool_calls.0.arguments": '{"id": "1"}',
            },
            parent=1,
            start=1,
            end=3,
        ),
        span(
            3,
            "get_status.tool",
            {
                "traceloop.span.kind": "tool",
                "traceloop.entity.name": "get_status",
                "traceloop.entity.input": '{"id": "1"}',
                "traceloop.entity.output": "order 1: in transit",
            },
            parent=1,
            start=4,
            end=5,
        ),
        span(
            4,
            "openai.chat",
            {
                **chat,
                "gen_ai.usage.prompt_tokens": 180,
                "gen_ai.usage.completion_tokens": 30,
                "gen_ai.prompt.0.role": "user",
                "gen_ai.prompt.0.content": "Where is order 1?",
                "gen_ai.prompt.1.role": "assistant",
                "gen_ai.prompt.2.role": "tool",
                "gen_ai.prompt.2.tool_call_id": "call_1",
                "gen_ai.prompt.2.content": "order 1: in transit",
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.content": "It is in transit.",
                "gen_ai.completion.0.finish_reason": "stop",
            },
            parent=1,
            start=6,
            end=9,
        ),
    ]
    run = check_run(write(tmp_path, spans))
    assert run.start.task_type == "support" and run.start.task == "Where is order 1?"
    assert run.events[0].provider == "openai" and run.end.outcome is Outcome.SUCCEEDED
    assert run.end.answer == "It is in transit."


def test_openinference_spans(tmp_path):
    llm = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o", "llm.provider": "openai"}
    spans = [
        span(1, "agent", {"openinference.span.kind": "AGENT", "agent.name": "support"}, end=10),
        span(
            2,
            "ChatCompletion",
            {
                **llm,
                "llm.token_count.prompt": 120,
                "llm.token_count.completion": 20,
                "llm.token_count.total": 140,
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": "Where is order 1?",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_1",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_status",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"id": "1"}',
            },
            parent=1,
            start=1,
            end=3,
        ),
        span(
            3,
            "get_status",
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "get_status",
                "input.value": '{"id": "1"}',
                "output.value": "order 1: in transit",
            },
            parent=1,
            start=4,
            end=5,
        ),
        span(
            4,
            "ChatCompletion",
            {
                **llm,
                "llm.token_count.prompt": 180,
                "llm.token_count.completion": 30,
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": "Where is order 1?",
                "llm.input_messages.1.message.role": "assistant",
                "llm.input_messages.2.message.role": "tool",
                "llm.input_messages.2.message.tool_call_id": "call_1",
                "llm.input_messages.2.message.content": "order 1: in transit",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": "It is in transit.",
            },
            parent=1,
            start=6,
            end=9,
        ),
    ]
    run = check_run(write(tmp_path, spans))
    assert run.start.task_type == "support" and run.events[0].model == "gpt-4o"
    assert run.events[0].total_tokens == 140 and run.end.answer == "It is in transit."


@pytest.mark.parametrize("with_attributes", [True, False])
def test_quarkus_langchain4j_spans(tmp_path, with_attributes):
    # Quarkus LangChain4j: "completion {model}" spans without an operation name, the finish reason as one string;
    # "langchain4j.tools.{name}" tool spans (gen_ai.* attributes in newer versions, none in older ones)
    def completion(span_id, start, end, tokens, finish):
        attrs = {
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.request.temperature": 0.2,
            "gen_ai.response.id": f"chatcmpl-{span_id}",
            "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
            "gen_ai.response.finish_reasons": finish,
            "gen_ai.usage.prompt_tokens": tokens[0],
            "gen_ai.usage.completion_tokens": tokens[1],
        }
        return span(span_id, "completion gpt-4o-mini", attrs, parent=1, start=start, end=end)

    tool_attrs = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.name": "get_status",
        "gen_ai.tool.type": "function",
    }
    spans = [
        span(1, "langchain4j.aiservices.SupportAgent.chat", {}, end=10),
        completion(2, 1, 3, (120, 20), "TOOL_EXECUTION"),
        span(3, "langchain4j.tools.get_status", tool_attrs if with_attributes else {}, parent=1, start=4, end=5),
        completion(4, 6, 9, (180, 30), "STOP"),
    ]
    run = check_run(write(tmp_path, spans), tool_text=None, arguments=None)
    first, second = run.events
    assert first.finish_reason == "TOOL_EXECUTION" and second.finish_reason == "STOP"
    assert first.request_model == "gpt-4o-mini" and first.model == "gpt-4o-mini-2024-07-18"
    assert first.response_id == "chatcmpl-2" and first.request_parameters == {"temperature": 0.2}
    assert run.end.outcome is Outcome.SUCCEEDED and run.end.tool_calls == 1


def test_a_quarkus_tool_failure_recorded_as_an_exception_event(tmp_path):
    chat = {"gen_ai.request.model": "m", "gen_ai.usage.prompt_tokens": 1, "gen_ai.usage.completion_tokens": 1}
    failure = [("exception", {"exception.type": "java.lang.IllegalStateException", "exception.message": "down"})]
    spans = [
        span(1, "langchain4j.aiservices.A.chat", {}, end=10),
        span(2, "completion m", chat, parent=1, start=1, end=2),
        span(3, "langchain4j.tools.get_status", {}, parent=1, start=3, end=4, events=failure),
        span(4, "completion m", chat, parent=1, start=5, end=6, events=failure),
    ]
    (run,) = import_otlp(write(tmp_path, spans)).runs
    assert [o.is_error for o in run.events[1].observations] == [True]
    assert run.events[1].error == "java.lang.IllegalStateException" and run.end.outcome is Outcome.FAILED


def test_content_in_span_events_jaeger_envelope_enum_status_and_string_finish_reasons(tmp_path):
    def chat(span_id, start, end, inp, out, finish, tokens, **kw):
        details = {"gen_ai.input.messages": json.dumps(inp), "gen_ai.output.messages": json.dumps(out)}
        attrs = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.response.finish_reasons": finish,
            "gen_ai.usage.input_tokens": tokens[0],
            "gen_ai.usage.output_tokens": tokens[1],
        }
        return span(
            span_id, "chat gpt-4o", attrs, parent=1, start=start, end=end,
            events=[("gen_ai.client.inference.operation.details", details)], **kw,
        )  # fmt: skip

    user = {"role": "user", "parts": [{"type": "text", "content": "Where is order 1?"}]}
    call = {"type": "tool_call", "id": "call_1", "name": "get_status", "arguments": {"id": "1"}}
    result = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1", "response": "in transit"}]}
    answer = {"role": "assistant", "parts": [{"type": "text", "content": "In transit."}]}
    spans = [
        span(1, "invoke_agent support", {"gen_ai.operation.name": "invoke_agent"}, end=10,
             status={"code": "STATUS_CODE_ERROR", "message": "cancelled by the user"}),
        chat(2, 1, 3, [user], [{"role": "assistant", "parts": [call]}], "tool_calls", (120, 20)),
        chat(4, 6, 9, [user, {"role": "assistant", "parts": [call]}, result], [answer], '["stop"]', (180, 30)),
    ]  # fmt: skip
    run = check_run(write(tmp_path, spans, envelope=True), tool_text="in transit")
    assert [e.finish_reason for e in run.events] == ["TOOL_EXECUTION", "STOP"]
    assert run.end.outcome is Outcome.FAILED and "cancelled by the user" in run.end.reason


def test_older_content_events(tmp_path):
    prompt = json.dumps([{"role": "user", "content": "Where is order 1?"}])
    completion = json.dumps([{"role": "assistant", "content": "In transit."}])
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 5}
    events = [
        ("gen_ai.content.prompt", {"gen_ai.prompt": prompt}),
        ("gen_ai.content.completion", {"gen_ai.completion": completion}),
    ]
    (run,) = import_otlp(write(tmp_path, [span(1, "chat m", attrs, events=events)])).runs
    assert run.start.task == "Where is order 1?" and run.events[0].text == "In transit."
