"""The guard's interventions as guardrail results that trace viewers show as such.

A reflection or a stop is one ``apply_guardrail pyguard`` span (INTERNAL), a child of the run's span right after
the model call it judged (in decisions-only mode, under the application's span active at that call). It is spelled
three ways at once, because no one spelling is read everywhere yet:

- the OpenTelemetry GenAI SIG's draft security-guardian conventions: ``gen_ai.operation.name=apply_guardrail``,
  ``gen_ai.guardian.name=pyguard``, ``gen_ai.security.target.type=llm_output`` (the guard judges the model's
  response), ``gen_ai.security.decision.type`` ``warn`` for a reflection (the run goes on, the model is told) and
  ``deny`` for a stop, ``gen_ai.security.policy.id`` the rule;
- OpenInference's ``openinference.span.kind=GUARDRAIL`` with ``output.value`` ``"<action> <rule>"``: Arize Phoenix
  shows the span as a guardrail with that output;
- Langfuse's ``langfuse.observation.type=guardrail``: Langfuse shows a guardrail observation.

Span events (``pyguard.reflection``, ``pyguard.stop``) stay on the chat span for viewers that show events (Jaeger);
Langfuse drops custom span events, which is why the span exists. No text of the run is on it without content
capture: rule, action, decision type, iteration.
"""

from __future__ import annotations

from typing import Any

from pyguard.decisions import Action, Decision
from pyguard.otel import semconv as sc

__all__ = ["guardrail_attributes", "is_intervention"]

DECISION_TYPES = {Action.REFLECT: "warn", Action.STOP: "deny"}
"""pyguard action -> the draft's ``gen_ai.security.decision.type`` (allow/deny/modify/warn/audit)."""


def is_intervention(decision: Decision) -> bool:
    """True for the decisions that get a guardrail span: a reflection or a stop."""
    return decision.action in DECISION_TYPES


def guardrail_attributes(decision: Decision, iteration: int) -> dict[str, Any]:
    action = decision.action.value
    attrs: dict[str, Any] = {
        sc.OPERATION_NAME: sc.OP_APPLY_GUARDRAIL,
        sc.GUARDIAN_NAME: "pyguard",
        sc.SECURITY_TARGET_TYPE: "llm_output",
        sc.SECURITY_DECISION_TYPE: DECISION_TYPES.get(decision.action, "allow"),
        sc.OPENINFERENCE_SPAN_KIND: "GUARDRAIL",
        sc.LANGFUSE_OBSERVATION_TYPE: "guardrail",
        sc.PG_ACTION: action,
        sc.PG_ITERATION: iteration,
        sc.OPENINFERENCE_OUTPUT: f"{action} {decision.rule}" if decision.rule else action,
    }
    if decision.rule:
        attrs[sc.SECURITY_POLICY_ID] = decision.rule
        attrs[sc.PG_RULE] = decision.rule
    if decision.outcome is not None:
        attrs[sc.PG_OUTCOME] = decision.outcome.value
    return attrs
