"""The GenAI client metrics of each model call, through the OpenTelemetry metrics API.

``gen_ai.client.operation.duration`` (histogram, seconds) and ``gen_ai.client.token.usage`` (histogram, tokens, one
record per ``gen_ai.token.type``: ``input`` and ``output``), with the conventions' attributes: operation, provider,
request and response model, ``error.type`` on a failed call. Recorded for live runs only (a recorded run exported
later would count old calls as new ones) and not in decisions-only mode (the application's instrumentation records
them already).
"""

from __future__ import annotations

from typing import Any

from pyguard.base.events import IterationEvent
from pyguard.otel import semconv as sc

__all__: list[str] = []

_DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]
_TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]


class ClientMetrics:
    """The two instruments of one meter; :meth:`record` after each model call."""

    def __init__(self, meter: Any) -> None:
        self.duration = meter.create_histogram(
            sc.METRIC_OPERATION_DURATION,
            unit="s",
            description="GenAI operation duration",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )
        self.tokens = meter.create_histogram(
            sc.METRIC_TOKEN_USAGE,
            unit="{token}",
            description="Number of input and output tokens used",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
        )

    def record(self, event: IterationEvent, attributes: dict[str, Any]) -> None:
        """``attributes``: the call's operation, provider, request/response model and error.type (no content)."""
        if event.latency_ms is not None:
            self.duration.record(event.latency_ms / 1000.0, attributes)
        for kind, count in (("input", event.input_tokens), ("output", event.output_tokens)):
            if count is not None:
                self.tokens.record(count, {**attributes, sc.TOKEN_TYPE: kind})
