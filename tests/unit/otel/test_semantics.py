"""What the export says and how it spells it (no JVM): the content switch, provider names, request vs response
model, guardrail spans, the GenAI client metrics, decisions-only mode."""

from __future__ import annotations

import logging

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.trace import StatusCode  # noqa: E402

from pyguard.base.errors import ConfigError  # noqa: E402
from pyguard.base.events import Observation, RunStart, ToolCall  # noqa: E402
from pyguard.engine import Policy  # noqa: E402
from pyguard.otel import GuardTelemetry, traceparent  # noqa: E402
from pyguard.otel import semconv as sc
from pyguard.otel.capture import capture_on_spans, content_capture_default  # noqa: E402
from pyguard.otel.providers import LANGCHAIN4J_PROVIDERS, OTHER, provider_name  # noqa: E402
from pyguard.testing.synthetic import generate  # noqa: E402

MARK = "QZXV"
CUSTOM_PROVIDERS = {"ollama", "voyage_ai", "jina", OTHER}
"""Providers the conventions do not list (a custom value, or "none of them")."""


def marked(event, i):
    """The event with a marker in every text a tool, the model or the user could have written."""
    obs = tuple(o.model_copy(update={"text": f"{o.text} {MARK}-OBS"}) for o in event.observations)
    calls = tuple(ToolCall(id=c.id, name=c.name, arguments=f'{{"q": "{MARK}-ARG"}}') for c in event.tool_calls) or ()
    extra = (Observation(kind="user", text=f"{MARK}-USER"),) if i == 0 else ()
    return event.model_copy(
        update={
            "observations": extra + obs,
            "tool_calls": calls,
            "text": f"{MARK}-TEXT-{i}",
            "error": f"java.io.IOException: {MARK}-ERR" if i == 2 else None,
            "provider": "OPEN_AI",
            "request_model": "gpt-4o",
            "response_model": "gpt-4o-2024-08-06",
            "response_id": f"chatcmpl-{i}",
            "request_parameters": {"temperature": 0.2, "max_tokens": 256, "stop_sequences": ["END"]},
            "timestamp_ms": 1.0e12 + 1000.0 * (i + 1),
            "latency_ms": 400.0,
        }
    )


def run_guarded(telemetry, kind="exact_repeat", start=None):
    lr = generate(kind, 0)
    session = Policy().new_run(lr.name, "lookup")
    start = start or RunStart(run_id=lr.name, task_type="lookup", task=f"{MARK}-TASK", started_at_ms=1.0e12)
    spans = telemetry.start_run(start)
    decisions = []
    for i, event in enumerate(lr.events):
        event = marked(event, i)
        decision = session.observe(event)
        decisions.append(decision)
        spans.iteration(event, decision)
        if decision.stops:
            break
    end = session.finish()
    spans.end(end.model_copy(update={"answer": f"{MARK}-ANSWER"}))
    return decisions, end


def by_op(spans, op):
    return [s for s in spans if s.attributes.get(sc.OPERATION_NAME) == op]


@pytest.mark.parametrize(
    ("value", "on"),
    [
        ("NO_CONTENT", False),
        ("SPAN_ONLY", True),
        ("span_and_event", True),
        ("EVENT_ONLY", False),  # pyguard writes content on spans only
        ("true", True),
        ("false", False),
        (True, True),
        (False, False),
    ],
)
def test_the_capture_switch_takes_the_conventions_values(value, on, monkeypatch):
    assert capture_on_spans(value) is on
    monkeypatch.setenv(sc.CAPTURE_CONTENT_ENV, str(value))
    assert content_capture_default() is on


def test_a_bad_capture_value_is_refused_or_read_as_no_content(monkeypatch, caplog):
    with pytest.raises(ConfigError, match=r"'SPAN_ONLYY'.*NO_CONTENT, SPAN_ONLY, EVENT_ONLY, SPAN_AND_EVENT"):
        GuardTelemetry.in_memory(capture_content="SPAN_ONLYY")
    monkeypatch.setenv(sc.CAPTURE_CONTENT_ENV, "everything")
    with caplog.at_level(logging.WARNING):
        assert content_capture_default() is False
    assert "'everything'" in caplog.text


def test_without_content_no_marked_text_is_anywhere_in_the_export(tmp_path):
    path = tmp_path / "spans.jsonl"
    telemetry = GuardTelemetry.to_file(path, capture_content="NO_CONTENT")
    decisions, _ = run_guarded(telemetry)
    telemetry.shutdown()
    text = path.read_text(encoding="utf-8")
    assert {d.action.value for d in decisions} >= {"reflect", "stop"}
    assert "pyguard.reflection" in text and "run_guardrail" in text and "java.io.IOException" in text
    assert MARK not in text
    with_content = tmp_path / "content.jsonl"
    telemetry = GuardTelemetry.to_file(with_content, capture_content="SPAN_ONLY")
    run_guarded(telemetry)
    telemetry.shutdown()
    text = with_content.read_text(encoding="utf-8")
    for marker in ("TASK", "USER", "OBS", "ARG", "TEXT-1", "ERR", "ANSWER"):
        assert f"{MARK}-{marker}" in text


def test_every_langchain4j_provider_maps_to_a_conventions_value():
    gen_ai = pytest.importorskip("opentelemetry.semconv._incubating.attributes.gen_ai_attributes")
    known = {v.value for v in gen_ai.GenAiProviderNameValues}
    assert set(LANGCHAIN4J_PROVIDERS.values()) - known == CUSTOM_PROVIDERS
    assert provider_name("OPEN_AI") == "openai" and provider_name("AMAZON_BEDROCK") == "aws.bedrock"
    assert provider_name("AZURE_OPEN_AI") == "azure.ai.openai" and provider_name("GOOGLE_AI_GEMINI") == "gcp.gemini"
    assert provider_name("anthropic") == "anthropic" and provider_name("Acme") == "acme" and provider_name(None) is None


def test_models_ids_parameters_and_guardrail_spans():
    telemetry, exporter = GuardTelemetry.in_memory(conversation_id=lambda start: f"memory-{start.run_id}")
    decisions, end = run_guarded(telemetry)
    spans = exporter.get_finished_spans()
    (run,) = by_op(spans, "invoke_agent")
    chat = by_op(spans, "chat")[0].attributes
    assert chat[sc.PROVIDER_NAME] == "openai" and chat[sc.PG_PROVIDER] == "OPEN_AI"
    assert chat[sc.REQUEST_MODEL] == "gpt-4o" and chat[sc.RESPONSE_MODEL] == "gpt-4o-2024-08-06"
    assert chat[sc.RESPONSE_ID] == "chatcmpl-0" and chat["gen_ai.request.temperature"] == 0.2
    assert chat["gen_ai.request.max_tokens"] == 256 and tuple(chat["gen_ai.request.stop_sequences"]) == ("END",)
    assert run.attributes[sc.CONVERSATION_ID] == f"memory-{end.run_id}"
    guardrails = by_op(spans, "run_guardrail")
    interventions = [d for d in decisions if d.action.value != "continue"]
    assert [g.attributes[sc.GUARDRAIL_VERDICT_TYPE] for g in guardrails] == [
        {"reflect": "warn", "stop": "deny"}[d.action.value] for d in interventions
    ]
    for g, d in zip(guardrails, interventions, strict=True):
        assert g.parent.span_id == run.context.span_id and g.name == "run_guardrail pyguard"
        assert (
            g.attributes[sc.GUARDRAIL_POLICY_RULE_ID] == d.rule
            and g.attributes[sc.OPENINFERENCE_SPAN_KIND] == "GUARDRAIL"
        )
        assert g.attributes[sc.LANGFUSE_OBSERVATION_TYPE] == "guardrail"
        assert g.attributes[sc.OPENINFERENCE_OUTPUT] == f"{d.action.value} {d.rule}"
        # the current draft's spelling (semantic-conventions-genai #427), none of the superseded one's
        assert g.attributes[sc.GUARDRAIL_COMPONENT_NAME] == "pyguard"
        assert (g.attributes[sc.GUARDRAIL_TARGET_TYPE], g.attributes[sc.GUARDRAIL_TARGET_SUBTYPE]) == ("output", "llm")
        assert g.attributes[sc.GUARDRAIL_ACTION_TYPE] == {"reflect": "modify", "stop": "block"}[d.action.value]
        assert not any(k.startswith(("gen_ai.guardian.", "gen_ai.security.")) for k in g.attributes)
    failed = next(c for c in by_op(spans, "chat") if c.attributes[sc.PG_ITERATION] == 3)
    assert failed.status.status_code is StatusCode.ERROR and failed.status.description == "java.io.IOException"


def test_the_genai_client_metrics():
    metrics = pytest.importorskip("opentelemetry.semconv._incubating.metrics.gen_ai_metrics")
    reader = InMemoryMetricReader()
    telemetry, _ = GuardTelemetry.in_memory(meter_provider=MeterProvider(metric_readers=[reader]))
    decisions, _ = run_guarded(telemetry)
    points = {
        m.name: m.data.data_points
        for rm in reader.get_metrics_data().resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
    }
    assert set(points) == {metrics.GEN_AI_CLIENT_OPERATION_DURATION, metrics.GEN_AI_CLIENT_TOKEN_USAGE}
    (duration,) = [p for p in points[sc.METRIC_OPERATION_DURATION] if sc.ERROR_TYPE not in p.attributes]
    assert duration.count == len(decisions) - 1 and duration.sum == pytest.approx(0.4 * (len(decisions) - 1))
    assert duration.attributes[sc.PROVIDER_NAME] == "openai" and duration.attributes[sc.REQUEST_MODEL] == "gpt-4o"
    kinds = {p.attributes[sc.TOKEN_TYPE] for p in points[sc.METRIC_TOKEN_USAGE]}
    assert kinds == {"input", "output"}


def test_decisions_only_mode_emits_guardrail_spans_under_the_apps_span():
    java = traceparent("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
    reader = InMemoryMetricReader()
    telemetry, exporter = GuardTelemetry.in_memory(
        mode="decisions", parent=java, meter_provider=MeterProvider(metric_readers=[reader])
    )
    decisions, _ = run_guarded(telemetry)
    spans = exporter.get_finished_spans()
    assert {s.attributes[sc.OPERATION_NAME] for s in spans} == {"run_guardrail"}
    assert len(spans) == sum(d.action.value != "continue" for d in decisions)
    assert all(f"{s.parent.span_id:016x}" == "00f067aa0ba902b7" for s in spans)
    assert not any(k.startswith("gen_ai.usage") for s in spans for k in s.attributes)
    assert reader.get_metrics_data() is None or not reader.get_metrics_data().resource_metrics
    with pytest.raises(ConfigError, match="'everything'.*'full'.*'decisions'"):
        GuardTelemetry.in_memory(mode="everything")
