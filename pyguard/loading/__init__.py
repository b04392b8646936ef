"""Load recorded runs from files, directories or streams, in any format pyguard reads, tolerantly by default.

The loader sits above :mod:`pyguard.trace`, :mod:`pyguard.otel` and :mod:`pyguard.store`: it reads every file through
the one safe reader (:mod:`pyguard.base.safe_reader`: line size, nesting depth, integer size) and hands it to the format
of the one format table (:mod:`pyguard.loading.formats`).

``load_runs(path, format=None, *, strict=False, terminal_tools=None, labels=None) -> LoadResult``

- ``path``: a file, a directory (read recursively: ``.jsonl``, ``.ndjson``, ``.json``, ``.traj``; hidden files
  skipped; sorted), ``"-"`` for standard input, a FIFO or ``/dev/fd/N`` (process substitution: read as a
  stream, never stat-ed as a regular file), or a list of any of these.
- ``format``: one of :data:`FORMATS` (the format table: :mod:`pyguard.loading.formats`) or None to detect it per
  file (see :func:`detect_format`).
- Tolerance: what cannot be read (a line that is not JSON, a message with an unknown role, a run with no
  model call, a bad task type, a file in no known format, a run id seen before) is skipped and counted per
  reason in the returned :class:`~pyguard.trace.tolerance.LoadResult`; ``strict=True`` raises on the first.
  Loading nothing at all is always an error.
- ``terminal_tools``: names of the tools that end a run (default: a guess, see :mod:`pyguard.trace.ending`).
- ``labels``: run id -> success from elsewhere (a mapping or a file: see :mod:`pyguard.trace.labels`).

Every option applies to every format: the importers apply ``labels`` and ``terminal_tools`` as they build each run's
footer; runs pyguard stored (a pyguard trace, Parquet) get them applied after reading by the same rules
(:mod:`pyguard.loading.stored`); a Parquet row that is not a valid run is skipped and counted like any unreadable
record (``strict``: raised).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pyguard.base.errors import InputError, UnreadableRecord
from pyguard.base.safe_reader import is_stream, read_source
from pyguard.loading.formats import BY_NAME, FORMAT_TABLE, FORMATS, Recording, detect_file, detect_text
from pyguard.loading.stored import apply_options
from pyguard.store.parquet import is_parquet
from pyguard.trace.ending import normalise_tool_names
from pyguard.trace.labels import Labels, load_labels
from pyguard.trace.records import TraceFile
from pyguard.trace.tolerance import LoadResult, SkipLog

__all__: list[str] = []

_SUFFIXES = (".jsonl", ".ndjson", ".json", ".traj", *(s for f in FORMAT_TABLE for s in f.suffixes))


def reads_columns(path: str | os.PathLike[str], format: str | None = None, **options: Any) -> bool:
    """Whether ``path`` may be read by its columns (DuckDB, or workers on its row groups) instead of through
    :func:`load_runs`: a regular file in Parquet (``format`` None or ``"parquet"``) read with none of
    :func:`load_runs`' ``options`` (``strict``, ``terminal_tools``, ``labels``; None or False is none), which only
    :func:`load_runs` applies. The one choice of that path: the CLI (``pyguard.cli._runs.via_columns``) and
    ``pyguard.parallel.replay_parallel`` ask it."""
    if format not in (None, "parquet") or not os.path.isfile(str(path)) or not is_parquet(str(path)):
        return False
    return all(v is None or v is False for v in options.values())


def detect_format(path: str | os.PathLike[str]) -> str | None:
    """The format of one file (None when it is empty)."""
    name = str(path)
    if not is_stream(name) and (found := detect_file(name)) is not None:
        return found
    src = read_source(name)
    return detect_text(src.text(), src.name)


def _sources(path: str | os.PathLike[str]) -> list[str]:
    """The file names to read for one argument (a stream counts as one file)."""
    name = str(path)
    if is_stream(name):
        return [name]
    p = Path(name)
    if p.is_dir():
        files = sorted(
            f
            for f in p.rglob("*")
            if f.is_file()
            and f.name.lower().endswith(_SUFFIXES)
            and not any(part.startswith(".") for part in f.relative_to(p).parts)
        )
        if not files:
            raise InputError(f"directory {name!r} holds no .jsonl, .ndjson, .json or .traj files; nothing to load")
        return [str(f) for f in files]
    if p.exists():
        return [name]
    raise InputError(f"{name!r} does not exist; pass a recording file, a directory of them, or - for standard input")


def _stem(name: str) -> str:
    if name == "-":
        return "stdin"
    base = Path(name).name
    for suffix in (".traj.json", *_SUFFIXES):
        if base.lower().endswith(suffix):
            return base[: -len(suffix)]
    return Path(name).stem


_STORED = frozenset({"pyguard", "parquet"})
"""Formats pyguard itself wrote: their runs carry footers, so the options are applied after reading
(:mod:`pyguard.loading.stored`); every other format's importer applies them while it builds the footers."""


def _parse_file(
    name: str, fmt: str | None, log: SkipLog, terminal_tools: frozenset[str] | None, labels: Labels | None
) -> TraceFile:
    rec = Recording(name=name, stem=_stem(name), log=log, terminal_tools=terminal_tools, labels=labels)
    if fmt is None and not is_stream(name):
        fmt = detect_file(name)
    if fmt is None:
        fmt = rec.detect()
        if fmt is None:
            return TraceFile(path=rec.shown)
    tf = BY_NAME[fmt].read(rec)
    if fmt in _STORED and (labels is not None or terminal_tools is not None):
        for run in tf.runs:
            run.record = apply_options(run.record, labels=labels, terminal_tools=terminal_tools)
    return tf


def _read_all(
    path: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    format: str | None,
    strict: bool,
    terminal_tools: Iterable[str] | str | None,
    labels: Labels | Mapping[str, Any] | str | os.PathLike[str] | None,
) -> tuple[list[TraceFile], SkipLog]:
    if format is not None and format not in FORMATS:
        raise InputError(f"unknown format {format!r}; use one of {', '.join(FORMATS)} or leave it out to detect it")
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    names = [n for p in paths for n in _sources(p)]
    term = normalise_tool_names(terminal_tools)
    lab = load_labels(labels)
    log = SkipLog(strict=strict)
    out: list[TraceFile] = []
    owner: dict[str, str] = {}
    for name in names:
        try:
            tf = _parse_file(name, format, log, term, lab)
        except UnreadableRecord:
            raise
        except InputError as exc:
            if strict or len(names) == 1:
                raise
            log.skip(UnreadableRecord(str(exc), reason="file that cannot be read as a recording"))
            continue
        kept = []
        for run in tf.runs:
            if run.run_id in owner:
                log.skip(
                    UnreadableRecord(
                        f"run id {run.run_id!r} appears in {owner[run.run_id]!r} and in {tf.path!r}; run ids must be unique"
                        " (the later one was skipped)",
                        reason="duplicate run id",
                    )
                )
                continue
            owner[run.run_id] = tf.path
            kept.append(run)
        tf.runs = kept
        out.append(tf)
    if not any(tf.runs for tf in out) and (log.total or format is None):  # an explicit format may load nothing
        shown = ", ".join(repr("<stdin>" if str(p) == "-" else str(p)) for p in paths)
        detail = f" ({log.summary()}; the first: {log.first_example()})" if log.total else ""
        raise InputError(f"{shown} holds no records that could be read{detail}; nothing to load")
    return out, log


def load_traces(
    path: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    format: str | None = None,
    *,
    strict: bool = False,
    terminal_tools: Iterable[str] | str | None = None,
    labels: Labels | Mapping[str, Any] | str | os.PathLike[str] | None = None,
) -> list[TraceFile]:
    """Every file under ``path`` read into a :class:`TraceFile` (recordings have no decisions)."""
    return _read_all(path, format, strict, terminal_tools, labels)[0]


def load_runs(
    path: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    format: str | None = None,
    *,
    strict: bool = False,
    terminal_tools: Iterable[str] | str | None = None,
    labels: Labels | Mapping[str, Any] | str | os.PathLike[str] | None = None,
) -> LoadResult:
    """All runs under ``path``, in file order, plus what was skipped (``.skipped``: reason -> count).

    Runs with no footer (pyguard traces cut short) come back with ``end=None``.
    """
    files, log = _read_all(path, format, strict, terminal_tools, labels)
    return LoadResult([run.record for tf in files for run in tf.runs], log, files=len(files))
