"""Joining the Java side's OpenTelemetry trace: the W3C ``traceparent`` of the span active in the JVM.

When the Java application runs with OpenTelemetry (the Java agent, Spring Boot or Quarkus instrumentation), the
span active on the thread that calls the model is visible through ``io.opentelemetry.api.trace.Span.current()``.
pyguard's listener callback runs on that thread, so ``GuardTelemetry(parent=java_traceparent)`` parents each
run's span under it (read at the run's first model call). When the JVM is not running, or the OpenTelemetry API
is not on its classpath, or no span is active, it returns None and the run joins the Python context instead.
"""

from __future__ import annotations

import sys

__all__ = ["java_traceparent", "traceparent"]


def traceparent(trace_id: str, span_id: str, sampled: bool = True) -> str:
    """A W3C ``traceparent`` header value."""
    return f"00-{trace_id}-{span_id}-{'01' if sampled else '00'}"


def java_traceparent() -> str | None:
    """The ``traceparent`` of the span active on this thread in the JVM, or None (see the module docstring)."""
    if "jpype" not in sys.modules:  # never start or import the JVM edge just to look
        return None
    from pyguard.jvm.otel_context import current_java_span

    found = current_java_span()
    if found is None:
        return None
    trace_id, span_id, sampled = found
    return traceparent(trace_id, span_id, sampled)
