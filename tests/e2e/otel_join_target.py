"""Guarded runs inside a Java application's span (run as a subprocess by test_otel_java_join.py; not a test module).

Usage: python otel_join_target.py agent|caller JAR [JAR...]
Starts a JVM with the OpenTelemetry API jars given and makes a Java span current, then prints one JSON line.
``agent``: the span is current on the agent's thread; a scripted agent guarded by a Guard with a deadline (its
callback on a pool thread) exports to memory; prints the application span's ids, the run span's parent and trace
ids, and each span's trace id. ``caller``: the span is current on the main thread (the caller's), which calls
``guard.run`` and ``guard.run_scenario``: the agent runs on a thread pyguard starts (the main thread waits, so Ctrl-C
lands), where that span is not current; prints each run span's parent and trace ids.

The deadline is only a guard against a hang (tests/conftest.py: ``HANG_GUARD_MS``), so a loaded machine changes no
outcome."""

from __future__ import annotations

import json
import sys
from typing import Any

from pyguard.jvm import build_agent, jclass, load_scenario, run_built, start_jvm
from pyguard.jvm.agents import scripted_model
from pyguard.live.guard import Guard
from pyguard.otel import GuardTelemetry
from pyguard.otel import semconv as sc

HANG_GUARD_MS = 600_000
APP_SPANS = {  # (trace id, span id) of the application's span, per mode
    "agent": ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"),
    "caller": ("5bf92f3577b34da6a3ce929d0e0e4737", "10f067aa0ba902b8"),
}


def app_span(trace_id: str, span_id: str) -> Any:
    span_class, context_class = (
        jclass("io.opentelemetry.api.trace.Span"),
        jclass("io.opentelemetry.api.trace.SpanContext"),
    )
    flags, state = jclass("io.opentelemetry.api.trace.TraceFlags"), jclass("io.opentelemetry.api.trace.TraceState")
    return span_class.wrap(context_class.create(trace_id, span_id, flags.getSampled(), state.getDefault()))


def on_the_agents_thread(span: Any) -> dict:
    def guarded_run(mode: str, scenario: dict | str):  # noqa: ANN202
        telemetry, exporter = GuardTelemetry.in_memory(mode=mode)
        guard = Guard(telemetry=telemetry, callback_timeout_ms=HANG_GUARD_MS)
        run = guard.start_run(task="Where is order 34567?", task_type="lookup", agent_style="agentic")
        guarded = run.guarded_model(scripted_model(scenario, seed=3))
        agent = build_agent("agentic", guarded)

        def in_app_span(_agent):  # on the thread that runs the agent, as an instrumented Java application would
            scope = span.makeCurrent()
            try:
                return run_built(agent, "Where is order 34567?", guarded)
            finally:
                scope.close()

        result = run.drive(in_app_span)
        return guard, result, exporter.get_finished_spans()

    guard, result, spans = guarded_run("full", "convergent")
    agent_span = next(s for s in spans if s.attributes[sc.OPERATION_NAME] == "invoke_agent")
    stubborn = dict(load_scenario("logistics_incident"))
    stubborn["on_reflection"] = {**stubborn["on_reflection"], "recover_probability": 0.0}
    _, stopped, decisions = guarded_run("decisions", stubborn)
    return {
        "outcome": result.outcome.value,
        "callback_timeout_ms": guard.callback_timeout_ms,
        "parent": f"{agent_span.parent.span_id:016x}" if agent_span.parent else None,
        "traces": sorted({f"{s.context.trace_id:032x}" for s in spans}),
        "ops": sorted(s.attributes[sc.OPERATION_NAME] for s in spans),
        "contexts": [e.trace_context for e in result.record.events],
        "decisions_outcome": stopped.outcome.value,
        "decisions_ops": [s.attributes[sc.OPERATION_NAME] for s in decisions],
        "decisions_types": [s.attributes[sc.GUARDRAIL_VERDICT_TYPE] for s in decisions],
        "decisions_parents": sorted({f"{s.parent.span_id:016x}" for s in decisions if s.parent}),
    }


def on_the_callers_thread(span: Any) -> dict:
    telemetry, exporter = GuardTelemetry.in_memory()
    guard = Guard(telemetry=telemetry, callback_timeout_ms=HANG_GUARD_MS)
    scope = span.makeCurrent()  # on the caller's thread, as an instrumented Java application would
    try:
        run = guard.run("agentic", scripted_model("convergent", seed=3), "Where is order 34567?")
        scenario = guard.run_scenario("convergent", seed=4)
    finally:
        scope.close()
    unparented = guard.run("agentic", scripted_model("convergent", seed=5), "Where is order 34568?")
    agents = [s for s in exporter.get_finished_spans() if s.attributes[sc.OPERATION_NAME] == "invoke_agent"]
    return {
        "outcomes": [r.outcome.value for r in (run, scenario, unparented)],
        "sensor_contexts": sorted({str(e.trace_context) for e in run.record.events}),
        "parents": [f"{s.parent.span_id:016x}" if s.parent else None for s in agents],
        "traces": [f"{s.context.trace_id:032x}" for s in agents],
    }


def main(mode: str, jars: list[str]) -> None:
    start_jvm(classpath=jars)
    span = app_span(*APP_SPANS[mode])
    print(json.dumps(on_the_agents_thread(span) if mode == "agent" else on_the_callers_thread(span)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
