"""Joining the Java side's OpenTelemetry trace: the W3C ``traceparent`` of the span active in the JVM.

When the Java application runs with OpenTelemetry (the Java agent, Spring Boot or Quarkus instrumentation), the
span active on the agent's thread is what a run should join. The Java sensor reads it there, in the listener's
``onRequest`` (:class:`dev.pyguard.bridge.TraceContexts`), and sends it with each event
(``IterationEvent.trace_context``); :class:`~pyguard.otel.GuardTelemetry` parents the run under it by default. No
configuration is needed, and it works with the default ``callback_timeout_ms``, where the guard's callback runs on a
pool thread (``pyguard-callback-N``) with no span active.

:func:`pyguard.jvm.otel_context.java_traceparent` reads the span active on the *calling* thread instead: useful only
from a thread that runs Java code inside the application's span; on the callback thread it finds nothing.
"""

from __future__ import annotations

from pyguard.base.events import traceparent  # its home: the JVM edge formats one too, below this package

__all__ = ["traceparent"]
