"""Where a Guard's spans go, and the export of recorded runs.

    telemetry = GuardTelemetry.to_file("spans.jsonl", capture_content=True)   # or .to_otlp(...), or GuardTelemetry()
    guard = Guard(telemetry=telemetry)                                         # every run now emits spans
    export_runs(load_runs("traces/"), telemetry)                               # recorded runs too

The spans themselves are described in :mod:`pyguard.otel.export`. :meth:`GuardTelemetry.to_file` and
:meth:`GuardTelemetry.to_otlp` set up the GenAI metrics with the spans: the same resource, the same file or the same
endpoint family (``/v1/metrics`` beside ``/v1/traces``). Flushing and shutting down are bounded by ``timeout_s``
(default :data:`DEFAULT_TIMEOUT_S`, or ``PYGUARD_OTEL_TIMEOUT_S``): with the collector down, ``shutdown()`` returns
within about that long instead of the exporter's own retries (25-30 s). Needs the ``otel`` extra.
"""

from __future__ import annotations

import logging
import math
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pyguard.base._extras import require
from pyguard.base.decisions import Decision
from pyguard.base.errors import ConfigError
from pyguard.base.events import IterationEvent, RunRecord, RunStart
from pyguard.otel.capture import ContentCapture, capture_on_spans
from pyguard.otel.export import RunSpans, trace_api
from pyguard.otel.metrics import ClientMetrics
from pyguard.otel.otlp_json import file_exporter, metrics_file_exporter
from pyguard.trace.records import TraceRun

__all__: list[str] = []

DEFAULT_TIMEOUT_S = 5.0
"""Seconds a flush or a shutdown of the telemetry may take, and an OTLP export request (with its retries)."""
TIMEOUT_ENV = "PYGUARD_OTEL_TIMEOUT_S"

log = logging.getLogger(__name__)
_TRACER_NAME = "pyguard"
_MODES = ("full", "decisions")
_MODES_HELP = (
    "'full' emits the run, model-call, tool and guardrail spans and the GenAI metrics; 'decisions' only the guard's "
    "interventions, for applications whose own instrumentation emits the GenAI spans (Quarkus LangChain4j, Spring AI)"
)


def _timeout_s(value: float | None) -> float:
    """``value``, else ``PYGUARD_OTEL_TIMEOUT_S``, else :data:`DEFAULT_TIMEOUT_S`; a ConfigError naming a bad one."""
    raw: Any = value if value is not None else os.environ.get(TIMEOUT_ENV)
    if raw is None or raw == "":
        return DEFAULT_TIMEOUT_S
    try:
        seconds = float(raw)
    except (TypeError, ValueError):
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        where = "timeout_s" if value is not None else TIMEOUT_ENV
        raise ConfigError(f"{where}={raw!r} is not a positive number of seconds; the default is {DEFAULT_TIMEOUT_S:g}")
    return seconds


def _is_base_url(url: str) -> bool:
    from urllib.parse import urlsplit

    return urlsplit(url).path in ("", "/")


def _metrics_endpoint(traces: str | None) -> str | None:
    """The OTLP/HTTP metrics URL beside a traces URL (``.../v1/traces`` -> ``.../v1/metrics``); None (the
    ``OTEL_EXPORTER_OTLP_*`` variables decide) stays None; any other path is a ConfigError asking for
    ``metrics_endpoint``."""
    if traces is None:
        return None
    if traces.rstrip("/").endswith("/v1/traces"):
        return traces.rstrip("/")[: -len("/v1/traces")] + "/v1/metrics"
    raise ConfigError(
        f"endpoint={traces!r} does not end in /v1/traces: pass metrics_endpoint= too (or metrics=False), so the "
        "GenAI metrics know where to go"
    )


def _metrics_api() -> Any:
    return require("opentelemetry.metrics", extra="otel", feature="OpenTelemetry metrics")


class GuardTelemetry:
    """Where a Guard's spans go: a tracer provider (the global one by default) and the export options.

    ``Guard(telemetry=GuardTelemetry(...))`` makes every run emit its spans as it goes. The constructors
    :meth:`to_file` (OTLP JSON Lines, what a collector's file exporter writes and ``pyguard replay`` reads),
    :meth:`to_otlp` (an OTLP/HTTP endpoint) and :meth:`in_memory` (tests) build their own provider.

    ``capture_content``: True/False or one of the GenAI instrumentations' values (``NO_CONTENT``, ``SPAN_ONLY``,
    ``EVENT_ONLY``, ``SPAN_AND_EVENT``; see :mod:`pyguard.otel.capture`); None reads
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``. Without it the export holds no text of the task, the
    model or the tools.

    ``conversation_id``: the ``gen_ai.conversation.id`` of the runs (a string, or a function of the run's start,
    e.g. your chat memory id); None leaves it out: a run is not a conversation, and Langfuse groups spans by it.
    ``mode="decisions"``: only the guard's interventions, as guardrail spans under the application's own spans (see
    :mod:`pyguard.otel.guardrail`), for applications that already emit GenAI spans. ``meter_provider``: where the
    GenAI client metrics go (the global one by default; ``metrics=False`` for none; :meth:`to_file` and
    :meth:`to_otlp` make their own, beside the spans). ``timeout_s``: the bound on :meth:`flush` and :meth:`shutdown`
    (default :data:`DEFAULT_TIMEOUT_S`, or the ``PYGUARD_OTEL_TIMEOUT_S`` environment variable)."""

    def __init__(
        self,
        tracer_provider: Any = None,
        *,
        capture_content: bool | str | ContentCapture | None = None,
        parent: Any = None,
        agent_name: str | None = None,
        clock_ms: Callable[[], float] | None = None,
        conversation_id: str | Callable[[RunStart], str | None] | None = None,
        mode: str = "full",
        meter_provider: Any = None,
        metrics: bool = True,
        timeout_s: float | None = None,
    ) -> None:
        self.timeout_s = _timeout_s(timeout_s)
        if mode not in _MODES:
            raise ConfigError(f"telemetry mode {mode!r} is not one of {', '.join(_MODES)}: {_MODES_HELP}")
        trace = trace_api()
        self.provider = tracer_provider
        self.tracer = (
            tracer_provider.get_tracer(_TRACER_NAME) if tracer_provider is not None else trace.get_tracer(_TRACER_NAME)
        )
        self.capture_content = capture_on_spans(capture_content)
        self.parent = parent
        self.agent_name = agent_name
        self.clock_ms = clock_ms
        self.conversation_id = conversation_id
        self.mode = mode
        self.meter_provider = meter_provider
        self.metrics: ClientMetrics | None = None
        if metrics and mode == "full":
            meter = (
                meter_provider.get_meter(_TRACER_NAME)
                if meter_provider is not None
                else _metrics_api().get_meter(_TRACER_NAME)
            )
            self.metrics = ClientMetrics(meter)

    def spans(
        self, start: RunStart, *, clock_ms: Callable[[], float] | None = None, live: bool = True, fallback: Any = None
    ) -> RunSpans:
        """The span recorder of one run with this telemetry's options."""
        conversation = self.conversation_id(start) if callable(self.conversation_id) else self.conversation_id
        return RunSpans(
            self.tracer,
            start,
            agent_name=self.agent_name,
            capture_content=self.capture_content,
            parent=self.parent,
            fallback=fallback,
            clock_ms=clock_ms,
            live=live,
            conversation_id=conversation,
            decisions_only=self.mode == "decisions",
            metrics=self.metrics,
        )

    @classmethod
    def with_exporter(
        cls,
        exporter: Any,
        *,
        service_name: str = "pyguard",
        batch: bool = False,
        metric_exporter: Any = None,
        **kwargs: Any,
    ) -> GuardTelemetry:
        """A telemetry with its own SDK tracer provider exporting to ``exporter`` (simple processor: each span
        is exported when it ends; ``batch=True`` for a batch processor), and, with ``metric_exporter``, its own meter
        provider exporting the GenAI metrics there, with the same resource (read every minute and at flush and
        shutdown)."""
        sdk = require("opentelemetry.sdk.trace", extra="otel", feature="OpenTelemetry export")
        export = require("opentelemetry.sdk.trace.export", extra="otel", feature="OpenTelemetry export")
        resources = require("opentelemetry.sdk.resources", extra="otel", feature="OpenTelemetry export")
        timeout_ms = _timeout_s(kwargs.get("timeout_s")) * 1000.0
        resource = resources.Resource.create({"service.name": service_name})
        provider = sdk.TracerProvider(resource=resource)
        processor = (
            export.BatchSpanProcessor(exporter, export_timeout_millis=timeout_ms)
            if batch
            else export.SimpleSpanProcessor(exporter)
        )
        provider.add_span_processor(processor)
        wants_metrics = kwargs.get("metrics", True) and kwargs.get("mode", "full") == "full"
        if metric_exporter is not None and wants_metrics and kwargs.get("meter_provider") is None:
            metrics_sdk = require("opentelemetry.sdk.metrics", extra="otel", feature="OpenTelemetry metrics")
            readers = require("opentelemetry.sdk.metrics.export", extra="otel", feature="OpenTelemetry metrics")
            reader = readers.PeriodicExportingMetricReader(metric_exporter, export_timeout_millis=timeout_ms)
            kwargs["meter_provider"] = metrics_sdk.MeterProvider(resource=resource, metric_readers=[reader])
        return cls(provider, **kwargs)

    @classmethod
    def to_file(cls, path: str | os.PathLike[str], **kwargs: Any) -> GuardTelemetry:
        """Spans and the GenAI metrics appended to ``path`` as OTLP JSON Lines (``resourceSpans`` and
        ``resourceMetrics`` lines, as a collector's file exporter writes them; readers of spans skip the metrics)."""

        return cls.with_exporter(file_exporter(path), metric_exporter=metrics_file_exporter(path), **kwargs)

    @classmethod
    def to_otlp(
        cls,
        endpoint: str | None = None,
        *,
        headers: Mapping[str, str] | None = None,
        metrics_endpoint: str | None = None,
        **kwargs: Any,
    ) -> GuardTelemetry:
        """Spans (batched) and the GenAI metrics sent to an OTLP/HTTP collector: ``endpoint`` is the traces URL
        (``http://host:4318/v1/traces``, or the base ``http://host:4318``); the metrics go to ``/v1/metrics`` beside it
        (``metrics_endpoint`` overrides); None: the ``OTEL_EXPORTER_OTLP_*`` environment variables decide both. Each
        export request, retries included, is bounded by ``timeout_s``."""
        otlp = require("opentelemetry.exporter.otlp.proto.http.trace_exporter", extra="otel", feature="OTLP export")
        timeout = _timeout_s(kwargs.get("timeout_s"))
        extra = dict(headers) if headers else None
        if endpoint is not None and _is_base_url(endpoint):  # the collector's base URL: each signal's path on it
            endpoint = endpoint.rstrip("/") + "/v1/traces"
        exporter = otlp.OTLPSpanExporter(endpoint=endpoint, headers=extra, timeout=timeout)
        metric_exporter = None
        if kwargs.get("metrics", True) and kwargs.get("mode", "full") == "full":
            otlp_metrics = require(
                "opentelemetry.exporter.otlp.proto.http.metric_exporter", extra="otel", feature="OTLP export"
            )
            metric_exporter = otlp_metrics.OTLPMetricExporter(
                endpoint=metrics_endpoint or _metrics_endpoint(endpoint), headers=extra, timeout=timeout
            )
        return cls.with_exporter(exporter, batch=True, metric_exporter=metric_exporter, **kwargs)

    @classmethod
    def in_memory(cls, **kwargs: Any) -> tuple[GuardTelemetry, Any]:
        """A telemetry and the SDK's InMemorySpanExporter that receives its spans (``get_finished_spans()``)."""
        mem = require(
            "opentelemetry.sdk.trace.export.in_memory_span_exporter", extra="otel", feature="OpenTelemetry export"
        )
        exporter = mem.InMemorySpanExporter()
        return cls.with_exporter(exporter, **kwargs), exporter

    def start_run(self, start: RunStart, *, caller_traceparent: str | None = None) -> RunSpans:
        """The span recorder of one run (the Guard calls this when a run starts, on the caller's thread). Its
        fallback parent (when ``parent`` gives none and the sensor reads no Java span on the agent's thread): the
        active Python context when it holds a span, else ``caller_traceparent`` (the Java span active on the calling
        thread, which the agent's thread may not have), else the active context."""
        context = require("opentelemetry.context", extra="otel", feature="OpenTelemetry export")
        fallback = context.get_current()
        if caller_traceparent and not trace_api().get_current_span(fallback).get_span_context().is_valid:
            propagate = require(
                "opentelemetry.trace.propagation.tracecontext", extra="otel", feature="OpenTelemetry export"
            )
            fallback = propagate.TraceContextTextMapPropagator().extract({"traceparent": caller_traceparent})
        return self.spans(start, clock_ms=self.clock_ms, fallback=fallback)

    def _providers(self) -> list[Any]:
        return [p for p in (self.provider, self.meter_provider) if p is not None]

    def flush(self) -> bool:
        """Export what is buffered, within ``timeout_s`` per provider; False when something was not exported."""
        ok = True
        for provider in self._providers():
            if hasattr(provider, "force_flush"):
                ok = bool(provider.force_flush(int(self.timeout_s * 1000))) and ok
        return ok

    def shutdown(self) -> bool:
        """Flush and shut the providers down, within about ``timeout_s`` in all (a collector that is down cannot
        hold the caller longer); False when that bound was hit (what was not exported is dropped)."""
        done = threading.Event()

        def close() -> None:
            try:
                for provider in self._providers():
                    if hasattr(provider, "shutdown"):
                        provider.shutdown()
            finally:
                done.set()

        threading.Thread(target=close, name="pyguard-telemetry-shutdown", daemon=True).start()
        if done.wait(self.timeout_s + 1.0):
            return True
        log.warning(
            "pyguard: the telemetry did not shut down within %.1f s; what was not exported is dropped", self.timeout_s
        )
        return False


def export_runs(
    runs: Iterable[RunRecord | TraceRun],
    telemetry: GuardTelemetry,
    decisions: Mapping[str, Sequence[Decision]] | None = None,
) -> int:
    """Emit the spans of recorded runs (their recorded times where they have them); returns how many runs."""
    n = 0
    for run in runs:
        record, ds = (
            (run.record, run.decisions) if isinstance(run, TraceRun) else (run, (decisions or {}).get(run.run_id, ()))
        )
        by_iteration = {d.iteration: d for d in ds if d.iteration is not None}
        clock = _ReplayClock(record)
        spans = telemetry.spans(record.start, clock_ms=clock, live=False)
        for event in record.events:
            clock.at(event)
            spans.iteration(event, by_iteration.get(event.index))
        spans.end(record.end)
        n += 1
    telemetry.flush()
    return n


class _ReplayClock:
    """Recorded time for spans of a recorded run: each call's end from its timestamp, else the previous end plus
    its latency, starting at the run's start (or 0)."""

    def __init__(self, record: RunRecord) -> None:
        self.now = record.start.started_at_ms or 0.0

    def at(self, event: IterationEvent) -> None:
        if event.timestamp_ms is None:
            self.now += event.latency_ms or 0.0

    def __call__(self) -> float:
        return self.now
