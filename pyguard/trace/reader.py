"""Read pyguard traces: strict per line, honest about runs that never ended.

- A line that is not a whole, valid record raises :class:`~pyguard.base.errors.TraceFormatError` naming the file
  and the line number. Nothing is half-loaded: a record either validates completely or the read fails.
- The exceptions are the marks of a write that did not complete, each making its run *incomplete* (a
  :class:`~pyguard.trace.records.TraceWarning` says why, :attr:`TraceRun.damage` keeps it): the *last* line of a file
  when it has no newline and does not parse (a writer killed mid-write: skipped, reported in
  :attr:`TraceFile.torn_line`); a torn record inside the file (a line that starts as a record and does not parse: its
  run, named at the line's start, or every run still open, keeps what came before it); an iteration index that skips
  ahead (records missing); a footer that counts more model calls than the trace holds (when it holds any: a run
  summary is a header and a footer), or says the writer lost records (``evidence["trace_error"]``). An incomplete run keeps its whole records before the damage and has no footer.
- A run with no ``run_end`` footer is returned with ``record.end = None`` (:attr:`TraceRun.complete` is
  False): never dropped, never taken for a success.
- Hostile input gets a :class:`~pyguard.base.errors.TraceFormatError`, never a traceback: a line longer than
  :data:`~pyguard.base.safe_reader.MAX_LINE_BYTES` (refused before it is parsed), JSON nested too deep, an integer
  too long to convert, NaN or infinity, a negative count, a string where a number belongs; a FIFO or a device is
  refused by name (reading one could block forever).
"""

from __future__ import annotations

import io
import os
import re
import stat
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from pydantic import BaseModel, ValidationError

from pyguard.base import safe_reader
from pyguard.base.decisions import Decision
from pyguard.base.errors import TraceFormatError
from pyguard.base.events import IterationEvent, RunEnd, RunRecord, RunStart
from pyguard.base.safe_reader import loads, oversize_error
from pyguard.trace.policy_file import full_policy
from pyguard.trace.records import FORMAT_VERSION, RECORD_TYPES, TraceFile, TraceRun, TraceWarning

__all__: list[str] = []

_RECORD_START = b'{"type":"'
"""How every line the writer writes starts: a line that starts so and does not parse is a torn record."""
_RUN_ID = re.compile(rb'\{"type":"[a-z_]+",(?:"version":\d+,)?"run_id":"((?:[^"\\]|\\.)*)"')
"""The run a line written by the writer belongs to, read from its start (a torn line's start is whole)."""


def check_regular_file(path: str | os.PathLike[str], what: str = "trace file") -> None:
    """Raise :class:`TraceFormatError` unless ``path`` is an existing regular file. A FIFO or ``/dev/fd/N`` is
    read as a stream by :func:`pyguard.loading.load_runs` (whole, then :func:`read_trace_bytes`), never by path."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise TraceFormatError(f"no such {what}; pass the path of an existing file", path=str(path)) from None
    except OSError as exc:
        raise TraceFormatError(
            f"cannot read this {what}: {exc.strerror}; check its permissions", path=str(path)
        ) from None
    if not stat.S_ISREG(mode):
        kind = (
            "a FIFO (named pipe)"
            if stat.S_ISFIFO(mode)
            else "a directory"
            if stat.S_ISDIR(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "a device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "not a regular file"
        )
        raise TraceFormatError(
            f"this path is {kind}, not a {what}; pass a regular file, or the stream to pyguard.loading.load_runs",
            path=str(path),
        )


def iter_lines(
    path: str | os.PathLike[str] | bytes, max_bytes: int | None = None, name: str = "<stream>"
) -> Iterator[tuple[int, bytes, bool]]:
    """Yield ``(line_number, raw_line_without_newline, ended_with_newline)`` for every non-blank line of a file
    (or of ``bytes`` already read from a stream).

    A line longer than ``max_bytes`` (default :data:`pyguard.base.safe_reader.MAX_LINE_BYTES`) raises
    :class:`TraceFormatError` without being read whole."""
    max_bytes = safe_reader.MAX_LINE_BYTES if max_bytes is None else max_bytes
    if isinstance(path, bytes):
        yield from _lines(io.BytesIO(path), max_bytes, name)
        return
    check_regular_file(path)
    try:
        with open(path, "rb") as f:
            yield from _lines(f, max_bytes, str(path))
    except OSError as exc:  # an I/O error mid-read names the file, as every other trace error does
        raise TraceFormatError(f"cannot read this trace file: {exc.strerror or exc}", path=str(path)) from None


def _lines(f: IO[bytes], max_bytes: int, name: str) -> Iterator[tuple[int, bytes, bool]]:
    number = 0
    while True:
        raw = f.readline(max_bytes + 2)
        if not raw:
            return
        number += 1
        ended = raw.endswith(b"\n")
        body = raw.rstrip(b"\r\n")
        if len(body) > max_bytes:
            raise oversize_error(name, number, max_bytes)
        if body.strip():
            yield number, body, ended


def describe_validation_error(exc: ValidationError) -> str:
    """A pydantic error in one line: ``field.path: message; ...`` (at most five items)."""
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(x) for x in err.get("loc", ())) or "(record)"
        parts.append(f"{loc}: {err.get('msg', 'invalid')}")
    more = len(exc.errors()) - 5
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


class _Reader:
    def __init__(self, path: str) -> None:
        self.path = path
        self.runs: dict[str, TraceRun] = {}
        self.ended: set[str] = set()

    def fail(self, line: int, message: str) -> TraceFormatError:
        return TraceFormatError(message, path=self.path, line=line)

    def damage(self, run: TraceRun, why: str) -> None:
        """``run`` is incomplete: its footer (if read) is dropped, and what follows of it is not read."""
        if run.damage is None:
            run.damage = why
            run.record.end = None

    def torn(self, line: int, raw: bytes) -> None:
        """A torn record inside the file: its run (named at the line's start), or every run still open, is damaged."""
        found = _RUN_ID.match(raw[:4096])
        try:
            named = self.runs.get(loads(b'"' + found.group(1) + b'"', source=self.path)) if found else None
        except ValueError:
            named = None
        hit = [named] if named is not None and named.run_id not in self.ended else self.open_runs()
        for run in hit:
            self.damage(run, f"line {line} is torn (a record cut mid-write, as a full disk leaves it)")

    def open_runs(self) -> list[TraceRun]:
        return [r for r in self.runs.values() if r.run_id not in self.ended]

    def open_run(self, line: int, run_id: object, what: str) -> TraceRun:
        if not isinstance(run_id, str):
            raise self.fail(line, f"{what} record has no string 'run_id' (got {run_id!r}); every record names its run")
        if run_id in self.ended:
            raise self.fail(line, f"{what} record for run {run_id!r} after its run_end footer; a run ends once")
        run = self.runs.get(run_id)
        if run is None:
            raise self.fail(line, f"{what} record for run {run_id!r} before its run_start header")
        return run

    def validate(self, line: int, model: type[BaseModel], data: dict, what: str):  # noqa: ANN202
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            raise self.fail(line, f"invalid {what} record: {describe_validation_error(exc)}") from None

    def feed(self, line: int, obj: dict) -> None:
        kind = obj.pop("type", None)
        if kind not in RECORD_TYPES:
            hint = ""
            if kind is None and ("messages" in obj or "traj" in obj):
                hint = " (it looks like an OpenAI run object: load it with format='openai', and keep formats apart)"
            raise self.fail(line, f"unknown record type {kind!r}; expected one of {', '.join(RECORD_TYPES)}{hint}")
        if kind == "run_start":
            self.start(line, obj)
            return
        run = self.open_run(line, obj.pop("run_id", None) if kind == "decision" else obj.get("run_id"), str(kind))
        if run.damage is not None:  # nothing after the damage is read; its footer ends it
            if kind == "run_end":
                self.ended.add(run.run_id)
            return
        if kind == "iteration":
            event = self.validate(line, IterationEvent, obj, "iteration")
            expected = len(run.record.events) + 1
            if event.index > expected:
                self.damage(run, f"iterations {expected}..{event.index - 1} are missing (line {line} skips ahead)")
                return
            if event.index != expected:
                raise self.fail(
                    line,
                    f"iteration {event.index} of run {event.run_id!r} is out of order: expected {expected}"
                    " (a record is duplicated)",
                )
            run.record.events.append(event)
        elif kind == "decision":
            decision = self.validate(line, Decision, obj, "decision")
            last = len(run.record.events)
            if decision.iteration is None or not 1 <= decision.iteration <= last:
                raise self.fail(
                    line,
                    f"decision of run {run.run_id!r} names iteration {decision.iteration!r}, but iterations"
                    f" 1..{last} were read so far; a decision follows the iteration it is about",
                )
            run.decisions.append(decision)
        else:
            end = self.validate(line, RunEnd, obj, "run_end")
            self.ended.add(run.run_id)
            held = len(run.record.events)
            if end.evidence.get("trace_error"):
                self.damage(run, f"its writer lost records: {end.evidence['trace_error']}")
            elif 0 < held < end.iterations:  # (no iteration at all: a run summary, header and footer only)
                self.damage(run, f"its footer counts {end.iterations} model calls, the trace holds {held}")
            else:
                run.record.end = end

    def start(self, line: int, obj: dict) -> None:
        version = obj.pop("version", None)
        if version != FORMAT_VERSION:
            if isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION:
                raise self.fail(
                    line,
                    f"trace format version {version} is newer than this pyguard reads"
                    f" ({FORMAT_VERSION}); upgrade pyguard",
                )
            raise self.fail(line, f"run_start header has version {version!r}; expected {FORMAT_VERSION}")
        start = self.validate(line, RunStart, obj, "run_start")
        policy = full_policy(start.policy, self.path)
        if policy is not start.policy:
            start = start.model_copy(update={"policy": policy})
        if start.run_id in self.runs:
            first = self.runs[start.run_id].first_line
            raise self.fail(line, f"run {start.run_id!r} starts twice (first at line {first}); run ids must be unique")
        self.runs[start.run_id] = TraceRun(record=RunRecord(start=start), source=self.path, first_line=line)


def read_trace(path: str | os.PathLike[str]) -> TraceFile:
    """Read one pyguard trace file (runs in header order; incomplete runs included with ``end=None``)."""
    p = Path(path)
    check_regular_file(p)
    return _read(str(p), iter_lines(p))


def read_trace_bytes(data: bytes, name: str) -> TraceFile:
    """Read one pyguard trace already read into memory (from standard input or a pipe); ``name`` names it."""
    return _read(name, iter_lines(data, name=name))


def _read(name: str, lines: Iterator[tuple[int, bytes, bool]]) -> TraceFile:
    reader = _Reader(name)
    torn: int | None = None
    pending: tuple[int, bytes, bool] | None = None
    for item in lines:  # one line behind, to know which line is the last
        if pending is not None:
            _feed_line(reader, *pending, is_last=False)
        pending = item
    if pending is not None:
        torn = _feed_line(reader, *pending, is_last=True)
    if torn is not None:
        warnings.warn(
            TraceWarning(
                f"{name}: line {torn} is torn (cut mid-record, as a writer killed mid-write leaves it):"
                " skipped; the run it belonged to has no footer"
            ),
            stacklevel=3,
        )
    for run in reader.runs.values():
        if run.damage is not None:
            warnings.warn(
                TraceWarning(f"{name}: run {run.run_id!r} is incomplete: {run.damage}; it has no outcome"),
                stacklevel=3,
            )
    return TraceFile(path=name, runs=list(reader.runs.values()), torn_line=torn)


def _feed_line(reader: _Reader, number: int, raw: bytes, ended: bool, *, is_last: bool) -> int | None:
    """Parse and feed one line; returns the line number when it is a torn last line that was skipped."""
    try:
        obj = loads(raw, source=reader.path, line=number, allow_nan=False)
    except ValueError as exc:
        if is_last and not ended:
            return number
        if isinstance(exc, TraceFormatError):  # a limit of the safe reader: its message names it
            raise
        if raw.startswith(_RECORD_START):  # a record cut mid-write, with whatever followed it on the line
            reader.torn(number, raw)
            return None
        raise reader.fail(number, f"not valid JSON ({exc}); a trace line is one whole JSON object") from None
    if not isinstance(obj, dict):
        raise reader.fail(number, f"a trace line must be a JSON object, got {type(obj).__name__}")
    reader.feed(number, obj)
    return None
