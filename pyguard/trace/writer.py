"""Write pyguard traces as runs go: one line per record, written and flushed at once.

A :class:`TraceWriter` may be shared by many threads (one lock; each record is one ``write`` of one whole
line followed by a flush), so concurrent runs interleave whole lines in one file. A process killed mid-run
leaves every record written so far readable; at worst its last line is cut mid-record, and the reader skips
that torn line and reports the run as incomplete.

The writer refuses records that would make the trace unreadable (an iteration of a run never started, an
iteration index out of order, a record after the footer, a record over
:data:`~pyguard.safe_reader.MAX_LINE_BYTES`), so a mistake shows where it is made.

File safety: the file is opened with ``O_NOFOLLOW`` (a symlink where the trace goes is refused, never followed),
created with mode ``0o600`` by default (traces hold prompts and tool output; ``file_mode=`` changes it), and with
``mode="x"`` created exclusively (an existing file is refused, never overwritten). Appending (``mode="a"``) to a file
whose last line is torn first cuts that torn line off (it was unreadable; a :class:`TraceWarning` says so), so the
records appended after it stay readable.
"""

from __future__ import annotations

import hashlib
import os
import threading
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

from pyguard import safe_reader
from pyguard.decisions import Decision
from pyguard.errors import TraceFormatError
from pyguard.events import IterationEvent, RunEnd, RunRecord, RunStart
from pyguard.trace.records import FORMAT_VERSION, TraceWarning, encode_record

__all__ = ["TraceWriter", "trace_file_name", "write_runs"]


class TraceWriter:
    """Append pyguard trace records to a file (or a binary stream), thread-safe, flushed per record.

    ``TraceWriter(path)`` appends to ``path`` (created with its parent folders if needed); pass
    ``mode="w"`` to start the file afresh, ``mode="x"`` to create it and refuse an existing file. A symlink at
    ``path`` is refused; a new file gets ``file_mode`` (default ``0o600``, owner only). ``fsync=True`` also asks the OS to put every record on disk
    (survives a machine crash, costs a disk sync per record); without it a killed *process* loses nothing
    already written. Use it as a context manager or call :meth:`close`.
    """

    def __init__(
        self,
        target: str | os.PathLike[str] | BinaryIO,
        *,
        mode: str = "a",
        fsync: bool = False,
        file_mode: int = 0o600,
    ) -> None:
        if mode not in ("a", "w", "x"):
            raise ValueError(
                f"TraceWriter mode {mode!r} is not supported: use 'a' (append), 'w' (overwrite) or 'x' (create, never"
                " overwrite)"
            )
        self._lock = threading.Lock()
        self._fsync = fsync
        self._open: dict[str, int] = {}  # run_id -> index of its last iteration written
        self._ended: set[str] = set()
        if isinstance(target, (str, os.PathLike)):
            path = Path(target)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._stream: BinaryIO = _open_safely(path, mode, file_mode)
            self._owns = True
            self.path: str | None = str(path)
        else:
            self._stream = target
            self._owns = False
            self.path = getattr(target, "name", None) if isinstance(getattr(target, "name", None), str) else None
        self._closed = False

    # -- records ---------------------------------------------------------------------------------------

    def start(self, start: RunStart) -> None:
        """Write the header of a run. Each run id may start once per writer."""
        line = encode_record("run_start", start, version=FORMAT_VERSION)
        with self._lock:
            if start.run_id in self._open or start.run_id in self._ended:
                raise self._error(f"run {start.run_id!r} was already started in this trace; give each run its own id")
            self._write(line)
            self._open[start.run_id] = 0

    def iteration(self, event: IterationEvent) -> None:
        """Write one model call of a started run; indexes must follow 1, 2, 3, ..."""
        line = encode_record("iteration", event)
        with self._lock:
            last = self._expect_open(event.run_id, "iteration")
            if event.index != last + 1:
                raise self._error(
                    f"iteration {event.index} of run {event.run_id!r} is out of order: the next index is {last + 1}"
                )
            self._write(line)
            self._open[event.run_id] = event.index

    def decision(self, run_id: str, decision: Decision) -> None:
        """Write the guard's decision after an iteration (``decision.iteration``, or the last one written)."""
        with self._lock:
            last = self._expect_open(run_id, "decision")
            iteration = decision.iteration if decision.iteration is not None else last
            if not 1 <= iteration <= last:
                raise self._error(
                    f"decision after iteration {iteration} of run {run_id!r}: only iterations 1..{last} were written;"
                    " write the iteration first"
                )
            if decision.iteration is None:
                decision = decision.model_copy(update={"iteration": iteration})
            self._write(encode_record("decision", decision, run_id=run_id))

    def end(self, end: RunEnd) -> None:
        """Write the footer of a run; nothing more may be written for it."""
        line = encode_record("run_end", end)
        with self._lock:
            self._expect_open(end.run_id, "run_end")
            self._write(line)
            del self._open[end.run_id]
            self._ended.add(end.run_id)

    def write_run(self, run: RunRecord, decisions: Iterable[Decision] = ()) -> None:
        """Write a whole run held in memory: header, iterations with their decisions, footer if any."""
        by_iteration: dict[int, list[Decision]] = {}
        for d in decisions:
            by_iteration.setdefault(d.iteration or 0, []).append(d)
        self.start(run.start)
        for event in run.events:
            self.iteration(event)
            for d in by_iteration.pop(event.index, []):
                self.decision(run.run_id, d)
        if by_iteration:
            raise self._error(
                f"run {run.run_id!r} has decisions after iterations {sorted(by_iteration)} that it does not have"
            )
        if run.end is not None:
            self.end(run.end)

    # -- lifecycle -------------------------------------------------------------------------------------

    @property
    def open_runs(self) -> list[str]:
        """Ids of runs started but not ended (their footer is still to come)."""
        with self._lock:
            return list(self._open)

    def close(self) -> None:
        """Close the file (if this writer opened it). Runs still open stay without a footer: incomplete."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._owns:
                self._stream.close()
            else:
                self._stream.flush()

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -------------------------------------------------------------------------------------

    def _write(self, line: bytes) -> None:
        limit = safe_reader.MAX_LINE_BYTES
        if len(line) - 1 > limit:
            raise self._error(
                f"a record of {len(line) - 1} bytes is over the per-record limit of {limit} bytes; readers"
                " refuse such lines, so it is not written"
            )
        if self._closed:
            raise self._error("the trace writer is closed; open a new TraceWriter to append more records")
        self._stream.write(line)
        self._stream.flush()
        if self._fsync:
            os.fsync(self._stream.fileno())

    def _expect_open(self, run_id: str, what: str) -> int:
        if run_id in self._open:
            return self._open[run_id]
        if run_id in self._ended:
            raise self._error(f"{what} record for run {run_id!r} after its run_end footer; a run ends once")
        raise self._error(f"{what} record for run {run_id!r}, which was never started: write its run_start first")

    def _error(self, message: str) -> TraceFormatError:
        return TraceFormatError(message, path=self.path)


_FLAGS = {
    "a": os.O_RDWR | os.O_CREAT | os.O_APPEND,  # read too: to find a torn tail
    "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
    "x": os.O_WRONLY | os.O_CREAT | os.O_EXCL,
}


def _open_safely(path: Path, mode: str, file_mode: int) -> BinaryIO:
    """Open ``path`` for ``mode`` without following a symlink, creating it with ``file_mode``; repair a torn tail."""
    flags = _FLAGS[mode] | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, file_mode)
    except FileExistsError:
        raise TraceFormatError(
            "a file is already there; a trace is never overwritten: give the run another id or use another folder",
            path=str(path),
        ) from None
    except OSError as exc:
        if path.is_symlink():
            raise TraceFormatError(
                "this path is a symbolic link; traces are never written through a link: remove it or pick another path",
                path=str(path),
            ) from None
        raise TraceFormatError(f"cannot open the trace for writing: {exc.strerror}", path=str(path)) from None
    try:
        if mode == "a":
            _cut_torn_tail(fd, path)
        return os.fdopen(fd, "ab" if mode == "a" else "wb")
    except BaseException:
        os.close(fd)
        raise


def _cut_torn_tail(fd: int, path: Path) -> None:
    """If the file does not end with a newline, its last line was cut mid-record: truncate it away (with a warning)."""
    size = os.fstat(fd).st_size
    if size == 0:
        return
    if os.pread(fd, 1, size - 1) == b"\n":
        return
    keep = 0
    pos = size
    while pos > 0:
        start = max(0, pos - 65536)
        chunk = os.pread(fd, pos - start, start)
        nl = chunk.rfind(b"\n")
        if nl != -1:
            keep = start + nl + 1
            break
        pos = start
    os.ftruncate(fd, keep)
    warnings.warn(
        TraceWarning(f"{path}: its last line was torn ({size - keep} bytes, cut mid-record): removed before appending"),
        stacklevel=4,
    )


def write_runs(
    path: str | os.PathLike[str],
    runs: Iterable[RunRecord],
    *,
    decisions: dict[str, list[Decision]] | None = None,
    mode: str = "w",
) -> int:
    """Write whole runs (for example imported recordings) as a pyguard trace; returns how many were written."""
    n = 0
    with TraceWriter(path, mode=mode) as writer:
        for run in runs:
            writer.write_run(run, (decisions or {}).get(run.run_id, ()))
            n += 1
    return n


_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_#")


def trace_file_name(run_id: str) -> str:
    """The trace file name of a run: ``<run_id>.jsonl`` when the id is plain (ASCII letters, digits, ``-_#``, at most
    100 characters, not starting with ``.`` or ``-``); otherwise the id made plain and cut to 100 characters, then
    ``~`` and 16 hex digits of the id's hash. Distinct run ids get distinct names (``job/1`` and ``job_1`` do), and
    every name is a safe file name of at most 128 characters."""
    plain = 0 < len(run_id) <= 100 and all(c in _NAME_CHARS for c in run_id) and run_id[0] not in "-"
    if plain:
        return f"{run_id}.jsonl"
    safe = "".join(c if c in _NAME_CHARS else "_" for c in run_id[:100]).lstrip("-") or "run"
    digest = hashlib.blake2b(run_id.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return f"{safe}~{digest}.jsonl"
