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
  it; ``block`` for a stop), ``gen_ai.guardrail.security.policy.rule.id`` the rule, and
  ``gen_ai.guardrail.verdict.reason`` the decision's reason (content capture permitting);
- OpenInference's ``openinference.span.kind=GUARDRAIL`` with ``output.value`` ``"<action> <rule>"``: Arize Phoenix
  shows the span as a guardrail with that output;
- Langfuse's ``langfuse.observation.type=guardrail``: Langfuse shows a guardrail observation.

Span events (``pyguard.reflection``, ``pyguard.stop``) stay on the chat span for viewers that show events (Jaeger);
Langfuse drops custom span events, which is why the span exists. No text of the run is on it without content
capture: rule, action, verdict, iteration.
"""

from __future__ import annotations

from typing import Any

from pyguard.decisions import Action, Decision
from pyguard.otel import semconv as sc

__all__: list[str] = []

DECISION_TYPES = {Action.REFLECT: "warn", Action.STOP: "deny"}
"""pyguard action -> the draft's ``gen_ai.guardrail.verdict.type``."""
ACTION_TYPES = {Action.REFLECT: "modify", Action.STOP: "block"}
"""pyguard action -> the draft's ``gen_ai.guardrail.action.type`` (allow, block, modify, escalate): what was enforced."""


def is_intervention(decision: Decision) -> bool:
    """True for the decisions that get a guardrail span: a reflection or a stop."""
    return decision.action in DECISION_TYPES


def guardrail_attributes(decision: Decision, iteration: int) -> dict[str, Any]:
    action = decision.action.value
    attrs: dict[str, Any] = {
        sc.OPERATION_NAME: sc.OP_RUN_GUARDRAIL,
        sc.GUARDRAIL_COMPONENT_NAME: "pyguard",
        sc.GUARDRAIL_TARGET_TYPE: "output",
        sc.GUARDRAIL_TARGET_SUBTYPE: "llm",
        sc.GUARDRAIL_VERDICT_TYPE: DECISION_TYPES.get(decision.action, "allow"),
        sc.GUARDRAIL_ACTION_TYPE: ACTION_TYPES.get(decision.action, "allow"),
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
