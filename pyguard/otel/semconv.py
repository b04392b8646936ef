"""The attribute, span and event names pyguard writes and reads, from the OpenTelemetry GenAI semantic
conventions (``gen_ai.*``, checked against the ``opentelemetry-semantic-conventions`` package in the tests) and
pyguard's own ``pyguard.*`` namespace.

Spans: ``invoke_agent {agent}`` for a run (INTERNAL), ``chat {model}`` for each model call (CLIENT),
``execute_tool {tool}`` for each tool call (INTERNAL); chats and tool calls are children of the run span.
"""

from __future__ import annotations

__all__: list[str] = []

# -- gen_ai.* (OpenTelemetry GenAI semantic conventions) -------------------------------------------------------------
OPERATION_NAME = "gen_ai.operation.name"
PROVIDER_NAME = "gen_ai.provider.name"
SYSTEM = "gen_ai.system"
"""The provider attribute of conventions before 1.37 (read on import; pyguard writes ``gen_ai.provider.name``)."""
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
USAGE_PROMPT_TOKENS = "gen_ai.usage.prompt_tokens"
"""Deprecated name of the input tokens (read on import)."""
USAGE_COMPLETION_TOKENS = "gen_ai.usage.completion_tokens"
"""Deprecated name of the output tokens (read on import)."""
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
TOOL_NAME = "gen_ai.tool.name"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"
RESPONSE_ID = "gen_ai.response.id"
REQUEST_PARAMETERS = {
    "temperature": "gen_ai.request.temperature",
    "top_p": "gen_ai.request.top_p",
    "top_k": "gen_ai.request.top_k",
    "max_tokens": "gen_ai.request.max_tokens",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "presence_penalty": "gen_ai.request.presence_penalty",
    "stop_sequences": "gen_ai.request.stop_sequences",
}
"""``IterationEvent.request_parameters`` keys -> their ``gen_ai.request.*`` attributes."""
TOKEN_TYPE = "gen_ai.token.type"
METRIC_OPERATION_DURATION = "gen_ai.client.operation.duration"
METRIC_TOKEN_USAGE = "gen_ai.client.token.usage"

# -- guard decisions as guardrail results ----------------------------------------------------------------------------
# A ``run_guardrail`` span per intervention, spelled three ways so each backend shows it as a guardrail: the
# OpenTelemetry GenAI conventions' draft guardrail span (semantic-conventions-genai pull request 427, "run guardrail
# span and security finding": ``gen_ai.guardrail.*``; it supersedes the ``apply_guardrail`` / ``gen_ai.guardian.*`` /
# ``gen_ai.security.*`` draft of semantic-conventions pull request 3233), OpenInference's span kind (Phoenix) and
# Langfuse's observation type.
OP_RUN_GUARDRAIL = "run_guardrail"
GUARDRAIL_COMPONENT_NAME = "gen_ai.guardrail.component.name"
GUARDRAIL_TARGET_TYPE = "gen_ai.guardrail.target.type"
GUARDRAIL_TARGET_SUBTYPE = "gen_ai.guardrail.target.subtype"
GUARDRAIL_VERDICT_TYPE = "gen_ai.guardrail.verdict.type"
GUARDRAIL_VERDICT_REASON = "gen_ai.guardrail.verdict.reason"
GUARDRAIL_ACTION_TYPE = "gen_ai.guardrail.action.type"
GUARDRAIL_POLICY_RULE_ID = "gen_ai.guardrail.security.policy.rule.id"
LEGACY_GUARDRAIL_OPERATIONS = frozenset({"apply_guardrail", OP_RUN_GUARDRAIL})
"""Guardrail span operations pyguard wrote, the superseded draft's included (read back from older exports)."""
OPENINFERENCE_SPAN_KIND = "openinference.span.kind"
OPENINFERENCE_OUTPUT = "output.value"
OPENINFERENCE_INPUT = "input.value"
"""OpenInference's span input (Phoenix's trace list shows the agent span's ``input.value`` and ``output.value``)."""
LANGFUSE_OBSERVATION_TYPE = "langfuse.observation.type"

OP_INVOKE_AGENT = "invoke_agent"
OP_CHAT = "chat"
OP_EXECUTE_TOOL = "execute_tool"
MODEL_CALL_OPERATIONS = ("chat", "text_completion", "generate_content")
"""Operations read as one model call (one pyguard iteration) on import."""

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The environment variable OpenTelemetry's GenAI instrumentations read to capture message content."""

# -- pyguard.* -----------------------------------------------------------------------------------------------------
PG_RUN_ID = "pyguard.run_id"
PG_TASK_TYPE = "pyguard.task_type"
PG_TASK = "pyguard.task"
PG_AGENT_STYLE = "pyguard.agent_style"
PG_STARTED_AT_MS = "pyguard.started_at_ms"
PG_ITERATION = "pyguard.iteration"
PG_PROVIDER = "pyguard.provider"
"""The provider as the sensor named it (LangChain4j's ``OPEN_AI``) when it differs from ``gen_ai.provider.name``."""
PG_TOTAL_TOKENS = "pyguard.usage.total_tokens"
PG_INPUT_TOKENS = "pyguard.usage.input_tokens"
"""The run's input tokens on the run span (not ``gen_ai.usage.*``: the chat spans carry those, and a backend that
sums usage over a trace would count the run's twice)."""
PG_OUTPUT_TOKENS = "pyguard.usage.output_tokens"
PG_FINISH_REASON = "pyguard.finish_reason"
PG_TIMESTAMP_MS = "pyguard.timestamp_ms"
PG_LATENCY_MS = "pyguard.latency_ms"
PG_TOOL_CALL_NAMES = "pyguard.tool_call.names"
"""The tools a model call asked for, in order (not content: names only; arguments are content)."""
PG_TOOL_CALL_IDS = "pyguard.tool_call.ids"
"""Their call ids, in the same order ("" where the provider gave none)."""
# the guard's decision after a model call (on the chat span)
PG_ACTION = "pyguard.decision.action"
PG_RULE = "pyguard.decision.rule"
PG_REASON = "pyguard.decision.reason"
PG_GAIN = "pyguard.gain"
PG_BUDGET = "pyguard.budget"
PG_STALL_FLAGS = "pyguard.stall.flags"
PG_REFLECTION = "pyguard.reflection"
# the run's end (on the invoke_agent span)
PG_OUTCOME = "pyguard.outcome"
PG_OUTCOME_REASON = "pyguard.outcome.reason"
PG_STOP_RULE = "pyguard.stop.rule"
PG_ITERATIONS = "pyguard.iterations"
PG_TOOL_CALLS = "pyguard.tool_calls"
PG_REFLECTIONS = "pyguard.reflections"
PG_CENSORED = "pyguard.censored"
PG_SUCCESS_LABEL = "pyguard.success_label"
PG_COST = "pyguard.cost"
PG_WALL_MS = "pyguard.wall_ms"
PG_ANSWER = "pyguard.answer"
PG_TOOL_INFERRED_TIMING = "pyguard.tool.inferred_timing"
"""True on execute_tool spans: their start and end are the surrounding model calls', not measured."""
EVENT_REFLECTION = "pyguard.reflection"
EVENT_STOP = "pyguard.stop"
