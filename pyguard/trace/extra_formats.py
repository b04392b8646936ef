"""Run formats beyond pyguard traces and OpenAI recordings, plugged into :func:`pyguard.trace.load_runs`:

- ``otel``: OTLP JSON exports of OpenTelemetry GenAI spans (:mod:`pyguard.otel.otlp_import`), detected by a
  ``resourceSpans`` key at the start of the file; needs no extra.
- ``parquet``: pyguard runs in Parquet (:mod:`pyguard.store.parquet`), detected by Parquet's magic bytes; needs
  the ``columnar`` extra. (``pyguard check`` and ``pyguard calibrate`` summarise a Parquet file with DuckDB instead
  of loading it: :mod:`pyguard.store.summaries`.)

Each entry: a detector (path -> bool, cheap, no extra needed) and a loader (path -> TraceFile).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from pyguard.trace.records import TraceFile, TraceRun

__all__ = ["EXTRA_FORMATS", "EXTRA_SUFFIXES", "detect_extra", "load_extra"]


def _is_otlp(path: str) -> bool:
    from pyguard.otel.otlp_json import looks_like_otlp

    return looks_like_otlp(path)


def _load_otlp(path: str) -> TraceFile:
    from pyguard.otel.otlp_import import import_otlp

    return TraceFile(path=path, runs=[TraceRun(record=r, source=path) for r in import_otlp(path).runs])


def _is_parquet(path: str) -> bool:
    from pyguard.store.parquet import is_parquet

    return is_parquet(path)


def _load_parquet(path: str) -> TraceFile:
    from pyguard.store.parquet import read_parquet

    return TraceFile(path=path, runs=read_parquet(path))


EXTRA_FORMATS: dict[str, tuple[Callable[[str], bool], Callable[[str], TraceFile]]] = {
    "otel": (_is_otlp, _load_otlp),
    "parquet": (_is_parquet, _load_parquet),
}
EXTRA_SUFFIXES = (".parquet",)
"""File suffixes read from a directory besides .jsonl, .ndjson and .json."""


def detect_extra(path: str | os.PathLike[str]) -> str | None:
    """The extra format of one file, or None when it is none of them."""
    p = str(path)
    return next((name for name, (detect, _) in EXTRA_FORMATS.items() if detect(p)), None)


def load_extra(path: str | os.PathLike[str], fmt: str) -> TraceFile:
    return EXTRA_FORMATS[fmt][1](str(path))
