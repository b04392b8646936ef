"""A real guarded LangChain4j run (scripted model, JVM) emits its OpenTelemetry GenAI spans as it goes, and the
OTLP JSON file it writes replays like the run's own trace."""

from __future__ import annotations

import pytest

pytest.importorskip("opentelemetry.sdk")

from pyguard.base.events import Outcome  # noqa: E402
from pyguard.jvm import load_scenario  # noqa: E402
from pyguard.live.guard import Guard  # noqa: E402
from pyguard.loading import load_runs  # noqa: E402
from pyguard.otel import GuardTelemetry, import_otlp  # noqa: E402
from pyguard.otel import semconv as sc
from pyguard.replay import replay_runs  # noqa: E402

TASK = "Where is order 12345?"


def stubborn_incident() -> dict:
    scenario = dict(load_scenario("logistics_incident"))
    scenario["on_reflection"] = {**scenario["on_reflection"], "recover_probability": 0.0}
    return scenario


def test_guarded_run_spans_arrive_in_an_in_process_exporter(jvm):
    telemetry, exporter = GuardTelemetry.in_memory()
    result = Guard(telemetry=telemetry).run_scenario(stubborn_incident(), TASK, seed=3, task_type="lookup")
    assert result.outcome is Outcome.STALLED
    spans = exporter.get_finished_spans()
    ops = [s.attributes[sc.OPERATION_NAME] for s in spans]
    assert ops.count("invoke_agent") == 1 and ops.count("chat") == result.model_calls
    assert ops.count("execute_tool") >= 1
    run = next(s for s in spans if s.attributes[sc.OPERATION_NAME] == "invoke_agent")
    chats = sorted(
        (s for s in spans if s.attributes[sc.OPERATION_NAME] == "chat"), key=lambda s: s.attributes[sc.PG_ITERATION]
    )
    events = result.record.events
    assert [c.attributes.get(sc.USAGE_INPUT_TOKENS) for c in chats] == [e.input_tokens for e in events]
    assert [c.attributes.get(sc.USAGE_OUTPUT_TOKENS) for c in chats] == [e.output_tokens for e in events]
    # a chat span carries the decision on its call's response; a decision on the call's results, made before the
    # next call and not a plain continue, is a guardrail span of that call, and replaces it in the result
    guardrails = {
        s.attributes[sc.PG_ITERATION]: s.attributes[sc.PG_ACTION]
        for s in spans
        if s.attributes[sc.OPERATION_NAME] == sc.OP_RUN_GUARDRAIL
    }
    per_call = [guardrails.get(c.attributes[sc.PG_ITERATION], c.attributes[sc.PG_ACTION]) for c in chats]
    assert per_call == [d.action.value for d in result.decisions] and "reflect" in per_call
    assert run.attributes[sc.PG_OUTCOME] == "stalled" and run.attributes[sc.PG_RUN_ID] == result.record.run_id
    assert all(c.parent.span_id == run.context.span_id for c in chats)


def test_the_spans_file_replays_like_the_trace(jvm, tmp_path):
    telemetry = GuardTelemetry.to_file(tmp_path / "spans.jsonl", capture_content=True)
    guard = Guard(trace_dir=tmp_path / "traces", telemetry=telemetry)
    guard.run_scenario(stubborn_incident(), TASK, seed=3, task_type="lookup")
    guard.run_scenario("logistics_incident", TASK, seed=1, task_type="lookup")
    telemetry.shutdown()
    traced = sorted(load_runs(tmp_path / "traces"), key=lambda r: r.run_id)
    spanned = sorted(import_otlp(tmp_path / "spans.jsonl").runs, key=lambda r: r.run_id)
    assert [r.events for r in spanned] == [r.events for r in traced]
    assert [r.end.outcome for r in spanned] == [r.end.outcome for r in traced]
    assert replay_runs(spanned).to_dict() == replay_runs(traced).to_dict()


def test_java_context_is_none_without_the_opentelemetry_api_on_the_classpath(jvm):
    from pyguard.jvm.otel_context import java_traceparent

    # The bridge's classpath has no io.opentelemetry API: no Java span to join, the run joins Python's context.
    assert java_traceparent() is None
    telemetry, exporter = GuardTelemetry.in_memory(parent=java_traceparent)
    Guard(telemetry=telemetry).run_scenario("logistics_incident", TASK, seed=1)
    run = next(s for s in exporter.get_finished_spans() if s.attributes[sc.OPERATION_NAME] == "invoke_agent")
    assert run.parent is None
