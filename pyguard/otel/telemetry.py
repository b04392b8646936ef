"""Where a Guard's spans go, and the export of recorded runs.

    telemetry = GuardTelemetry.to_file("spans.jsonl", capture_content=True)   # or .to_otlp(...), or GuardTelemetry()
    guard = Guard(telemetry=telemetry)                                         # every run now emits spans
    export_runs(load_runs("traces/"), telemetry)                               # recorded runs too

The spans themselves are described in :mod:`pyguard.otel.export`. Needs the ``otel`` extra.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pyguard._extras import require
from pyguard.decisions import Decision
from pyguard.errors import ConfigError
from pyguard.events import IterationEvent, RunRecord, RunStart
from pyguard.otel.capture import ContentCapture, capture_on_spans
from pyguard.otel.export import RunSpans, trace_api
from pyguard.otel.metrics import ClientMetrics
from pyguard.trace.records import TraceRun

__all__ = ["GuardTelemetry", "export_runs"]

_TRACER_NAME = "pyguard"
_MODES = ("full", "decisions")
_MODES_HELP = (
    "'full' emits the run, model-call, tool and guardrail spans and the GenAI metrics; 'decisions' only the guard's "
    "interventions, for applications whose own instrumentation emits the GenAI spans (Quarkus LangChain4j, Spring AI)"
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
    GenAI client metrics go (the global one by default; ``metrics=False`` for none)."""

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
    ) -> None:
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
        cls, exporter: Any, *, service_name: str = "pyguard", batch: bool = False, **kwargs: Any
    ) -> GuardTelemetry:
        """A telemetry with its own SDK tracer provider exporting to ``exporter`` (simple processor: each span
        is exported when it ends; ``batch=True`` for a batch processor)."""
        sdk = require("opentelemetry.sdk.trace", extra="otel", feature="OpenTelemetry export")
        export = require("opentelemetry.sdk.trace.export", extra="otel", feature="OpenTelemetry export")
        resources = require("opentelemetry.sdk.resources", extra="otel", feature="OpenTelemetry export")
        provider = sdk.TracerProvider(resource=resources.Resource.create({"service.name": service_name}))
        processor = export.BatchSpanProcessor(exporter) if batch else export.SimpleSpanProcessor(exporter)
        provider.add_span_processor(processor)
        return cls(provider, **kwargs)

    @classmethod
    def to_file(cls, path: str | os.PathLike[str], **kwargs: Any) -> GuardTelemetry:
        """Spans appended to ``path`` as OTLP JSON Lines."""
        from pyguard.otel.otlp_json import file_exporter

        return cls.with_exporter(file_exporter(path), **kwargs)

    @classmethod
    def to_otlp(
        cls, endpoint: str | None = None, *, headers: Mapping[str, str] | None = None, **kwargs: Any
    ) -> GuardTelemetry:
        """Spans sent to an OTLP/HTTP endpoint (default: ``OTEL_EXPORTER_OTLP_*`` environment variables), batched."""
        otlp = require("opentelemetry.exporter.otlp.proto.http.trace_exporter", extra="otel", feature="OTLP export")
        exporter = otlp.OTLPSpanExporter(endpoint=endpoint, headers=dict(headers) if headers else None)
        return cls.with_exporter(exporter, batch=True, **kwargs)

    @classmethod
    def in_memory(cls, **kwargs: Any) -> tuple[GuardTelemetry, Any]:
        """A telemetry and the SDK's InMemorySpanExporter that receives its spans (``get_finished_spans()``)."""
        mem = require(
            "opentelemetry.sdk.trace.export.in_memory_span_exporter", extra="otel", feature="OpenTelemetry export"
        )
        exporter = mem.InMemorySpanExporter()
        return cls.with_exporter(exporter, **kwargs), exporter

    def start_run(self, start: RunStart) -> RunSpans:
        """The span recorder of one run (the Guard calls this when a run starts). Joins the active context
        unless ``parent`` gives one (a callable returning None falls back to the active context too)."""
        context = require("opentelemetry.context", extra="otel", feature="OpenTelemetry export")
        return self.spans(start, clock_ms=self.clock_ms, fallback=context.get_current())

    def flush(self) -> None:
        for provider in (self.provider, self.meter_provider):
            if provider is not None and hasattr(provider, "force_flush"):
                provider.force_flush()

    def shutdown(self) -> None:
        for provider in (self.provider, self.meter_provider):
            if provider is not None and hasattr(provider, "shutdown"):
                provider.shutdown()


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
