"""Telemetry arrives whole (issue 32 point 7, issue 33 point 6): ``to_otlp`` / ``to_file`` set up the GenAI metrics with
the spans (before, the metrics went to the global meter provider, a no-op unless the application configured one); the
agent span carries ``input.value`` / ``output.value`` for Phoenix's trace list (content capture permitting); flushing
and shutting down are bounded by a pyguard setting."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402

from pyguard.base.errors import ConfigError  # noqa: E402
from pyguard.otel import GuardTelemetry  # noqa: E402
from pyguard.otel import semconv as sc  # noqa: E402
from pyguard.otel.otlp_json import read_spans  # noqa: E402
from tests.unit.otel.test_semantics import MARK, run_guarded  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


class _Collector:
    """A local OTLP/HTTP collector: records each POST's path and body, answers 200."""

    def __init__(self) -> None:
        self.received: list[tuple[str, bytes]] = []
        got = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                got.append((self.path, body))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def collector():
    c = _Collector()
    yield c
    c.close()


def _resource(request) -> dict:  # noqa: ANN001
    groups = getattr(request, "resource_metrics", None) or request.resource_spans
    return {a.key: a.value.string_value for a in groups[0].resource.attributes}


def export_in_a_fresh_process(endpoint: str, **options: str) -> None:
    """A guarded run exported over OTLP/HTTP by ``GuardTelemetry.to_otlp(endpoint, **options)`` in a process of its
    own: the exporter's HTTP client (requests) is then the one a user's process has, whatever other tests of this
    worker did to the modules it imports (seen once in CI: "You can only merge into CookieJar", nothing sent)."""
    code = (
        "import sys\n"
        "from pyguard.otel import GuardTelemetry\n"
        "from tests.unit.otel.test_semantics import run_guarded\n"
        f"telemetry = GuardTelemetry.to_otlp({endpoint!r}, **{options!r})\n"
        "run_guarded(telemetry)\n"
        "sys.exit(0 if telemetry.shutdown() else 1)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True, timeout=300)


@pytest.mark.parametrize("endpoint", ["{}/v1/traces", "{}"])
def test_to_otlp_delivers_metrics_to_the_collector_beside_the_spans(collector, endpoint):
    export_in_a_fresh_process(endpoint.format(collector.url), service_name="shop-agent")
    paths = {path for path, _ in collector.received}
    assert paths == {"/v1/traces", "/v1/metrics"}, paths
    metrics = [ExportMetricsServiceRequest.FromString(b) for p, b in collector.received if p == "/v1/metrics"]
    traces = [ExportTraceServiceRequest.FromString(b) for p, b in collector.received if p == "/v1/traces"]
    names = {m.name for r in metrics for rm in r.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}
    assert names == {sc.METRIC_OPERATION_DURATION, sc.METRIC_TOKEN_USAGE}
    assert _resource(metrics[0]) == _resource(traces[0]) and _resource(traces[0])["service.name"] == "shop-agent"


def test_to_otlp_with_another_path_asks_where_the_metrics_go(collector):
    with pytest.raises(ConfigError, match="metrics_endpoint"):
        GuardTelemetry.to_otlp(f"{collector.url}/ingest/spans")
    export_in_a_fresh_process(f"{collector.url}/ingest/spans", metrics_endpoint=f"{collector.url}/ingest/m")
    assert {p for p, _ in collector.received} == {"/ingest/spans", "/ingest/m"}


def test_to_file_writes_metrics_beside_the_spans_and_the_spans_still_read(tmp_path):
    path = tmp_path / "spans.jsonl"
    telemetry = GuardTelemetry.to_file(path)
    run_guarded(telemetry)
    telemetry.shutdown()
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    metric_lines = [x for x in lines if "resourceMetrics" in x]
    assert metric_lines and any("resourceSpans" in x for x in lines)
    names = {
        m["name"]
        for x in metric_lines
        for rm in x["resourceMetrics"]
        for sm in rm["scopeMetrics"]
        for m in sm["metrics"]
    }
    assert names == {sc.METRIC_OPERATION_DURATION, sc.METRIC_TOKEN_USAGE}
    spans = list(read_spans(path))
    assert any(s.attributes.get(sc.OPERATION_NAME) == "invoke_agent" for s in spans)


@pytest.mark.parametrize("capture", [True, False])
def test_the_agent_span_has_input_and_output_values_content_capture_permitting(capture):
    telemetry, exporter = GuardTelemetry.in_memory(capture_content=capture)
    run_guarded(telemetry)
    (agent,) = [s for s in exporter.get_finished_spans() if s.attributes.get(sc.OPERATION_NAME) == "invoke_agent"]
    if capture:
        assert agent.attributes["input.value"] == f"{MARK}-TASK"
        assert agent.attributes["output.value"] == f"{MARK}-ANSWER"
    else:
        assert "input.value" not in agent.attributes and "output.value" not in agent.attributes


class _StuckProvider:
    """A provider whose shutdown hangs until released (an exporter retrying a collector that is down)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()

    def get_tracer(self, name: str):  # noqa: ANN201
        from opentelemetry.trace import NoOpTracer

        return NoOpTracer()

    def shutdown(self) -> None:
        self.entered.set()
        self.release.wait()


def test_shutdown_is_bounded_by_the_pyguard_setting():
    stuck = _StuckProvider()
    telemetry = GuardTelemetry(stuck, timeout_s=0.01, metrics=False)
    try:
        assert telemetry.shutdown() is False  # returned although the provider is still stuck
        assert stuck.entered.is_set() and not stuck.release.is_set()
    finally:
        stuck.release.set()


def test_the_timeout_setting_is_read_and_validated(monkeypatch):
    assert GuardTelemetry(metrics=False).timeout_s == 5.0  # the default: a few seconds
    assert GuardTelemetry.to_otlp("http://127.0.0.1:9/v1/traces", timeout_s=1.5).timeout_s == 1.5
    monkeypatch.setenv("PYGUARD_OTEL_TIMEOUT_S", "2.5")
    assert GuardTelemetry(metrics=False).timeout_s == 2.5
    monkeypatch.setenv("PYGUARD_OTEL_TIMEOUT_S", "soon")
    with pytest.raises(ConfigError, match="PYGUARD_OTEL_TIMEOUT_S"):
        GuardTelemetry(metrics=False)
    with pytest.raises(ConfigError, match="timeout_s"):
        GuardTelemetry(metrics=False, timeout_s=0)
