"""A guarded run started by a thread that has a Java span current (run as a subprocess by test_otel_java_join.py; not
a test module).

Usage: python otel_caller_target.py JAR [JAR...]
Starts a JVM with the OpenTelemetry API jars, makes a Java span current on the main thread (the caller's), and calls
``guard.run`` and ``guard.run_scenario`` there: the agent runs on a thread pyguard starts (the main thread waits, so
Ctrl-C lands), where that span is not current. Prints one JSON line: each run span's parent and trace ids."""

from __future__ import annotations

import json
import sys

from pyguard.guard import Guard
from pyguard.jvm import jclass, start_jvm
from pyguard.jvm.agents import scripted_model
from pyguard.otel import GuardTelemetry
from pyguard.otel import semconv as sc

TRACE_ID, SPAN_ID = "5bf92f3577b34da6a3ce929d0e0e4737", "10f067aa0ba902b8"


def main(jars: list[str]) -> None:
    start_jvm(classpath=jars)
    span_class, context_class = (
        jclass("io.opentelemetry.api.trace.Span"),
        jclass("io.opentelemetry.api.trace.SpanContext"),
    )
    flags, state = jclass("io.opentelemetry.api.trace.TraceFlags"), jclass("io.opentelemetry.api.trace.TraceState")
    app_span = span_class.wrap(context_class.create(TRACE_ID, SPAN_ID, flags.getSampled(), state.getDefault()))
    telemetry, exporter = GuardTelemetry.in_memory()
    guard = Guard(telemetry=telemetry)
    scope = app_span.makeCurrent()  # on the caller's thread, as an instrumented Java application would
    try:
        run = guard.run("agentic", scripted_model("convergent", seed=3), "Where is order 34567?")
        scenario = guard.run_scenario("convergent", seed=4)
    finally:
        scope.close()
    unparented = guard.run("agentic", scripted_model("convergent", seed=5), "Where is order 34568?")
    agents = [s for s in exporter.get_finished_spans() if s.attributes[sc.OPERATION_NAME] == "invoke_agent"]
    print(
        json.dumps(
            {
                "outcomes": [r.outcome.value for r in (run, scenario, unparented)],
                "sensor_contexts": sorted({str(e.trace_context) for e in run.record.events}),
                "parents": [f"{s.parent.span_id:016x}" if s.parent else None for s in agents],
                "traces": [f"{s.context.trace_id:032x}" for s in agents],
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1:])
