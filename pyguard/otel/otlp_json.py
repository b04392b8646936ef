"""OTLP JSON: writing spans to a file as a collector's file exporter does, and reading such files back.

Writing (:class:`OtlpJsonFileExporter`, an OpenTelemetry ``SpanExporter``) uses the SDK's own OTLP encoder
(``opentelemetry-exporter-otlp-proto-common``) and the protobuf JSON mapping, with the two changes the OTLP/JSON
specification makes: trace and span ids are hex strings and enums are integers. Each export appends one line
``{"resourceSpans": [...]}``.

Reading (:func:`read_spans`) takes what collectors, Jaeger v2 and Langfuse-style exports write: one JSON object
``{"resourceSpans": [...]}`` (or Jaeger ``/api/v3``'s ``{"result": {"resourceSpans": [...]}}``), JSON Lines of such
objects, or a JSON array of them; ids in hex or base64; integers as numbers or strings; status codes as integers or
enum names (``STATUS_CODE_ERROR``). It yields flat :class:`Span` s (attributes decoded to Python values).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyguard.base._extras import require
from pyguard.base.errors import InputError, TraceFormatError
from pyguard.base.safe_reader import loads, read_source

__all__: list[str] = []


_HEX = re.compile(r"[0-9a-fA-F]{16}|[0-9a-fA-F]{32}")


def _hex_id(value: Any) -> Any:
    """An id as lower-case hex: kept when it is hex already (OTLP/JSON), decoded when base64 (protobuf JSON)."""
    if isinstance(value, str) and _HEX.fullmatch(value):
        return value.lower()
    if isinstance(value, str) and value:
        try:
            return base64.b64decode(value, validate=True).hex()
        except (binascii.Error, ValueError):
            return value
    return value


def encode_spans_json(spans: Sequence[Any]) -> dict[str, Any]:
    """SDK ``ReadableSpan`` s as one OTLP/JSON ``ExportTraceServiceRequest`` object."""
    enc = require("opentelemetry.exporter.otlp.proto.common.trace_encoder", extra="otel", feature="OTLP JSON export")
    json_format = require("google.protobuf.json_format", extra="otel", feature="OTLP JSON export")
    message = json_format.MessageToDict(enc.encode_spans(spans), use_integers_for_enums=True)
    for rs in message.get("resourceSpans", ()):
        for ss in rs.get("scopeSpans", ()):
            for span in ss.get("spans", ()):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = _hex_id(span[key])
                for link in span.get("links", ()):
                    for key in ("traceId", "spanId"):
                        if key in link:
                            link[key] = _hex_id(link[key])
    return message


def _exporter_base() -> Any:
    export = require("opentelemetry.sdk.trace.export", extra="otel", feature="OTLP JSON export")
    return export.SpanExporter, export.SpanExportResult


class _FileExporterMixin:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        self._closed = False
        parent = os.path.dirname(self.path)
        if parent:
            os.makedirs(parent, exist_ok=True)

    def append(self, line: str) -> bool:
        """Append one line (False once shut down)."""
        if self._closed:
            return False
        with self._lock, open(self.path, "a", encoding="utf-8") as f:
            f.write(line)
        return True

    def export(self, spans: Sequence[Any]) -> Any:
        _, result = _exporter_base()
        line = json.dumps(encode_spans_json(spans), ensure_ascii=False, separators=(",", ":")) + "\n"
        return result.SUCCESS if self.append(line) else result.FAILURE

    def shutdown(self) -> None:
        self._closed = True

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def file_exporter(path: str | os.PathLike[str]) -> Any:
    """An ``OtlpJsonFileExporter`` (an OpenTelemetry SpanExporter) appending OTLP JSON Lines to ``path``."""
    return __getattr__("OtlpJsonFileExporter")(path)


def metrics_file_exporter(path: str | os.PathLike[str]) -> Any:
    """An OpenTelemetry MetricExporter appending OTLP JSON Lines ``{"resourceMetrics": [...]}`` to ``path`` (the same
    file as the spans may hold them: the reader skips them, as a collector's file exporter writes both)."""
    sdk = require("opentelemetry.sdk.metrics.export", extra="otel", feature="OTLP JSON export")
    enc = require("opentelemetry.exporter.otlp.proto.common.metrics_encoder", extra="otel", feature="OTLP JSON export")
    json_format = require("google.protobuf.json_format", extra="otel", feature="OTLP JSON export")
    lines = _FileExporterMixin(path)

    class OtlpJsonMetricsFileExporter(sdk.MetricExporter):  # type: ignore[name-defined]
        """Metrics as OTLP JSON Lines, one line per export."""

        def export(self, metrics_data: Any, timeout_millis: float = 10_000, **kwargs: Any) -> Any:
            message = json_format.MessageToDict(enc.encode_metrics(metrics_data), use_integers_for_enums=True)
            if not message.get("resourceMetrics"):
                return sdk.MetricExportResult.SUCCESS
            ok = lines.append(json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n")
            return sdk.MetricExportResult.SUCCESS if ok else sdk.MetricExportResult.FAILURE

        def force_flush(self, timeout_millis: float = 10_000) -> bool:
            return True

        def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
            lines.shutdown()

    return OtlpJsonMetricsFileExporter()


def __getattr__(name: str) -> Any:
    # The exporter class subclasses the SDK's SpanExporter, which only exists with the extra: build it lazily.
    if name == "OtlpJsonFileExporter":
        base, _ = _exporter_base()
        cls = type(
            "OtlpJsonFileExporter",
            (_FileExporterMixin, base),
            {
                "__doc__": "An OpenTelemetry SpanExporter appending OTLP JSON Lines to a file (one line per export).",
                "__module__": __name__,
            },
        )
        globals()[name] = cls
        return cls
    raise AttributeError(name)


# -- reading -----------------------------------------------------------------------------------------------------------


@dataclass
class SpanEvent:
    name: str
    time_ns: int
    attributes: dict[str, Any]


@dataclass
class Span:
    """One span as read from an OTLP JSON file."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    status_code: int = 0
    """0 unset, 1 ok, 2 error."""
    status_message: str = ""
    events: list[SpanEvent] = field(default_factory=list)
    order: int = 0
    """Position in the file (a tie-breaker for spans that start at the same time)."""

    @property
    def operation(self) -> str | None:
        op = self.attributes.get("gen_ai.operation.name")
        return op if isinstance(op, str) else None


def _value(v: Any) -> Any:
    if not isinstance(v, dict):
        return v
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        return int(v["intValue"])
    if "doubleValue" in v:
        return float(v["doubleValue"])
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "arrayValue" in v:
        return [_value(x) for x in (v["arrayValue"] or {}).get("values", ())]
    if "kvlistValue" in v:
        return {kv["key"]: _value(kv.get("value")) for kv in (v["kvlistValue"] or {}).get("values", ())}
    if "bytesValue" in v:
        return v["bytesValue"]
    return None


def _attributes(items: Any) -> dict[str, Any]:
    if isinstance(items, dict):  # some exporters write a plain mapping
        return dict(items)
    return {kv["key"]: _value(kv.get("value")) for kv in items or () if isinstance(kv, dict) and "key" in kv}


_STATUS = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2, "UNSET": 0, "OK": 1, "ERROR": 2}


def _status_code(v: Any) -> int:
    """A status code as an integer or as its enum name (``STATUS_CODE_ERROR``, what protobuf JSON and Jaeger's
    ``/api/v3`` write)."""
    if isinstance(v, str) and v.strip().upper() in _STATUS:
        return _STATUS[v.strip().upper()]
    return int(v or 0)


_OTHER_SIGNALS = frozenset({"resourceMetrics", "resourceLogs"})


def _spans_of(request: Any, where: str, counter: list[int]) -> Iterator[Span]:
    if isinstance(request, dict) and isinstance(request.get("result"), dict) and "resourceSpans" not in request:
        request = request["result"]  # Jaeger's /api/v3 answer: {"result": {"resourceSpans": [...]}}
    if isinstance(request, dict) and "resourceSpans" not in request and _OTHER_SIGNALS & request.keys():
        return  # metrics or logs, which a collector's file exporter (and GuardTelemetry.to_file) write beside spans
    if not isinstance(request, dict) or "resourceSpans" not in request:
        raise InputError(
            f"{where}: not an OTLP JSON trace export (no 'resourceSpans'); export GenAI spans as OTLP "
            "JSON (a collector's file exporter, Jaeger's OTLP export)"
        )
    for rs in request.get("resourceSpans") or ():
        for ss in rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or ():
            for s in ss.get("spans") or ():
                try:
                    status = s.get("status") or {}
                    counter[0] += 1
                    yield Span(
                        trace_id=_hex_id(s["traceId"]),
                        span_id=_hex_id(s["spanId"]),
                        parent_span_id=_hex_id(s.get("parentSpanId")) or None,
                        name=str(s.get("name", "")),
                        start_ns=int(s.get("startTimeUnixNano") or 0),
                        end_ns=int(s.get("endTimeUnixNano") or 0),
                        attributes=_attributes(s.get("attributes")),
                        status_code=_status_code(status.get("code")),
                        status_message=str(status.get("message") or ""),
                        events=[
                            SpanEvent(
                                str(e.get("name", "")),
                                int(e.get("timeUnixNano") or 0),
                                _attributes(e.get("attributes")),
                            )
                            for e in s.get("events") or ()
                        ],
                        order=counter[0],
                    )
                except (KeyError, TypeError, ValueError) as exc:
                    raise InputError(
                        f"{where}: span {s.get('name')!r} is malformed ({type(exc).__name__}: {exc}); "
                        "every span needs traceId, spanId and integer times"
                    ) from None


def looks_like_otlp(path: str | os.PathLike[str]) -> bool:
    """True when the file's first kilobytes hold an OTLP JSON ``resourceSpans`` key."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return head.lstrip()[:1] in (b"{", b"[") and b'"resourceSpans"' in head


def read_spans(path: str | os.PathLike[str]) -> list[Span]:
    """Every span of an OTLP JSON file (one object, JSON Lines of objects, or an array of objects), read through
    the safe reader (:mod:`pyguard.base.safe_reader`: line size, nesting depth, integer size)."""
    src = read_source(path)
    src.refuse_oversize()
    p = src.name
    counter = [0]
    try:
        whole = loads(src.data, source=p)
    except TraceFormatError:
        if len(src.data.strip().splitlines()) <= 1:
            raise
        whole = None  # JSON Lines: the line a limit refuses is named below
    except json.JSONDecodeError:
        whole = None
    if whole is not None:
        requests = whole if isinstance(whole, list) else [whole]
        return [s for i, r in enumerate(requests) for s in _spans_of(r, f"{p} (object {i + 1})", counter)]
    spans: list[Span] = []
    for number, line in enumerate(src.data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            request = loads(line, source=p, line=number)
        except json.JSONDecodeError as exc:
            raise TraceFormatError(
                f"not valid JSON ({exc}); an OTLP JSON file holds one export object per line", path=p, line=number
            ) from None
        spans.extend(_spans_of(request, f"{p}:{number}", counter))
    return spans
