"""OpenTelemetry: guarded runs exported as GenAI spans, and OTLP JSON exports of GenAI spans imported as runs.

    from pyguard.otel import GuardTelemetry, export_runs, import_otlp
    guard = Guard(telemetry=GuardTelemetry.to_file("spans.jsonl", capture_content=True))
    runs = import_otlp("spans.jsonl").runs

Export needs the ``otel`` extra (``pip install 'pyguard[otel]'``); import reads JSON and needs nothing extra.
Names are in :mod:`pyguard.otel.semconv`.
"""

from pyguard.otel.capture import ContentCapture
from pyguard.otel.context import traceparent
from pyguard.otel.export import RunSpans, content_capture_default
from pyguard.otel.otlp_import import OtlpImport, import_otlp, spans_to_runs
from pyguard.otel.otlp_json import Span, looks_like_otlp, read_spans
from pyguard.otel.telemetry import GuardTelemetry, export_runs

__all__ = [
    "ContentCapture",
    "GuardTelemetry",
    "OtlpImport",
    "RunSpans",
    "Span",
    "content_capture_default",
    "export_runs",
    "import_otlp",
    "looks_like_otlp",
    "read_spans",
    "spans_to_runs",
    "traceparent",
]
