"""The span active in the JVM on this thread, read through the OpenTelemetry Java API when it is on the classpath
(see :func:`java_traceparent`)."""

from __future__ import annotations

import sys

from pyguard.base.events import traceparent

__all__: list[str] = []


def current_java_span() -> tuple[str, str, bool] | None:
    """(trace id, span id, sampled) of ``io.opentelemetry.api.trace.Span.current()``; None when the JVM is not
    started, the OpenTelemetry API is not on its classpath, or no valid span is active."""
    import jpype

    if not jpype.isJVMStarted():
        return None
    try:
        span_class = jpype.JClass("io.opentelemetry.api.trace.Span")
    except Exception:  # the class is not on the classpath
        return None
    ctx = span_class.current().getSpanContext()
    if not bool(ctx.isValid()):
        return None
    return str(ctx.getTraceId()), str(ctx.getSpanId()), bool(ctx.isSampled())


def java_traceparent() -> str | None:
    """The ``traceparent`` of the span active on the calling thread in the JVM, or None (see
    :mod:`pyguard.otel.context`; the header formatted by :func:`pyguard.base.events.traceparent`)."""
    if "jpype" not in sys.modules:  # never start or import the JVM edge just to look
        return None
    found = current_java_span()
    if found is None:
        return None
    trace_id, span_id, sampled = found
    return traceparent(trace_id, span_id, sampled)
