"""A guarded run as OpenTelemetry GenAI spans: :class:`RunSpans` builds them as the run goes (the Guard calls it
after each model call, through :class:`pyguard.otel.telemetry.GuardTelemetry`) or from a recorded run.

One run: an ``invoke_agent`` span (INTERNAL) with a ``chat`` span (CLIENT) per model call and an ``execute_tool``
span (INTERNAL) per tool call as children. ``gen_ai.*`` attributes follow the GenAI semantic conventions (provider,
models, ``gen_ai.usage.*``, finish reasons, tool names and call ids); the guard's decision after each model call is
on its chat span (``pyguard.decision.*``, ``pyguard.gain``, ``pyguard.stall.flags``; a ``pyguard.reflection`` or
``pyguard.stop`` span event when it reflects or stops), the run's outcome on the run span (``pyguard.outcome``,
``pyguard.stop.rule``, ...; with content capture the task and the answer as OpenInference's ``input.value`` and
``output.value``, which Arize Phoenix's trace list shows). Each span also carries ``openinference.span.kind`` (AGENT,
LLM, TOOL), so Arize Phoenix shows the tree with its kinds; a reflection or a stop is also a ``run_guardrail`` span
(:mod:`pyguard.otel.guardrail`). Message content (``gen_ai.input.messages``, ``gen_ai.output.messages``, tool
arguments and results) is recorded only with ``capture_content=True`` or the environment variable
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``, as OpenTelemetry's GenAI instrumentations do; an export
meant for ``pyguard replay`` needs it (replay measures what each tool result brought).

Parent, with nothing to configure: the span the Java application has active on the agent's thread at a model call
(the sensor reads it: ``IterationEvent.trace_context``); else the context the run started in
(:meth:`pyguard.otel.GuardTelemetry.start_run`'s ``fallback``): the active Python span, or the Java span active on
the thread that called ``guard.run`` / ``run_scenario`` / ``chat()`` (the agent may run on a thread pyguard starts,
where that span is not current). ``parent`` (a W3C ``traceparent`` string, an OpenTelemetry ``Context``, or a
callable returning either at the run's first model call) overrides both; it is rarely needed.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pyguard.base._extras import require
from pyguard.base.decisions import Action, Decision
from pyguard.base.events import IterationEvent, Observation, Outcome, RunEnd, RunStart
from pyguard.otel import semconv as sc
from pyguard.otel.guardrail import blocked_call_spans, guardrail_span, is_intervention
from pyguard.otel.messages import error_type as _error_type
from pyguard.otel.messages import gain as _gain
from pyguard.otel.messages import input_messages, output_messages
from pyguard.otel.messages import request_model as _request_model
from pyguard.otel.metrics import ClientMetrics
from pyguard.otel.providers import provider_name

__all__: list[str] = []

log = logging.getLogger(__name__)
_TRACER_NAME = "pyguard"


def trace_api() -> Any:
    """The ``opentelemetry.trace`` module (a :class:`~pyguard.base.errors.MissingExtraError` naming the ``otel`` extra
    when OpenTelemetry is not installed)."""
    return require("opentelemetry.trace", extra="otel", feature="OpenTelemetry export")


def _ns(ms: float) -> int:
    return int(round(ms * 1_000_000))


def _clean(attrs: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in attrs.items() if v is not None}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class RunSpans:
    """The spans of one run, built as the run goes: :meth:`iteration` after each model call (with the guard's
    decision), :meth:`end` once. Errors inside OpenTelemetry are logged, never raised into the run."""

    def __init__(
        self,
        tracer: Any,
        start: RunStart,
        *,
        agent_name: str | None = None,
        capture_content: bool = False,
        parent: Any = None,
        fallback: Any = None,
        clock_ms: Callable[[], float] | None = None,
        live: bool = True,
        conversation_id: str | None = None,
        decisions_only: bool = False,
        metrics: ClientMetrics | None = None,
    ) -> None:
        self._trace = trace_api()
        self.tracer = tracer
        self.start = start
        self.capture = capture_content
        self.agent_name = agent_name or start.task_type or "agent"
        self._parent = parent
        self._fallback = fallback
        self._live = live
        """False for a recorded run: the run span ends at its last recorded time, not now."""
        self._clock_ms = clock_ms or (lambda: time.time() * 1000.0)
        self._run_span: Any = None
        self._pending_tools: list[tuple[Any, float]] = []  # (tool call, end of the chat that asked for it) in order
        self._last_end_ms: float | None = None
        self.reflections = 0
        self.conversation_id = conversation_id
        self.decisions_only = decisions_only
        """Only the guard's interventions (run_guardrail spans), under the application's own spans: no run, chat
        or tool spans and no usage, for applications whose instrumentation emits those already."""
        self._metrics = metrics if live and not decisions_only else None

    def _text(self, text: str | None, without: str | None = None) -> str | None:
        """``text`` when content is captured, else ``without``: reasons, reflections and error messages may quote
        the task, the model or a tool, so they leave the process only with content capture."""
        return text if self.capture else without

    # -- lifecycle -------------------------------------------------------------------------------------------------

    def _context(self, event: IterationEvent | None = None) -> Any:
        parent = self._parent() if callable(self._parent) else self._parent
        if (parent is None or parent == "") and event is not None:
            parent = event.trace_context  # the Java app's span on the agent's thread at this call
        if parent is None or parent == "":
            return self._fallback
        if isinstance(parent, str):
            propagate = require(
                "opentelemetry.trace.propagation.tracecontext", extra="otel", feature="OpenTelemetry export"
            )
            return propagate.TraceContextTextMapPropagator().extract({"traceparent": parent})
        return parent

    def _ensure_run_span(self, at_ms: float, event: IterationEvent | None = None) -> Any:
        if self._run_span is None:
            s = self.start
            started = s.started_at_ms if s.started_at_ms is not None else at_ms
            attrs = _clean(
                {
                    sc.OPERATION_NAME: sc.OP_INVOKE_AGENT,
                    sc.OPENINFERENCE_SPAN_KIND: "AGENT",
                    sc.AGENT_NAME: self.agent_name,
                    sc.PROVIDER_NAME: provider_name(event.provider) if event is not None else None,
                    sc.REQUEST_MODEL: _request_model(event) if event is not None else None,
                    sc.CONVERSATION_ID: self.conversation_id,
                    sc.PG_RUN_ID: s.run_id,
                    sc.PG_TASK_TYPE: s.task_type,
                    sc.PG_AGENT_STYLE: s.agent_style,
                    sc.PG_STARTED_AT_MS: s.started_at_ms,
                    sc.PG_TASK: s.task if self.capture else None,
                    sc.OPENINFERENCE_INPUT: s.task if self.capture else None,  # Phoenix's trace list: the input
                }
            )
            self._run_span = self.tracer.start_span(
                f"{sc.OP_INVOKE_AGENT} {self.agent_name}",
                context=self._context(event),
                kind=self._trace.SpanKind.INTERNAL,
                attributes=attrs,
                start_time=_ns(started),
            )
            self._last_end_ms = started
        return self._run_span

    def iteration(self, event: IterationEvent, decision: Decision | None = None) -> None:
        """One model call (and, when given, the guard's decision after it)."""
        try:
            self._iteration(event, decision)
        except Exception:  # telemetry must never break a run
            log.warning(
                "pyguard: could not record the spans of model call %s of run %r",
                event.index,
                self.start.run_id,
                exc_info=True,
            )

    def results(self, index: int, decision: Decision) -> None:
        """A decision on call ``index``'s tool results before the next call (``judge_results_early``) that is not a
        plain continue: a guardrail span (the call's chat span, ended already, keeps the one on its response)."""
        try:
            self.reflections += decision.action is Action.REFLECT and not self.decisions_only
            if is_intervention(decision):
                run = None if self.decisions_only else self._run_span
                ctx = self._context() if run is None else self._trace.set_span_in_context(run)
                self._guardrail(ctx, decision, index, self._clock_ms())
        except Exception:  # telemetry must never break a run
            log.warning("pyguard: could not record a decision of run %r", self.start.run_id, exc_info=True)

    def end(self, end: RunEnd | None) -> None:
        """The run's footer (None for a run with no footer: the run span ends with no outcome)."""
        try:
            self._end(end)
        except Exception:
            log.warning("pyguard: could not record the end of run %r", self.start.run_id, exc_info=True)

    # -- spans -----------------------------------------------------------------------------------------------------

    def _times(self, event: IterationEvent) -> tuple[float, float]:
        end = event.timestamp_ms if event.timestamp_ms is not None else self._clock_ms()
        if event.timestamp_ms is None and event.latency_ms is None and self._last_end_ms is not None:
            end = max(end, self._last_end_ms)
        begin = end - (event.latency_ms or 0.0)
        return begin, end

    def _iteration(self, event: IterationEvent, decision: Decision | None) -> None:
        begin, finish = self._times(event)
        if self.decisions_only:
            blocked_call_spans(self.tracer, self._trace.SpanKind.INTERNAL, self._context(event), event, _ns(begin))
            if decision is not None and is_intervention(decision):
                self._guardrail(self._context(event), decision, event.index, finish)
            self._last_end_ms = finish
            return
        run_span = self._ensure_run_span(begin, event)
        ctx = self._trace.set_span_in_context(run_span)
        self._flush_tools(event.observations, until_ms=begin, ctx=ctx)
        blocked_call_spans(self.tracer, self._trace.SpanKind.INTERNAL, ctx, event, _ns(begin))
        model = _request_model(event)
        call = _clean(
            {
                sc.OPERATION_NAME: sc.OP_CHAT,
                sc.PROVIDER_NAME: provider_name(event.provider),
                sc.REQUEST_MODEL: model,
                sc.RESPONSE_MODEL: event.response_model,
            }
        )
        attrs = _clean(
            {
                **call,
                sc.OPENINFERENCE_SPAN_KIND: "LLM",
                sc.PG_PROVIDER: event.provider if event.provider != call.get(sc.PROVIDER_NAME) else None,
                sc.RESPONSE_ID: event.response_id,
                **{
                    sc.REQUEST_PARAMETERS[k]: v
                    for k, v in (event.request_parameters or {}).items()
                    if k in sc.REQUEST_PARAMETERS
                },
                sc.USAGE_INPUT_TOKENS: event.input_tokens,
                sc.USAGE_OUTPUT_TOKENS: event.output_tokens,
                sc.PG_TOTAL_TOKENS: event.total_tokens,
                sc.RESPONSE_FINISH_REASONS: [output_messages(event)[0]["finish_reason"]],
                sc.PG_FINISH_REASON: event.finish_reason,
                sc.PG_ITERATION: event.index,
                sc.PG_TASK_TYPE: event.task_type,
                sc.PG_TIMESTAMP_MS: event.timestamp_ms,
                sc.PG_LATENCY_MS: event.latency_ms,
                sc.PG_TOOL_CALL_NAMES: [c.name for c in event.tool_calls] or None,
                sc.PG_TOOL_CALL_IDS: [c.id or "" for c in event.tool_calls] or None,
            }
        )
        if self.capture:
            attrs[sc.INPUT_MESSAGES] = _dumps(input_messages(event.observations))
            attrs[sc.OUTPUT_MESSAGES] = _dumps(output_messages(event))
        span = self.tracer.start_span(
            f"{sc.OP_CHAT} {model or event.model}" if model or event.model else sc.OP_CHAT,
            context=ctx,
            kind=self._trace.SpanKind.CLIENT,
            attributes=attrs,
            start_time=_ns(begin),
        )
        if event.error is not None:
            error_type = _error_type(event.error)
            call[sc.ERROR_TYPE] = error_type
            span.set_attribute(sc.ERROR_TYPE, error_type)
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, self._text(event.error, error_type)))
        if decision is not None:
            self._decision(span, decision, finish)
        span.end(end_time=_ns(finish))
        if decision is not None and is_intervention(decision):
            self._guardrail(ctx, decision, event.index, finish)
        if self._metrics is not None:
            self._metrics.record(event, call)
        self._last_end_ms = finish
        self._pending_tools = [(call, finish) for call in event.tool_calls]

    def _decision(self, span: Any, d: Decision, at_ms: float) -> None:
        flags = [f.get("rule") for f in d.evidence.get("flags", ()) if isinstance(f, dict) and f.get("rule")]
        span.set_attributes(
            _clean(
                {
                    sc.PG_ACTION: d.action.value,
                    sc.PG_RULE: d.rule,
                    sc.PG_REASON: self._text(d.reason or None),
                    sc.PG_GAIN: _gain(d),
                    sc.PG_BUDGET: d.budget,
                    sc.PG_STALL_FLAGS: flags or None,
                }
            )
        )
        if d.action is Action.REFLECT:
            self.reflections += 1
            span.add_event(
                sc.EVENT_REFLECTION,
                _clean(
                    {
                        sc.PG_RULE: d.rule,
                        sc.PG_REASON: self._text(d.reason),
                        sc.PG_REFLECTION: self._text(d.reflection),
                    }
                ),
                timestamp=_ns(at_ms),
            )
        elif d.action is Action.STOP:
            span.add_event(
                sc.EVENT_STOP,
                _clean(
                    {
                        sc.PG_RULE: d.rule,
                        sc.PG_REASON: self._text(d.reason),
                        sc.PG_OUTCOME: d.outcome.value if d.outcome else None,
                    }
                ),
                timestamp=_ns(at_ms),
            )

    def _guardrail(self, ctx: Any, d: Decision, iteration: int, at_ms: float) -> None:
        reason = self._text(d.reason or None)
        mode = (self.start.policy or {}).get("mode")
        guardrail_span(self.tracer, self._trace.SpanKind.INTERNAL, ctx, d, iteration, _ns(at_ms), reason, mode)

    def _flush_tools(self, observations: Sequence[Observation], *, until_ms: float, ctx: Any) -> None:
        """The execute_tool spans of the previous model call's tool calls, now that their results arrived."""
        results = [o for o in observations if o.kind == "tool"]
        used: set[int] = set()
        for _k, (call, began) in enumerate(self._pending_tools):
            match = None
            if call.id is not None:
                match = next((j for j, o in enumerate(results) if j not in used and o.tool_call_id == call.id), None)
            if match is None:
                match = next((j for j, o in enumerate(results) if j not in used and o.tool_call_id is None), None)
            result = None
            if match is not None:
                used.add(match)
                result = results[match]
            attrs = _clean(
                {
                    sc.OPERATION_NAME: sc.OP_EXECUTE_TOOL,
                    sc.OPENINFERENCE_SPAN_KIND: "TOOL",
                    sc.TOOL_NAME: call.name,
                    sc.TOOL_CALL_ID: call.id,
                    sc.TOOL_TYPE: "function",
                    sc.PG_TOOL_INFERRED_TIMING: True,
                    sc.TOOL_CALL_ARGUMENTS: call.arguments if self.capture else None,
                    sc.TOOL_CALL_RESULT: result.text if self.capture and result is not None else None,
                }
            )
            span = self.tracer.start_span(
                f"{sc.OP_EXECUTE_TOOL} {call.name}",
                context=ctx,
                kind=self._trace.SpanKind.INTERNAL,
                attributes=attrs,
                start_time=_ns(began),
            )
            if result is not None and result.is_error:
                span.set_attribute(sc.ERROR_TYPE, "tool_error")
                span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, "the tool reported an error"))
            span.end(end_time=_ns(max(began, until_ms)))
        self._pending_tools = []

    def _end(self, end: RunEnd | None) -> None:
        if self.decisions_only:
            return  # the application's own spans carry the run; the stop is its guardrail span
        now = self._clock_ms()
        if self._run_span is None:
            self._ensure_run_span(self.start.started_at_ms if self.start.started_at_ms is not None else now)
        span = self._run_span
        ctx = self._trace.set_span_in_context(span)
        last = self._last_end_ms if self._last_end_ms is not None else now
        if end is not None and end.wall_ms is not None and self.start.started_at_ms is not None:
            finish = max(self.start.started_at_ms + end.wall_ms, last)
        else:
            finish = max(now, last) if self._live else last
        if end is None or end.outcome not in (Outcome.SUCCEEDED, Outcome.FAILED):
            self._pending_tools = []  # stopped or cut short: whether these tools ran is not known (the chat has them)
        self._flush_tools((), until_ms=finish, ctx=ctx)
        if end is not None:
            rule = end.evidence.get("rule") if isinstance(end.evidence.get("rule"), str) else None
            span.set_attributes(
                _clean(
                    {
                        sc.PG_OUTCOME: end.outcome.value,
                        sc.PG_OUTCOME_REASON: self._text(end.reason or None),
                        sc.PG_STOP_RULE: rule,
                        sc.PG_ITERATIONS: end.iterations,
                        sc.PG_TOOL_CALLS: end.tool_calls,
                        sc.PG_INPUT_TOKENS: end.input_tokens,
                        sc.PG_OUTPUT_TOKENS: end.output_tokens,
                        sc.PG_TOTAL_TOKENS: end.total_tokens,
                        sc.PG_COST: end.cost,
                        sc.PG_WALL_MS: end.wall_ms,
                        sc.PG_REFLECTIONS: end.evidence.get("reflections", self.reflections),
                        sc.PG_CENSORED: end.censored,
                        sc.PG_SUCCESS_LABEL: end.success_label,
                        sc.PG_ANSWER: end.answer if self.capture else None,
                        sc.OPENINFERENCE_OUTPUT: end.answer if self.capture else None,  # and the output
                    }
                )
            )
            if end.outcome is not Outcome.SUCCEEDED:  # stopped, cut off, failed or cancelled: not done
                span.set_attribute(sc.ERROR_TYPE, end.outcome.value)
                span.set_status(
                    self._trace.Status(self._trace.StatusCode.ERROR, self._text(end.reason, end.outcome.value))
                )
        span.end(end_time=_ns(finish))
