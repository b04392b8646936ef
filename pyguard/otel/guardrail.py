"""The guard's interventions as guardrail results that trace viewers show as such.

A reflection or a stop is one ``run_guardrail pyguard`` span (INTERNAL), a child of the run's span right after
the model call it judged (in decisions-only mode, under the application's span active at that call). It is spelled
three ways at once, because no one spelling is read everywhere yet:

- the OpenTelemetry GenAI conventions' draft guardrail span (semantic-conventions-genai pull request 427, "run
  guardrail span and security finding", in review; it supersedes the ``apply_guardrail`` / ``gen_ai.guardian.*`` /
  ``gen_ai.security.*`` draft): ``gen_ai.operation.name=run_guardrail``, ``gen_ai.guardrail.component.name=pyguard``,
  ``gen_ai.guardrail.target.type=output`` with ``gen_ai.guardrail.target.subtype=llm`` (the guard judges the model's
  response), ``gen_ai.guardrail.verdict.type`` ``warn`` for a reflection and ``deny`` for a stop,
  ``gen_ai.guardrail.action.type`` what the caller enforced (``modify`` for a reflection: the next request carries
  it; ``block`` for a stop; in observe mode ``allow``, in reflect mode a stop's ``modify``: :func:`enforced_action`),
  ``gen_ai.guardrail.security.policy.rule.id`` the rule, and
  ``gen_ai.guardrail.verdict.reason`` the decision's reason (content capture permitting);
- OpenInference's ``openinference.span.kind=GUARDRAIL`` with ``output.value`` ``"<action> <rule>"``: Arize Phoenix
  shows the span as a guardrail with that output;
- Langfuse's ``langfuse.observation.type=guardrail``: Langfuse shows a guardrail observation.

A tool call a per-tool limit kept from running (``[caps.tool_limits]`` / ``[conversation.tool_limits]``, Java's
``ToolLimits``: the call's result is the blocked message) is a guardrail decision too, one span per blocked call:
``gen_ai.guardrail.target.type=tool_call``, verdict ``deny``, action ``block``, rule ``tool_limit:<tool>``
(:func:`blocked_call_attributes`), found in the results the next model call carries (:func:`blocked_calls`).

Span events (``pyguard.reflection``, ``pyguard.stop``) stay on the chat span for viewers that show events (Jaeger);
Langfuse drops custom span events, which is why the span exists. No text of the run is on it without content
capture: rule, action, verdict, iteration.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, NamedTuple

from pyguard.base.decisions import Action, Decision
from pyguard.otel import semconv as sc

__all__: list[str] = []

DECISION_TYPES = {Action.REFLECT: "warn", Action.STOP: "deny"}
"""pyguard action -> the draft's ``gen_ai.guardrail.verdict.type``."""
ACTION_TYPES = {Action.REFLECT: "modify", Action.STOP: "block"}
"""pyguard action -> the draft's ``gen_ai.guardrail.action.type`` (allow, block, modify, escalate): what was enforced."""


def is_intervention(decision: Decision) -> bool:
    """True for the decisions that get a guardrail span: a reflection or a stop."""
    return decision.action in DECISION_TYPES


def enforced_action(decision: Decision, mode: str | None) -> str:
    """``gen_ai.guardrail.action.type``: what the caller enforced in the guard's ``mode`` (``PolicyConfig.mode``):
    observe enforced nothing (``allow``), reflect sends a reflection where it would stop (``modify``)."""
    if mode == "observe":
        return "allow"
    if mode == "reflect" and decision.action is Action.STOP:
        return "modify"
    return ACTION_TYPES.get(decision.action, "allow")


def guardrail_attributes(decision: Decision, iteration: int, mode: str | None = None) -> dict[str, Any]:
    action = decision.action.value
    attrs: dict[str, Any] = {
        sc.OPERATION_NAME: sc.OP_RUN_GUARDRAIL,
        sc.GUARDRAIL_COMPONENT_NAME: "pyguard",
        sc.GUARDRAIL_TARGET_TYPE: "output",
        sc.GUARDRAIL_TARGET_SUBTYPE: "llm",
        sc.GUARDRAIL_VERDICT_TYPE: DECISION_TYPES.get(decision.action, "allow"),
        sc.GUARDRAIL_ACTION_TYPE: enforced_action(decision, mode),
        sc.OPENINFERENCE_SPAN_KIND: "GUARDRAIL",
        sc.LANGFUSE_OBSERVATION_TYPE: "guardrail",
        sc.PG_ACTION: action,
        sc.PG_ITERATION: iteration,
        sc.OPENINFERENCE_OUTPUT: f"{action} {decision.rule}" if decision.rule else action,
    }
    if decision.rule:
        attrs[sc.GUARDRAIL_POLICY_RULE_ID] = decision.rule
        attrs[sc.PG_RULE] = decision.rule
    if decision.outcome is not None:
        attrs[sc.PG_OUTCOME] = decision.outcome.value
    return attrs


def guardrail_span(
    tracer: Any,
    kind: Any,
    ctx: Any,
    decision: Decision,
    iteration: int,
    at_ns: int,
    reason: str | None,
    mode: str | None = None,
) -> None:
    """A guard's decision as a zero-length ``run_guardrail`` span at ``at_ns`` (``reason`` as the export shows it;
    ``mode``: the run's, :func:`guardrail_attributes`)."""
    attrs = {
        **guardrail_attributes(decision, iteration, mode),
        sc.PG_REASON: reason,
        sc.GUARDRAIL_VERDICT_REASON: reason,
    }
    span = tracer.start_span(
        f"{sc.OP_RUN_GUARDRAIL} pyguard",
        context=ctx,
        kind=kind,
        attributes={k: v for k, v in attrs.items() if v is not None},
        start_time=at_ns,
    )
    span.end(end_time=at_ns)


_BLOCKED = re.compile(r"^\[pyguard\] not run: the limit of (\d+) calls? of (.+?) per (run|conversation) is reached")
"""The start of a blocked call's result (Java's ``ToolLimits``: ``BLOCKED`` and the message after it)."""


class BlockedCall(NamedTuple):
    """One tool call a per-tool limit kept from running, read from its result."""

    tool: str
    limit: int
    scope: str
    """``run`` or ``conversation``: whose limit it was."""
    tool_call_id: str | None


def blocked_calls(observations: Iterable[Any]) -> list[BlockedCall]:
    """The blocked calls among a model call's observations (tool results that are a limit's blocked message)."""
    out = []
    for obs in observations:
        found = _BLOCKED.match(obs.text) if getattr(obs, "kind", "tool") == "tool" and obs.text else None
        if found is not None:
            out.append(BlockedCall(found.group(2), int(found.group(1)), found.group(3), obs.tool_call_id))
    return out


def blocked_call_attributes(blocked: BlockedCall, iteration: int) -> dict[str, Any]:
    """The guardrail span of a blocked tool call (after model call ``iteration``, which requested it): verdict
    ``deny``, action ``block``, target ``tool_call``, rule ``tool_limit:<tool>``; no text of the run."""
    rule = f"tool_limit:{blocked.tool}"
    attrs: dict[str, Any] = {
        sc.OPERATION_NAME: sc.OP_RUN_GUARDRAIL,
        sc.GUARDRAIL_COMPONENT_NAME: "pyguard",
        sc.GUARDRAIL_TARGET_TYPE: "tool_call",
        sc.GUARDRAIL_VERDICT_TYPE: "deny",
        sc.GUARDRAIL_ACTION_TYPE: "block",
        sc.GUARDRAIL_POLICY_RULE_ID: rule,
        sc.OPENINFERENCE_SPAN_KIND: "GUARDRAIL",
        sc.LANGFUSE_OBSERVATION_TYPE: "guardrail",
        sc.PG_ACTION: "block",
        sc.PG_ITERATION: iteration,
        sc.OPENINFERENCE_OUTPUT: f"block {rule}",
        sc.GUARDRAIL_VERDICT_REASON: f"the limit of {blocked.limit} calls of {blocked.tool} per {blocked.scope} is"
        " reached: the call was not run",
        sc.TOOL_NAME: blocked.tool,
    }
    if blocked.tool_call_id:
        attrs[sc.TOOL_CALL_ID] = blocked.tool_call_id
    return attrs


def blocked_call_spans(tracer: Any, kind: Any, ctx: Any, event: Any, at_ns: int) -> int:
    """One guardrail span (``kind``: INTERNAL) under ``ctx`` for each tool call of the model call before ``event``
    that a per-tool limit blocked (its result is in ``event``'s observations); returns how many."""
    found = blocked_calls(event.observations)
    for blocked in found:
        attrs = blocked_call_attributes(blocked, event.index - 1)
        span = tracer.start_span(
            f"{sc.OP_RUN_GUARDRAIL} pyguard", context=ctx, kind=kind, attributes=attrs, start_time=at_ns
        )
        span.end(end_time=at_ns)
    return len(found)
