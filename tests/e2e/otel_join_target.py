"""A guarded run inside a Java application's span (run as a subprocess by test_otel_java_join.py; not a test module).

Usage: python otel_join_target.py JAR [JAR...]
Starts a JVM with the OpenTelemetry API jars given, makes a Java span current on the agent's thread, runs a scripted
agent guarded by a default Guard (its callback on a pool thread: the default deadline) exporting to memory, and prints
one JSON line: the application span's ids, the run span's parent and trace ids, and each span's trace id."""

from __future__ import annotations

import json
import sys

from pyguard.guard import Guard
from pyguard.jvm import build_agent, jclass, load_scenario, run_built, start_jvm
from pyguard.jvm.agents import scripted_model
from pyguard.otel import GuardTelemetry
from pyguard.otel import semconv as sc

TRACE_ID, SPAN_ID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"


def main(jars: list[str]) -> None:
    start_jvm(classpath=jars)
    span_class, context_class = (
        jclass("io.opentelemetry.api.trace.Span"),
        jclass("io.opentelemetry.api.trace.SpanContext"),
    )
    flags, state = jclass("io.opentelemetry.api.trace.TraceFlags"), jclass("io.opentelemetry.api.trace.TraceState")
    app_span = span_class.wrap(context_class.create(TRACE_ID, SPAN_ID, flags.getSampled(), state.getDefault()))

    def guarded_run(mode: str, scenario: dict | str):  # noqa: ANN202
        telemetry, exporter = GuardTelemetry.in_memory(mode=mode)
        guard = Guard(telemetry=telemetry)
        run = guard.start_run(task="Where is order 34567?", task_type="lookup", agent_style="agentic")
        guarded = run.guarded_model(scripted_model(scenario, seed=3))
        agent = build_agent("agentic", guarded)

        def in_app_span(_agent):  # on the thread that runs the agent, as an instrumented Java application would
            scope = app_span.makeCurrent()
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
    print(
        json.dumps(
            {
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
        )
    )


if __name__ == "__main__":
    main(sys.argv[1:])
