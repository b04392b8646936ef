"""Runs as GenAI spans in an in-process exporter: names, attributes, parents, the guard's decisions; the OTLP JSON
file round-trips through the importer and `pyguard replay` with the same iterations, tool calls and tokens."""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402

from pyguard.base.errors import MissingExtraError  # noqa: E402
from pyguard.base.events import RunStart  # noqa: E402
from pyguard.cli import main  # noqa: E402
from pyguard.engine import Policy  # noqa: E402
from pyguard.otel import GuardTelemetry, export_runs, import_otlp, traceparent  # noqa: E402
from pyguard.otel import semconv as sc
from pyguard.replay import replay_runs  # noqa: E402
from pyguard.testing.synthetic import generate, labelled_set  # noqa: E402
from pyguard.trace import write_runs  # noqa: E402


def guarded(telemetry: GuardTelemetry, kind: str = "exact_repeat", seed: int = 0):
    """Drive one synthetic run through the engine and the telemetry as the Guard does (no JVM)."""
    lr = generate(kind, seed)
    session = Policy().new_run(lr.name, "lookup")
    spans = telemetry.start_run(RunStart(run_id=lr.name, task_type="lookup", task="find it", started_at_ms=1.0e12))
    for i, event in enumerate(lr.events):
        event = event.model_copy(
            update={"timestamp_ms": 1.0e12 + 1000.0 * (i + 1), "latency_ms": 400.0, "provider": "openai"}
        )
        decision = session.observe(event)
        spans.iteration(event, decision)
        if decision.stops:
            break
    end = session.finish()
    spans.end(end)
    return end


def by_op(spans, op):
    return [s for s in spans if s.attributes.get(sc.OPERATION_NAME) == op]


def test_semconv_names_match_the_opentelemetry_package():
    gen_ai = pytest.importorskip("opentelemetry.semconv._incubating.attributes.gen_ai_attributes")
    error = pytest.importorskip("opentelemetry.semconv.attributes.error_attributes")
    for ours, theirs in [
        (sc.OPERATION_NAME, "GEN_AI_OPERATION_NAME"),
        (sc.PROVIDER_NAME, "GEN_AI_PROVIDER_NAME"),
        (sc.REQUEST_MODEL, "GEN_AI_REQUEST_MODEL"),
        (sc.RESPONSE_MODEL, "GEN_AI_RESPONSE_MODEL"),
        (sc.RESPONSE_FINISH_REASONS, "GEN_AI_RESPONSE_FINISH_REASONS"),
        (sc.USAGE_INPUT_TOKENS, "GEN_AI_USAGE_INPUT_TOKENS"),
        (sc.USAGE_OUTPUT_TOKENS, "GEN_AI_USAGE_OUTPUT_TOKENS"),
        (sc.AGENT_NAME, "GEN_AI_AGENT_NAME"),
        (sc.CONVERSATION_ID, "GEN_AI_CONVERSATION_ID"),
        (sc.INPUT_MESSAGES, "GEN_AI_INPUT_MESSAGES"),
        (sc.OUTPUT_MESSAGES, "GEN_AI_OUTPUT_MESSAGES"),
        (sc.TOOL_NAME, "GEN_AI_TOOL_NAME"),
        (sc.TOOL_TYPE, "GEN_AI_TOOL_TYPE"),
        (sc.TOOL_CALL_ID, "GEN_AI_TOOL_CALL_ID"),
        (sc.TOOL_CALL_ARGUMENTS, "GEN_AI_TOOL_CALL_ARGUMENTS"),
        (sc.TOOL_CALL_RESULT, "GEN_AI_TOOL_CALL_RESULT"),
        (sc.SYSTEM, "GEN_AI_SYSTEM"),
    ]:
        assert ours == getattr(gen_ai, theirs)
    assert sc.ERROR_TYPE == error.ERROR_TYPE
    ops = gen_ai.GenAiOperationNameValues
    assert (sc.OP_INVOKE_AGENT, sc.OP_CHAT, sc.OP_EXECUTE_TOOL) == (
        ops.INVOKE_AGENT.value,
        ops.CHAT.value,
        ops.EXECUTE_TOOL.value,
    )


def test_a_guarded_run_arrives_as_genai_spans():
    telemetry, exporter = GuardTelemetry.in_memory(capture_content=False)
    end = guarded(telemetry)
    spans = exporter.get_finished_spans()
    (run,) = by_op(spans, "invoke_agent")
    chats, tools = by_op(spans, "chat"), by_op(spans, "execute_tool")
    assert run.name == "invoke_agent lookup" and run.kind is SpanKind.INTERNAL and run.parent is None
    assert len(chats) == end.iterations and all(c.kind is SpanKind.CLIENT for c in chats)
    assert chats[0].name == f"chat {chats[0].attributes[sc.REQUEST_MODEL]}"
    assert all(s.parent.span_id == run.context.span_id for s in chats + tools)
    assert {s.context.trace_id for s in spans} == {run.context.trace_id}
    first = chats[0].attributes
    assert first[sc.PROVIDER_NAME] == "openai" and first[sc.USAGE_INPUT_TOKENS] > 0
    assert first[sc.PG_ACTION] == "continue" and isinstance(first[sc.PG_GAIN], float)
    assert sc.INPUT_MESSAGES not in first and sc.TOOL_CALL_ARGUMENTS not in tools[0].attributes  # content is opt-in
    # the tool calls that ran (answered by the next call) are execute_tool spans between the two chats
    assert tools and tools[0].attributes[sc.TOOL_NAME] and tools[0].attributes[sc.TOOL_CALL_ID]
    assert chats[0].end_time <= tools[0].start_time <= tools[0].end_time <= chats[1].start_time
    # the stall: a reflection event, then a stop event, and the outcome on the run span
    events = [(e.name, c.attributes[sc.PG_ITERATION]) for c in chats for e in c.events]
    assert [n for n, _ in events] == ["pyguard.reflection", "pyguard.stop"]
    stop = chats[-1]
    assert stop.attributes[sc.PG_ACTION] == "stop" and stop.attributes[sc.PG_STALL_FLAGS]
    assert run.attributes[sc.PG_OUTCOME] == end.outcome.value == "stalled"
    assert run.attributes[sc.PG_STOP_RULE] == end.evidence["rule"] and run.attributes[sc.PG_REFLECTIONS] == 1
    assert run.attributes[sc.PG_INPUT_TOKENS] == end.input_tokens
    assert sc.USAGE_INPUT_TOKENS not in run.attributes  # usage once per call: a backend summing a trace counts it once
    assert run.status.status_code is StatusCode.ERROR and run.attributes[sc.ERROR_TYPE] == "stalled"
    assert run.status.description == "stalled"  # no reason text without content capture
    assert run.attributes[sc.PROVIDER_NAME] == "openai" and run.attributes[sc.REQUEST_MODEL] == first[sc.REQUEST_MODEL]
    assert sc.CONVERSATION_ID not in run.attributes  # a run is not a conversation


def test_the_run_joins_the_active_context_or_a_given_traceparent():
    telemetry, exporter = GuardTelemetry.in_memory()
    app = telemetry.provider.get_tracer("app")
    with app.start_as_current_span("POST /orders") as outer:
        guarded(telemetry)
    (run,) = by_op(exporter.get_finished_spans(), "invoke_agent")
    assert run.parent.span_id == outer.get_span_context().span_id
    assert run.context.trace_id == outer.get_span_context().trace_id

    java = traceparent("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
    for parent in (java, lambda: java):  # a string, or a callable read at the first model call (the Java side)
        exporter.clear()
        GuardTelemetry(telemetry.provider, parent=parent).start_run(RunStart(run_id="r")).end(None)
        (run,) = exporter.get_finished_spans()
        assert f"{run.context.trace_id:032x}" == "4bf92f3577b34da6a3ce929d0e0e4736"
        assert f"{run.parent.span_id:016x}" == "00f067aa0ba902b7"
    exporter.clear()  # a callable that finds no Java span falls back to the context active at the start
    with app.start_as_current_span("job") as outer:
        spans = GuardTelemetry(telemetry.provider, parent=lambda: None).start_run(RunStart(run_id="r2"))
    spans.end(None)
    run = next(s for s in exporter.get_finished_spans() if s.name.startswith("invoke_agent"))
    assert run.parent.span_id == outer.get_span_context().span_id


def test_the_global_provider_is_used_by_default(monkeypatch):
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider, exporter = TracerProvider(), InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", provider)  # what trace.set_tracer_provider() does, undone after
    guarded(GuardTelemetry())
    assert by_op(exporter.get_finished_spans(), "invoke_agent")
    monkeypatch.delenv(sc.CAPTURE_CONTENT_ENV, raising=False)
    assert GuardTelemetry(capture_content=None).capture_content is False
    monkeypatch.setenv(sc.CAPTURE_CONTENT_ENV, "true")
    assert GuardTelemetry().capture_content is True


def test_file_export_round_trips_through_import_and_replay(tmp_path):
    records, ends = [], []
    for lr in labelled_set(range(2)):
        from pyguard.base.events import RunEnd, RunRecord

        record = RunRecord(start=RunStart(run_id=lr.name, task_type=lr.kind), events=list(lr.events))
        replayed = replay_runs([record]).runs[0]
        record.end = replayed.end or RunEnd(
            run_id=lr.name,
            outcome="succeeded",
            iterations=len(lr.events),
            tool_calls=sum(len(e.tool_calls) for e in lr.events),
        )
        records.append(record)
        ends.append(record.end)
    path = tmp_path / "spans.jsonl"
    telemetry = GuardTelemetry.to_file(path, capture_content=True)
    assert export_runs(records, telemetry) == len(records)
    telemetry.shutdown()
    first = json.loads(path.read_text().splitlines()[0])
    span = first["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert len(span["traceId"]) == 32 and isinstance(span["kind"], int)  # OTLP/JSON: hex ids, integer enums
    back = {r.run_id: r for r in import_otlp(path).runs}
    assert set(back) == {r.run_id for r in records}
    for r in records:
        assert back[r.run_id].events == r.events
        assert back[r.run_id].end.outcome == r.end.outcome and back[r.run_id].end.iterations == r.end.iterations
    write_runs(tmp_path / "runs.jsonl", records)
    outs = []
    for name in ("runs.jsonl", "spans.jsonl"):
        res = CliRunner().invoke(main, ["replay", str(tmp_path / name), "--json"])
        assert res.exit_code == 0, res.output
        outs.append({r["id"]: r for r in json.loads(res.stdout)["runs"]})
    assert outs[0] == outs[1]
    assert all(r["tool_calls"] and r["tokens"] for r in outs[1].values())


def test_without_content_the_tool_calls_still_come_back(tmp_path):
    lr = generate("convergent", 1)
    from pyguard.base.events import RunRecord

    record = RunRecord(start=RunStart(run_id="c", task_type="t"), events=list(lr.events))
    path = tmp_path / "s.jsonl"
    telemetry = GuardTelemetry.to_file(path, capture_content=False)
    export_runs([record], telemetry)
    (back,) = import_otlp(path).runs
    assert [[(c.id, c.name) for c in e.tool_calls] for e in back.events] == [
        [(c.id, c.name) for c in e.tool_calls] for e in record.events
    ]
    assert [e.total_tokens for e in back.events] == [e.total_tokens for e in record.events]
    assert all(c.arguments == "" for e in back.events for c in e.tool_calls)
    assert back.end is None  # the recording had no footer


def test_telemetry_failures_never_break_the_run(caplog):
    class Broken:
        def start_span(self, *a, **k):
            raise RuntimeError("exporter down")

    telemetry, _ = GuardTelemetry.in_memory()
    telemetry.tracer = Broken()
    guarded(telemetry)  # no exception
    assert "could not record" in caplog.text


def test_missing_extra_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "opentelemetry.trace", None)
    with pytest.raises(MissingExtraError, match=r"extra 'otel'.*pip install 'pyguard\[otel\]'"):
        GuardTelemetry()
