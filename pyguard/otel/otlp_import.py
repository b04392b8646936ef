"""OpenTelemetry GenAI spans (an OTLP JSON export) -> pyguard RunRecords, so ``replay``, ``calibrate``, ``check``
and ``tune`` read the telemetry a team already collects.

    runs = import_otlp("spans.jsonl").runs         # also: pyguard replay spans.jsonl (format detected)

Shapes. pyguard's own export and spans that follow the GenAI conventions are read as they are; OpenLLMetry,
OpenInference and Quarkus LangChain4j spans, content carried in span events and string finish reasons are first
read into that shape (:mod:`pyguard.otel.shapes` lists exactly what is read).

Runs. Each ``invoke_agent`` span is one run; the model calls (spans whose ``gen_ai.operation.name`` is ``chat``,
``text_completion`` or ``generate_content``) and tool calls (``execute_tool``) under it, at any depth, are its
iterations and tool calls (under a nested agent they belong to the nearest agent). Model calls under no agent span
form one run per trace. An agent span with no model call under it is skipped and counted.

Iterations, in start order: tokens from ``gen_ai.usage.input_tokens``/``output_tokens`` (or the older
``prompt_tokens``/``completion_tokens``), provider and model, latency from the span's times, finish reason, an
error from an ERROR status. Text and tool calls come from ``gen_ai.output.messages`` (or OpenLLMetry's indexed
``gen_ai.completion.N.*``); without content, tool calls come from the ``execute_tool`` spans between this model
call and the next. Observations (what the call's request brought that was new) are the input messages after the
last assistant message (all of them when the instrumentation records only the new ones, as pyguard does), or the
results of the previous call's ``execute_tool`` spans (``gen_ai.tool.call.result``).

Outcome. Spans exported by pyguard carry ``pyguard.outcome`` and the rest of the footer: the run keeps them. Other
runs are read like recordings: ``failed`` when the agent span (or the last model call) has an ERROR status,
``expired`` and censored when the last model call still asked for tools, else ``succeeded``; their footer's
``evidence.imported_from`` is ``"otel"`` so ``pyguard check`` replays them through the policy.
"""

from __future__ import annotations

import json
import logging
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pyguard.base.ending import Causes, footer, settle
from pyguard.base.errors import InputError
from pyguard.base.events import IterationEvent, Observation, Outcome, RunEnd, RunRecord, RunStart, ToolCall
from pyguard.otel import semconv as sc
from pyguard.otel.otlp_json import Span, read_spans
from pyguard.otel.shapes import json_list, normalize

__all__: list[str] = []

log = logging.getLogger(__name__)
_FINISH = {
    "stop": "STOP",
    "length": "LENGTH",
    "tool_call": "TOOL_EXECUTION",
    "tool_calls": "TOOL_EXECUTION",
    "tool_execution": "TOOL_EXECUTION",
    "function_call": "TOOL_EXECUTION",
    "content_filter": "CONTENT_FILTER",
}


@dataclass
class OtlpImport:
    runs: list[RunRecord]
    skipped: dict[str, int] = field(default_factory=dict)
    """What could not become part of a run, by reason (counted, never silently dropped)."""


def _int(v: Any) -> int | None:
    if isinstance(v, bool) or v is None:
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _text(v: Any) -> str:
    if v is None:
        return ""
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def _messages(span: Span, key: str) -> list[dict[str, Any]] | None:
    return json_list(span.attributes.get(key))


def _observations(messages: list[dict[str, Any]]) -> list[Observation]:
    last_assistant = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    out = []
    for m in messages[last_assistant + 1 :]:
        role = m.get("role")
        parts = [p for p in m.get("parts") or () if isinstance(p, dict)]
        if role == "tool" or any(p.get("type") == "tool_call_response" for p in parts):
            for p in parts:
                if p.get("type") == "tool_call_response":
                    out.append(
                        Observation(
                            kind="tool",
                            tool_call_id=_id(p.get("id")),
                            tool_name=m.get("name"),
                            text=_text(p.get("response")),
                            is_error=bool(m.get("is_error", False)),
                        )
                    )
        elif role in ("user", "system", "developer"):
            text = "\n".join(_text(p.get("content")) for p in parts if p.get("type") == "text")
            out.append(Observation(kind="system" if role == "system" or role == "developer" else "user", text=text))
    return out


def _id(v: Any) -> str | None:
    return None if v is None or v == "" else str(v)


def _arguments(v: Any) -> str:
    if v is None:
        return ""
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def _output(messages: list[dict[str, Any]]) -> tuple[str | None, list[ToolCall]]:
    texts: list[str] = []
    calls: list[ToolCall] = []
    for m in messages:
        for p in m.get("parts") or ():
            if not isinstance(p, dict):
                continue
            if p.get("type") == "text":
                texts.append(_text(p.get("content")))
            elif p.get("type") == "tool_call" and p.get("name"):
                calls.append(
                    ToolCall(id=_id(p.get("id")), name=str(p["name"]), arguments=_arguments(p.get("arguments")))
                )
    return ("\n".join(texts) if texts else None), calls


def _tool_call_of(span: Span) -> ToolCall | None:
    name = span.attributes.get(sc.TOOL_NAME)
    if not isinstance(name, str) or not name:
        return None
    return ToolCall(
        id=_id(span.attributes.get(sc.TOOL_CALL_ID)),
        name=name,
        arguments=_arguments(span.attributes.get(sc.TOOL_CALL_ARGUMENTS)),
    )


def _tool_result_of(span: Span) -> Observation:
    a = span.attributes
    return Observation(
        kind="tool",
        tool_call_id=_id(a.get(sc.TOOL_CALL_ID)),
        tool_name=a.get(sc.TOOL_NAME),
        text=_text(a.get(sc.TOOL_CALL_RESULT)),
        is_error=span.status_code == 2,
    )


def _event(span: Span, index: int, run_id: str, tools: list[Span], prev_tools: list[Span]) -> IterationEvent:
    """One model call; ``tools`` are the execute_tool spans that ran after it, ``prev_tools`` those before it."""
    a = span.attributes
    ours = sc.PG_ITERATION in a
    out_messages = _messages(span, sc.OUTPUT_MESSAGES)
    in_messages = _messages(span, sc.INPUT_MESSAGES)
    text, calls = _output(out_messages) if out_messages is not None else (None, [])
    if out_messages is None:
        names, ids = a.get(sc.PG_TOOL_CALL_NAMES, [] if ours else None), a.get(sc.PG_TOOL_CALL_IDS)
        if isinstance(names, list):
            ids = ids if isinstance(ids, list) and len(ids) == len(names) else [""] * len(names)
            calls = [ToolCall(id=_id(i), name=str(n)) for n, i in zip(names, ids, strict=False)]
        else:
            calls = [c for c in (_tool_call_of(t) for t in tools) if c is not None]
    if in_messages is not None:
        observations = _observations(in_messages)
    else:
        observations = [_tool_result_of(t) for t in prev_tools if _tool_call_of(t) is not None]
    inp = _int(a.get(sc.USAGE_INPUT_TOKENS, a.get(sc.USAGE_PROMPT_TOKENS)))
    out = _int(a.get(sc.USAGE_OUTPUT_TOKENS, a.get(sc.USAGE_COMPLETION_TOKENS)))
    total = _int(a.get(sc.PG_TOTAL_TOKENS, a.get("llm.usage.total_tokens")))
    if total is None and not ours and inp is not None and out is not None:
        total = inp + out
    reasons = a.get(sc.RESPONSE_FINISH_REASONS)
    finish = a.get(sc.PG_FINISH_REASON)
    if finish is None and not ours and isinstance(reasons, list) and reasons:
        finish = _FINISH.get(str(reasons[0]).lower(), "OTHER")
    error = None
    if span.status_code == 2:
        error = span.status_message or str(a.get(sc.ERROR_TYPE) or "error")
    if ours:
        latency, stamp = a.get(sc.PG_LATENCY_MS), a.get(sc.PG_TIMESTAMP_MS)
    else:
        latency, stamp = max(0.0, (span.end_ns - span.start_ns) / 1e6), span.end_ns / 1e6
    return IterationEvent(
        run_id=run_id,
        index=index,
        provider=a.get(sc.PG_PROVIDER, a.get(sc.PROVIDER_NAME, a.get(sc.SYSTEM))),
        model=a.get(sc.RESPONSE_MODEL, a.get(sc.REQUEST_MODEL)),
        request_model=a.get(sc.REQUEST_MODEL) if not ours or sc.RESPONSE_MODEL in a else None,
        response_model=a.get(sc.RESPONSE_MODEL),
        response_id=_str(a.get(sc.RESPONSE_ID)),
        request_parameters=_parameters(a),
        input_tokens=inp,
        output_tokens=out,
        total_tokens=total,
        latency_ms=latency,
        finish_reason=finish,
        tool_calls=tuple(calls),
        observations=tuple(observations),
        text=text,
        error=error,
        task_type=a.get(sc.PG_TASK_TYPE) if ours else None,
        timestamp_ms=stamp,
    )


def _str(v: Any) -> str | None:
    return None if v is None else str(v)


def _parameters(a: dict[str, Any]) -> dict[str, float | int | list[str]] | None:
    out: dict[str, float | int | list[str]] = {}
    for key, attr in sc.REQUEST_PARAMETERS.items():
        v = a.get(attr)
        if isinstance(v, bool) or v is None:
            continue
        if isinstance(v, int | float):
            out[key] = v
        elif isinstance(v, list):
            out[key] = [str(x) for x in v]
    return out or None


def _end(agent: Span | None, events: list[IterationEvent], run_id: str, source: str, trace_id: str) -> RunEnd | None:
    a = agent.attributes if agent is not None else {}
    where = {"source": source, "otel_trace_id": trace_id}
    if sc.PG_RUN_ID in a:  # exported by pyguard: the footer is on the run span (absent for a run with no end)
        if sc.PG_OUTCOME not in a:
            return None
        evidence: dict[str, Any] = {**where, "reflections": _int(a.get(sc.PG_REFLECTIONS)) or 0}
        if a.get(sc.PG_STOP_RULE):
            evidence["rule"] = a[sc.PG_STOP_RULE]
        return RunEnd(
            run_id=run_id,
            outcome=Outcome(a[sc.PG_OUTCOME]),
            reason=str(a.get(sc.PG_OUTCOME_REASON) or ""),
            answer=a.get(sc.PG_ANSWER),
            iterations=_int(a.get(sc.PG_ITERATIONS)) or len(events),
            tool_calls=_int(a.get(sc.PG_TOOL_CALLS)) or 0,
            input_tokens=_int(a.get(sc.PG_INPUT_TOKENS, a.get(sc.USAGE_INPUT_TOKENS))),  # gen_ai.* before 0.2
            output_tokens=_int(a.get(sc.PG_OUTPUT_TOKENS, a.get(sc.USAGE_OUTPUT_TOKENS))),
            total_tokens=_int(a.get(sc.PG_TOTAL_TOKENS)),
            cost=a.get(sc.PG_COST),
            wall_ms=a.get(sc.PG_WALL_MS),
            evidence=evidence,
            success_label=a.get(sc.PG_SUCCESS_LABEL),
            censored=bool(a.get(sc.PG_CENSORED, False)),
        )
    last = events[-1]
    failed = None
    if agent is not None and agent.status_code == 2:
        failed = f"the agent span ended with an error: {agent.status_message or 'error'}"
    elif last.error is not None:
        failed = f"the last model call failed: {last.error}"
    cut_off = bool(last.tool_calls) and failed is None  # inferred only when nothing failed
    settled = settle(
        Causes(
            failed=failed,
            expired="the last model call still asked for tools (cut off)" if cut_off else None,
            ended="the model answered (no outcome label was recorded)",
        )
    )
    return footer(
        run_id,
        events,
        settled,
        answer=last.text if last.is_final else None,
        wall_ms=(agent.end_ns - agent.start_ns) / 1e6 if agent is not None else None,
        evidence={"imported_from": "otel", **where},
        censored=bool(last.tool_calls) and last.error is None,
    )


def spans_to_runs(spans: Sequence[Span], source: str = "<spans>") -> OtlpImport:
    """Group spans into runs (see the module docstring); other emitters' shapes are read first
    (:func:`pyguard.otel.shapes.normalize`)."""
    spans = [normalize(s) for s in spans]
    by_id = {(s.trace_id, s.span_id): s for s in spans}
    skipped: dict[str, int] = defaultdict(int)

    def owner(span: Span) -> tuple[str, str | None]:
        seen = 0
        p = span.parent_span_id
        while p is not None and seen < 10_000:
            parent = by_id.get((span.trace_id, p))
            if parent is None:
                break
            if parent.operation == sc.OP_INVOKE_AGENT:
                return span.trace_id, parent.span_id
            p, seen = parent.parent_span_id, seen + 1
        return span.trace_id, None

    groups: dict[tuple[str, str | None], dict[str, list[Span]]] = defaultdict(lambda: {"chat": [], "tool": []})
    agents = {(s.trace_id, s.span_id): s for s in spans if s.operation == sc.OP_INVOKE_AGENT}
    for key in agents:
        groups[key]  # every agent span is a run, even with nothing under it (then skipped below)
    for s in spans:
        op = s.operation
        if op in sc.LEGACY_GUARDRAIL_OPERATIONS:
            continue  # pyguard's guardrail spans: the decisions, already on the model calls' spans
        if op in sc.MODEL_CALL_OPERATIONS:
            groups[owner(s)]["chat"].append(s)
        elif op == sc.OP_EXECUTE_TOOL:
            groups[owner(s)]["tool"].append(s)
        elif op != sc.OP_INVOKE_AGENT:
            skipped["spans that are not GenAI agent, model or tool spans"] += 1
    runs: list[RunRecord] = []
    for (trace_id, agent_id), members in groups.items():
        agent = agents.get((trace_id, agent_id)) if agent_id is not None else None
        chats = sorted(
            members["chat"], key=lambda s: (s.start_ns, _int(s.attributes.get(sc.PG_ITERATION)) or 0, s.order)
        )
        if not chats:
            skipped["agent spans with no model call under them"] += 1
            skipped["tool spans of such agents"] += len(members["tool"])
            continue
        tools = sorted(members["tool"], key=lambda s: (s.start_ns, s.order))
        a = agent.attributes if agent is not None else {}
        ours = sc.PG_RUN_ID in a
        run_id = str(a[sc.PG_RUN_ID]) if ours else (f"{trace_id}-{agent_id}" if agent_id else trace_id)
        bounds = [c.start_ns for c in chats] + [float("inf")]
        windows = [[t for t in tools if bounds[k] <= t.start_ns < bounds[k + 1]] for k in range(len(chats))]
        events: list[IterationEvent] = []
        for k, c in enumerate(chats):
            before = windows[k - 1] if k else []
            if events and events[-1].tool_calls and all(call.id for call in events[-1].tool_calls):
                by_call = {t.attributes.get(sc.TOOL_CALL_ID): t for t in tools}  # match by id when every call has one
                before = [by_call[call.id] for call in events[-1].tool_calls if call.id in by_call]
            events.append(_event(c, k + 1, run_id, windows[k], before))
        task = a.get(sc.PG_TASK) if ours else next((o.text for o in events[0].observations if o.kind == "user"), None)
        start = RunStart(
            run_id=run_id,
            task_type=a.get(sc.PG_TASK_TYPE) if ours else a.get(sc.AGENT_NAME),
            task=task,
            agent_style=a.get(sc.PG_AGENT_STYLE),
            started_at_ms=a.get(sc.PG_STARTED_AT_MS) if ours else (agent or chats[0]).start_ns / 1e6,
        )
        runs.append(RunRecord(start=start, events=events, end=_end(agent, events, run_id, source, trace_id)))
    return OtlpImport(runs=runs, skipped=dict(skipped))


def import_otlp(path: str | os.PathLike[str]) -> OtlpImport:
    """The runs in an OTLP JSON file of GenAI spans. InputError when it holds no model call at all."""
    spans = read_spans(path)
    result = spans_to_runs(spans, str(path))
    if not result.runs:
        raise InputError(
            f"{str(path)!r} holds {len(spans)} span(s) but no GenAI model call (no span with "
            f"gen_ai.operation.name in {', '.join(sc.MODEL_CALL_OPERATIONS)}); nothing to import"
        )
    for reason, count in result.skipped.items():
        if count:
            log.warning("%s: skipped %d %s", path, count, reason)
    return result
