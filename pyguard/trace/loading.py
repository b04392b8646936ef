"""Load recorded runs from files, directories or streams, in any format pyguard reads, tolerantly by default.

``load_runs(path, format=None, *, strict=False, terminal_tools=None, labels=None) -> LoadResult``

- ``path``: a file, a directory (read recursively: ``.jsonl``, ``.ndjson``, ``.json``, ``.traj``; hidden files
  skipped; sorted), ``"-"`` for standard input, a FIFO or ``/dev/fd/N`` (process substitution: read as a
  stream, never stat-ed as a regular file), or a list of any of these.
- ``format``: one of :data:`FORMATS` or None to detect it per file (see :func:`detect_format`).
- Tolerance: what cannot be read (a line that is not JSON, a message with an unknown role, a run with no
  model call, a bad task type, a file in no known format, a run id seen before) is skipped and counted per
  reason in the returned :class:`~pyguard.trace.tolerance.LoadResult`; ``strict=True`` raises on the first.
  Loading nothing at all is always an error.
- ``terminal_tools``: names of the tools that end a run (default: a guess, see :mod:`pyguard.trace.ending`).
- ``labels``: run id -> success from elsewhere (a mapping or a file: see :mod:`pyguard.trace.labels`).
"""

from __future__ import annotations

import json
import os
import select
import stat
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from pyguard.errors import InputError, TraceFormatError, UnreadableRecord
from pyguard.trace.bfcl_import import is_bfcl_run, parse_bfcl
from pyguard.trace.containers import parse_container, read_json_text
from pyguard.trace.ending import normalise_tool_names
from pyguard.trace.extra_formats import EXTRA_FORMATS, EXTRA_SUFFIXES, detect_extra, load_extra
from pyguard.trace.labels import Labels, load_labels
from pyguard.trace.medagent_import import is_medagent_run, parse_medagent
from pyguard.trace.miniswe_import import is_miniswe_run, parse_miniswe
from pyguard.trace.openai_import import is_openai_run, parse_openai_text
from pyguard.trace.react_import import is_react_run, parse_react_text
from pyguard.trace.reader import read_trace_bytes
from pyguard.trace.records import RECORD_TYPES, TraceFile, TraceRun
from pyguard.trace.sweagent_import import is_sweagent_run, parse_sweagent
from pyguard.trace.tau2_import import is_tau2_file, is_tau2_simulation, parse_tau2
from pyguard.trace.tolerance import LoadResult, SkipLog

__all__ = ["FORMATS", "TraceFormatName", "detect_format", "detect_text_format", "load_traces", "load_runs"]

TraceFormatName = Literal["pyguard", "openai", "react", "miniswe", "sweagent", "bfcl", "tau2", "medagent"]
FORMATS: tuple[str, ...] = (
    "pyguard",
    "openai",
    "react",
    "miniswe",
    "sweagent",
    "bfcl",
    "tau2",
    "medagent",
    *EXTRA_FORMATS,
)
_SUFFIXES = (".jsonl", ".ndjson", ".json", ".traj", *EXTRA_SUFFIXES)
_SNIFF_LINES = 20  # JSON Lines records looked at to detect a format
_FORMAT_HINT = "pass format= one of " + ", ".join(repr(f) for f in FORMATS)

# the checks that recognise one run object, most specific first
_RUN_CHECKS: tuple[tuple[str, Callable[[Any], bool]], ...] = (
    ("tau2", lambda obj: is_tau2_file(obj) or is_tau2_simulation(obj)),
    ("medagent", is_medagent_run),
    ("bfcl", is_bfcl_run),
    ("miniswe", is_miniswe_run),
    ("sweagent", is_sweagent_run),
    ("react", is_react_run),
    ("openai", is_openai_run),
)


def _kind_of(obj: Any) -> str | None:
    for name, check in _RUN_CHECKS:
        if check(obj):
            return name
    return None


def detect_text_format(text: str, name: str = "<input>") -> TraceFormatName | None:
    """The format of one recording's text; None when it is empty. Raises TraceFormatError when it cannot tell."""
    stripped = text.lstrip()
    if not stripped:
        return None
    lines = stripped.split("\n", _SNIFF_LINES)[:_SNIFF_LINES]
    try:
        first: Any = json.loads(lines[0])
    except json.JSONDecodeError:
        first = None
    if isinstance(first, dict):
        is_pyguard = first.get("type") in RECORD_TYPES
        kind = _kind_of(first)
        if is_pyguard and kind is not None:
            raise TraceFormatError(
                f"the format is ambiguous: the first record has both a pyguard 'type' and {kind} run keys; {_FORMAT_HINT}",
                path=name,
                line=1,
            )
        if is_pyguard:
            return "pyguard"
        if kind is not None:
            return kind  # type: ignore[return-value]
        for line in lines[1:]:  # JSON Lines whose first record is unreadable (a test that errored): look further
            try:
                kind = _kind_of(json.loads(line))
            except json.JSONDecodeError:
                continue
            if kind is not None:
                return kind  # type: ignore[return-value]
    if not stripped.startswith(("[", "{")):
        if is_react_run({"traj": text}):
            return "react"
        raise TraceFormatError(
            f"cannot tell the format: the text is neither JSON nor a ReAct transcript; {_FORMAT_HINT}",
            path=name,
            line=1,
        )
    try:
        whole: Any = json.loads(text)
    except json.JSONDecodeError:
        whole = first
    candidates: list[Any] = []
    if isinstance(whole, list):
        candidates = whole[:1]
    elif isinstance(whole, dict):
        candidates = [whole] + [v for v in list(whole.values())[:1] if isinstance(v, dict)]
    for obj in candidates:
        kind = _kind_of(obj)
        if kind is not None:
            return kind  # type: ignore[return-value]
    raise TraceFormatError(
        "cannot tell the format: the first record has neither a pyguard 'type' (" + ", ".join(RECORD_TYPES) + ") nor"
        f" the keys of a known recording (OpenAI 'messages'/'traj', ReAct text, mini-swe-agent or SWE-agent trajectory,"
        f" BFCL 'inference_log', τ²-bench 'simulations'); {_FORMAT_HINT}",
        path=name,
        line=1,
    )


def detect_format(path: str | os.PathLike[str]) -> TraceFormatName | None:
    """The format of one file (None when it is empty)."""
    name = str(path)
    if not _is_stream(name) and (extra := detect_extra(name)) is not None:  # hook: OTLP spans, Parquet
        return extra  # type: ignore[return-value]
    return detect_text_format(read_json_text(_read_bytes(name), name), name)


def _is_stream(path: str) -> bool:
    if path == "-":
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


FIFO_WAIT_S = float(os.environ.get("PYGUARD_FIFO_WAIT_S", "30"))
"""How long a FIFO may stay silent before it is given up: a named pipe nobody writes to would block a reader
forever. Process substitution (``<(...)``, ``/dev/fd/N``) and a pipe with a writer start at once."""


def _read_fifo(name: str) -> bytes:
    """A FIFO read whole, waiting at most :data:`FIFO_WAIT_S` for its writer to send something (or hang up)."""
    fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK)  # never blocks, writer or not
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLHUP)
        if not poller.poll(int(FIFO_WAIT_S * 1000)):
            raise InputError(
                f"{name!r} is a FIFO (named pipe) and nothing was written to it in {FIFO_WAIT_S:g} s; start its"
                " writer first, or pass a regular file (PYGUARD_FIFO_WAIT_S sets the wait)"
            )
        os.set_blocking(fd, True)
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _read_bytes(name: str) -> bytes:
    if name == "-":
        return sys.stdin.buffer.read()
    try:
        if stat.S_ISFIFO(os.stat(name).st_mode):
            return _read_fifo(name)
        with open(name, "rb") as f:  # regular files, devices and sockets
            return f.read()
    except OSError as exc:
        raise InputError(f"cannot read {name!r}: {exc.strerror or exc}") from None


def _sources(path: str | os.PathLike[str]) -> list[str]:
    """The file names to read for one argument (a stream counts as one file)."""
    name = str(path)
    if _is_stream(name):
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


def _parse_file(
    name: str, fmt: str | None, log: SkipLog, terminal_tools: frozenset[str] | None, labels: Labels | None
) -> TraceFile:
    shown = "<stdin>" if name == "-" else name
    extra = fmt if fmt in EXTRA_FORMATS else (detect_extra(name) if fmt is None and not _is_stream(name) else None)
    if extra is not None:  # hook: OTLP JSON spans, Parquet (pyguard/trace/extra_formats.py)
        return load_extra(name, extra)
    data = _read_bytes(name)
    if fmt == "pyguard":
        return read_trace_bytes(data, shown)
    text = read_json_text(data, shown)
    fmt = fmt or detect_text_format(text, shown)
    if fmt is None:
        return TraceFile(path=shown)
    if fmt == "pyguard":
        return read_trace_bytes(data, shown)
    kw: dict[str, Any] = {"log": log, "terminal_tools": terminal_tools, "labels": labels}
    if fmt == "openai":
        records = parse_openai_text(text, source=shown, default_id_prefix=_stem(name), **kw)
    elif fmt == "react":
        records = parse_react_text(text, source=shown, default_id_prefix=_stem(name), **kw)
    else:
        check = dict(_RUN_CHECKS)[fmt]
        items = parse_container(text, shown, log, is_run=check)
        if fmt == "bfcl":
            records = parse_bfcl(items, source=shown, **kw)
        elif fmt == "tau2":
            records = parse_tau2(items, source=shown, **kw)
        elif fmt == "medagent":
            records = parse_medagent(items, source=shown, **kw)
        elif fmt == "miniswe":
            records = parse_miniswe(items, source=shown, default_id=_stem(name), **kw)
        else:
            records = parse_sweagent(items, source=shown, default_id=_stem(name), **kw)
    return TraceFile(path=shown, runs=[TraceRun(record=r, source=shown) for r in records])


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
        detail = f" ({log.summary()})" if log.total else ""
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
