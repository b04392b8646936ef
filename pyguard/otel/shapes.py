"""Other emitters' GenAI spans, read as the GenAI conventions' shape before they are grouped into runs.

:func:`normalize` fills the ``gen_ai.*`` attributes the importer reads from what each emitter writes (attributes the
span already has are kept), so one reader serves them all:

- **OpenLLMetry** (Traceloop): model calls marked by ``llm.request.type`` (``chat``, ``completion``) and no
  ``gen_ai.operation.name``; ``traceloop.span.kind`` ``agent`` and ``tool`` spans, the tool's name in
  ``traceloop.entity.name`` and its arguments and result in ``traceloop.entity.input`` / ``output`` (content).
  Messages flattened as ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` (tool calls as ``tool_calls.M.id`` /
  ``name`` / ``arguments``); ``llm.usage.total_tokens`` is read by the importer.
- **OpenInference** (Arize Phoenix's instrumentations): ``openinference.span.kind`` ``LLM``, ``TOOL``, ``AGENT``;
  ``llm.model_name``, ``llm.provider`` / ``llm.system``, ``llm.token_count.prompt`` / ``completion`` / ``total``;
  messages flattened as ``llm.input_messages.N.message.*`` and ``llm.output_messages.N.message.*`` (tool calls as
  ``message.tool_calls.M.tool_call.id`` / ``function.name`` / ``function.arguments``, a tool result as a ``tool``
  message with ``message.tool_call_id``); a tool span's ``tool.name``, ``input.value`` (arguments) and
  ``output.value`` (result).
- **Quarkus LangChain4j**: ``completion {model}`` model-call spans with no operation name (the request model, the
  deprecated ``prompt_tokens`` / ``completion_tokens``, the finish reason as one string such as ``STOP``) and
  ``langchain4j.tools.{name}`` tool spans (older versions set no attribute at all: the tool's name is the span's);
  ``langchain4j.aiservices.{Service}.{method}`` spans are the agent. A failure is recorded as an ``exception`` span
  event without an ERROR status: such a span is read as failed.
- **Content in span events**: the conventions' ``gen_ai.client.inference.operation.details`` event (its
  ``gen_ai.input.messages`` / ``gen_ai.output.messages``) and the older ``gen_ai.content.prompt`` /
  ``gen_ai.content.completion`` events (``gen_ai.prompt`` / ``gen_ai.completion``, JSON lists of role/content).
- ``gen_ai.response.finish_reasons`` given as one string (``"stop"``, or a JSON array in a string) instead of an
  array.

Anything else (other span kinds, other event names) is not read.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections import defaultdict
from typing import Any

from pyguard.base.safe_reader import loads
from pyguard.otel import semconv as sc
from pyguard.otel.otlp_json import Span

__all__: list[str] = []

_OI_KIND = {"LLM": sc.OP_CHAT, "TOOL": sc.OP_EXECUTE_TOOL, "AGENT": sc.OP_INVOKE_AGENT}
_TRACELOOP_KIND = {"tool": sc.OP_EXECUTE_TOOL, "agent": sc.OP_INVOKE_AGENT}
_LLM_REQUEST_TYPE = {"chat": sc.OP_CHAT, "completion": "text_completion"}
_MESSAGES = {  # (input, output) indexed message attributes of OpenInference and OpenLLMetry, and their tool calls
    "openinference": (
        re.compile(r"llm\.input_messages\.(\d+)\.message\.(.+)"),
        re.compile(r"llm\.output_messages\.(\d+)\.message\.(.+)"),
        re.compile(r"tool_calls\.(\d+)\.tool_call\.(id|function\.name|function\.arguments)"),
    ),
    "openllmetry": (
        re.compile(r"gen_ai\.prompt\.(\d+)\.(.+)"),
        re.compile(r"gen_ai\.completion\.(\d+)\.(.+)"),
        re.compile(r"tool_calls\.(\d+)\.(id|name|arguments)"),
    ),
}
_QUARKUS_TOOL = "langchain4j.tools."
_QUARKUS_AGENT = "langchain4j.aiservices."


def _set(a: dict[str, Any], key: str, value: Any) -> None:
    if value is not None and key not in a:
        a[key] = value


def _operation(span: Span, a: dict[str, Any]) -> str | None:
    if isinstance(a.get(sc.OPERATION_NAME), str):
        return None
    for found in (
        _OI_KIND.get(str(a.get(sc.OPENINFERENCE_SPAN_KIND, "")).upper()),
        _TRACELOOP_KIND.get(str(a.get("traceloop.span.kind", "")).lower()),
        _LLM_REQUEST_TYPE.get(str(a.get("llm.request.type", "")).lower()),
    ):
        if found is not None:
            return found
    if span.name.startswith(_QUARKUS_TOOL):
        return sc.OP_EXECUTE_TOOL
    if span.name.startswith(_QUARKUS_AGENT):
        return sc.OP_INVOKE_AGENT
    if span.name.startswith("completion ") and sc.REQUEST_MODEL in a:
        return sc.OP_CHAT
    return None


def _indexed_messages(a: dict[str, Any], pattern: re.Pattern[str], calls: re.Pattern[str], output: bool) -> Any:
    """Messages flattened into indexed attributes (``pattern`` captures the index and the rest of the key) as GenAI
    messages; ``calls`` captures a tool call's index and its ``id``/``name``/``arguments`` key."""
    rows: dict[int, dict[str, Any]] = defaultdict(dict)
    for key, value in a.items():
        m = pattern.fullmatch(key)
        if m:
            rows[int(m.group(1))][m.group(2)] = value
    if not rows:
        return None
    out = []
    for _, row in sorted(rows.items()):
        role = str(row.get("role", "assistant" if output else "user"))
        parts: list[dict[str, Any]] = []
        if role == "tool":
            parts.append({"type": "tool_call_response", "id": row.get("tool_call_id"), "response": row.get("content")})
        elif row.get("content") is not None:
            parts.append({"type": "text", "content": row.get("content")})
        found: dict[int, dict[str, Any]] = defaultdict(dict)
        for key, value in row.items():
            cm = calls.fullmatch(key)
            if cm:
                found[int(cm.group(1))][cm.group(2).split(".")[-1]] = value
        parts.extend({"type": "tool_call", **call} for _, call in sorted(found.items()))
        message: dict[str, Any] = {"role": role, "parts": parts}
        if row.get("name") is not None and role == "tool":
            message["name"] = row["name"]
        if row.get("finish_reason") is not None:
            message["finish_reason"] = row["finish_reason"]
        out.append(message)
    return json.dumps(out)


def json_list(v: Any) -> list[dict[str, Any]] | None:
    """The objects of a JSON array (given as a string or a list); None when it is not one."""
    if isinstance(v, str):
        try:
            v = loads(v, source="<span attribute>")
        except ValueError:  # not JSON, or refused by a limit: no messages in it
            return None
    return [m for m in v if isinstance(m, dict)] if isinstance(v, list) else None


def _role_content(value: Any) -> list[dict[str, Any]] | None:
    """``[{"role": ..., "content": ...}]`` (a JSON string or a list) as GenAI messages."""
    messages = json_list(value)
    if messages is None:
        return None
    out = []
    for m in messages:
        content = m.get("content")
        parts = [{"type": "text", "content": content}] if content is not None else []
        out.append({"role": str(m.get("role", "user")), "parts": parts})
    return out


def _events(span: Span, a: dict[str, Any]) -> None:
    for e in span.events:
        if e.name == "gen_ai.client.inference.operation.details":
            _set(a, sc.INPUT_MESSAGES, e.attributes.get(sc.INPUT_MESSAGES))
            _set(a, sc.OUTPUT_MESSAGES, e.attributes.get(sc.OUTPUT_MESSAGES))
        elif e.name == "gen_ai.content.prompt":
            found = _role_content(e.attributes.get("gen_ai.prompt"))
            _set(a, sc.INPUT_MESSAGES, json.dumps(found) if found is not None else None)
        elif e.name == "gen_ai.content.completion":
            found = _role_content(e.attributes.get("gen_ai.completion"))
            _set(a, sc.OUTPUT_MESSAGES, json.dumps(found) if found is not None else None)


def _finish_reasons(a: dict[str, Any]) -> None:
    reasons = a.get(sc.RESPONSE_FINISH_REASONS)
    if isinstance(reasons, str):
        try:
            parsed = loads(reasons, source="<span attribute>")
        except ValueError:  # one plain reason ("stop"), not JSON
            parsed = None
        a[sc.RESPONSE_FINISH_REASONS] = [str(r) for r in parsed] if isinstance(parsed, list) else [reasons]


def normalize(span: Span) -> Span:
    """``span`` with the ``gen_ai.*`` attributes its emitter's shape implies (see the module docstring)."""
    a = dict(span.attributes)
    op = _operation(span, a)
    if op is not None:
        a[sc.OPERATION_NAME] = op
    op = a.get(sc.OPERATION_NAME)
    if op in sc.MODEL_CALL_OPERATIONS:
        model = a.get("llm.model_name")
        _set(a, sc.REQUEST_MODEL, model)
        _set(a, sc.PROVIDER_NAME, a.get("llm.provider", a.get("llm.system")))
        _set(a, sc.USAGE_INPUT_TOKENS, a.get("llm.token_count.prompt"))
        _set(a, sc.USAGE_OUTPUT_TOKENS, a.get("llm.token_count.completion"))
        _set(a, "llm.usage.total_tokens", a.get("llm.token_count.total"))
        for inputs, outputs, calls in _MESSAGES.values():
            _set(a, sc.INPUT_MESSAGES, _indexed_messages(a, inputs, calls, output=False))
            _set(a, sc.OUTPUT_MESSAGES, _indexed_messages(a, outputs, calls, output=True))
        _events(span, a)
        _finish_reasons(a)
    elif op == sc.OP_EXECUTE_TOOL:
        name = a.get("tool.name", a.get("traceloop.entity.name"))
        if name is None and span.name.startswith(_QUARKUS_TOOL):
            name = span.name[len(_QUARKUS_TOOL) :]
        _set(a, sc.TOOL_NAME, name)
        _set(a, sc.TOOL_CALL_ID, a.get("tool_call.id"))
        _set(a, sc.TOOL_CALL_ARGUMENTS, a.get("input.value", a.get("traceloop.entity.input")))
        _set(a, sc.TOOL_CALL_RESULT, a.get("output.value", a.get("traceloop.entity.output")))
    elif op == sc.OP_INVOKE_AGENT:
        _set(a, sc.AGENT_NAME, a.get("agent.name", a.get("traceloop.entity.name")))
    status, message = span.status_code, span.status_message
    if status == 0 and op is not None:
        exc = next((e for e in span.events if e.name == "exception"), None)
        if exc is not None:  # recorded as an exception event only (Quarkus LangChain4j)
            status = 2
            message = str(exc.attributes.get("exception.type") or "exception")
    return dataclasses.replace(span, attributes=a, status_code=status, status_message=message)
