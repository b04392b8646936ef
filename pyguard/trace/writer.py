"""Write pyguard traces as runs go: one line per record, written whole or not at all.

A :class:`TraceWriter` may be shared by many threads (one lock; each record is one whole line written with
``os.write`` on the file, with no buffer in between), so concurrent runs interleave whole lines in one file. A
process killed mid-run leaves every record written so far readable; at worst its last line is cut mid-record, and
the reader skips that torn line and reports the run as incomplete. A write that fails part-way (a disk that fills)
is cut back off the file at once, so no partial line is ever followed by another record.

The writer refuses records that would make the trace unreadable (an iteration of a run never started, an iteration
index out of order, a record after the footer). A record longer than :data:`~pyguard.base.safe_reader.MAX_LINE_BYTES` is
written with its long strings cut to windows stating their whole size (:mod:`pyguard.trace.fit`), never refused.

A *tolerant* writer (``tolerant=True``, what the Guard uses) never raises once its run has started: the first record
it cannot write (a full disk, a permission lost, a record that cannot fit) sets :attr:`TraceWriter.error`, is logged,
and from then on only footers are written, each saying in ``evidence["trace_error"]`` (and
``evidence["trace_records_lost"]``) that the trace is incomplete. The guard's decisions never depend on its trace.

File safety: the file is opened with ``O_NOFOLLOW`` (a symlink where the trace goes is refused, never followed),
created with mode ``0o600`` by default (traces hold prompts and tool output; ``file_mode=`` changes it), and with
``mode="x"`` created exclusively (an existing file is refused, never overwritten). Appending (``mode="a"``) to a file
whose last line is torn first cuts that torn line off (it was unreadable; a :class:`TraceWarning` says so), so the
records appended after it stay readable.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel

from pyguard.base import safe_reader
from pyguard.base.decisions import Decision
from pyguard.base.errors import TraceFormatError
from pyguard.base.events import IterationEvent, RunEnd, RunRecord, RunStart
from pyguard.trace.files import open_safely
from pyguard.trace.fit import fit_record
from pyguard.trace.policy_file import compact_policy
from pyguard.trace.records import FORMAT_VERSION

__all__: list[str] = []

log = logging.getLogger(__name__)


class TraceWriter:
    """Append pyguard trace records to a file (or a binary stream), thread-safe, one whole line per record.

    ``TraceWriter(path)`` appends to ``path`` (created with its parent folders if needed); pass
    ``mode="w"`` to start the file afresh, ``mode="x"`` to create it and refuse an existing file. A symlink at
    ``path`` is refused; a new file gets ``file_mode`` (default ``0o600``, owner only). ``fsync=True`` also asks the
    OS to put every record on disk (survives a machine crash, costs a disk sync per record); without it a killed
    *process* loses nothing already written. ``tolerant=True``: after its runs' headers, a record that cannot be
    written degrades the trace (:attr:`error`) instead of raising. Use it as a context manager or call :meth:`close`.
    """

    def __init__(
        self,
        target: str | os.PathLike[str] | BinaryIO,
        *,
        mode: str = "a",
        fsync: bool = False,
        file_mode: int = 0o600,
        tolerant: bool = False,
    ) -> None:
        if mode not in ("a", "w", "x"):
            raise ValueError(
                f"TraceWriter mode {mode!r} is not supported: use 'a' (append), 'w' (overwrite) or 'x' (create, never"
                " overwrite)"
            )
        self._lock = threading.Lock()
        self._fsync = fsync
        self.tolerant = tolerant
        self._open: dict[str, int] = {}  # run_id -> index of its last iteration written
        self._ended: set[str] = set()
        self.error: str | None = None
        """Why the trace is incomplete: the first record a tolerant writer could not write (None: nothing lost)."""
        self.lost = 0
        """Records not written since :attr:`error` (a tolerant writer)."""
        self.windowed = 0
        """Strings cut to a window because their record was over the per-record limit."""
        self._torn = False  # a failed write left bytes that could not be cut off: nothing more may follow them
        self._fd: int | None = None
        self._stream: BinaryIO | None = None
        if isinstance(target, (str, os.PathLike)):
            path = Path(target)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise TraceFormatError(
                    f"cannot make the trace's folder: {exc.strerror or exc}", path=str(path)
                ) from None
            self._fd = open_safely(path, mode, file_mode)
            self.path: str | None = str(path)
        else:
            self._stream = target
            self.path = getattr(target, "name", None) if isinstance(getattr(target, "name", None), str) else None
        self._closed = False

    # -- records ---------------------------------------------------------------------------------------

    def start(self, start: RunStart) -> None:
        """Write the header of a run. Each run id may start once per writer. Raises when it cannot be written, tolerant
        or not: a run whose trace cannot start is refused before its first model call."""
        with self._lock:
            if start.run_id in self._open or start.run_id in self._ended:
                raise self._error(f"run {start.run_id!r} was already started in this trace; give each run its own id")
            self._emit("run_start", start, version=FORMAT_VERSION)
            self._open[start.run_id] = 0

    def iteration(self, event: IterationEvent) -> None:
        """Write one model call of a started run; indexes must follow 1, 2, 3, ..."""
        with self._lock:
            if self._degraded():
                if event.run_id in self._open:
                    self._open[event.run_id] = max(self._open[event.run_id], event.index)  # handed, not written
                return
            try:
                last = self._expect_open(event.run_id, "iteration")
                if event.index != last + 1:
                    raise self._error(
                        f"iteration {event.index} of run {event.run_id!r} is out of order: the next index is {last + 1}"
                    )
                self._emit("iteration", event)
                self._open[event.run_id] = event.index
            except TraceFormatError as exc:
                self._failed(exc)

    def catch_up(self, run_id: str, events: Sequence[IterationEvent]) -> None:
        """Write the iterations of ``events`` (one run's, in index order) that come after the last one this writer was
        handed for ``run_id``: what a run not yet in the trace has seen, oldest first."""
        with self._lock:
            last = self._open.get(run_id)
        if last is None:
            return
        pending = []
        for event in reversed(events):
            if event.index <= last:
                break
            pending.append(event)
        for event in reversed(pending):
            self.iteration(event)

    def decision(self, run_id: str, decision: Decision) -> None:
        """Write the guard's decision after an iteration (``decision.iteration``, or the last one written)."""
        with self._lock:
            if self._degraded():
                return
            try:
                last = self._expect_open(run_id, "decision")
                iteration = decision.iteration if decision.iteration is not None else last
                if not 1 <= iteration <= last:
                    raise self._error(
                        f"decision after iteration {iteration} of run {run_id!r}: only iterations 1..{last} were"
                        " written; write the iteration first"
                    )
                if decision.iteration is None:
                    decision = decision.model_copy(update={"iteration": iteration})
                self._emit("decision", decision, run_id=run_id)
            except TraceFormatError as exc:
                self._failed(exc)

    def end(self, end: RunEnd) -> RunEnd:
        """Write the footer of a run; nothing more may be written for it. Returns the footer as written: a degraded
        trace's footer says so in ``evidence["trace_error"]`` and ``evidence["trace_records_lost"]``."""
        with self._lock:
            try:
                self._expect_open(end.run_id, "run_end")
                if self.error is not None:
                    lost = {"trace_error": self.error, "trace_records_lost": self.lost}
                    end = end.model_copy(update={"evidence": {**end.evidence, **lost}})
                    if self._torn or self._closed:
                        self.lost += 1
                        return end
                self._emit("run_end", end)
                del self._open[end.run_id]
                self._ended.add(end.run_id)
            except TraceFormatError as exc:
                self._failed(exc)
            return end

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
            if self._fd is not None:
                os.close(self._fd)
            elif self._stream is not None:
                try:
                    self._stream.flush()
                except OSError as exc:
                    self._failed(self._io_error(exc))

    def discard(self) -> None:
        """Close and remove the file: for a writer whose run could not start (it holds no whole record of a run, and
        a file left behind would refuse the same run id on a retry)."""
        self.close()
        if self.path is not None and self._fd is not None:
            try:
                os.unlink(self.path)
            except OSError:
                pass

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -------------------------------------------------------------------------------------

    def _emit(self, record_type: str, model: BaseModel, **prefix: object) -> None:
        """Write ``model`` as one whole line (cut to fit the per-record limit), or raise TraceFormatError."""
        if self._closed:
            raise self._error("the trace writer is closed; open a new TraceWriter to append more records")
        if self._torn:
            raise self._error("an earlier write left a partial line that could not be cut off; nothing can follow it")
        try:
            line, cut = fit_record(record_type, model, safe_reader.MAX_LINE_BYTES, **prefix)
        except ValueError as exc:
            raise self._error(f"{exc}; it is not written") from None
        if cut:
            self.windowed += cut
            log.warning(
                "%s: a %s record was over the per-record limit of %d bytes: %d of its strings were written as"
                " windows stating their whole size",
                self.path or "<trace>",
                record_type,
                safe_reader.MAX_LINE_BYTES,
                cut,
            )
        try:
            if self._fd is not None:
                self._write_whole(self._fd, line)
            else:
                assert self._stream is not None
                self._stream.write(line)
                self._stream.flush()
        except OSError as exc:
            if self._fd is None:
                self._torn = True  # a stream cannot be cut back: what it took of the line stays
            raise self._io_error(exc) from None

    def _write_whole(self, fd: int, line: bytes) -> None:
        """``line`` at the end of the file, whole; on a failure part-way the part written is cut off again."""
        before = os.fstat(fd).st_size
        view = memoryview(line)
        done = 0
        try:
            while done < len(line):
                done += os.write(fd, view[done:])
            if self._fsync:
                os.fsync(fd)
        except OSError:
            if done:
                try:
                    os.ftruncate(fd, before)
                except OSError:
                    self._torn = True
            raise

    def _degraded(self) -> bool:
        """True when a tolerant writer has lost a record already: this one is counted, not written."""
        if self.error is None:
            return False
        self.lost += 1
        return True

    def _failed(self, exc: TraceFormatError) -> None:
        """A record could not be written: raise (strict), or degrade the trace from here on (tolerant)."""
        if not self.tolerant:
            raise exc
        self.lost += 1
        if self.error is None:
            self.error = str(exc)
            log.warning("the trace is incomplete from here on; the run goes on unchanged: %s", exc)

    def _io_error(self, exc: OSError) -> TraceFormatError:
        return self._error(f"cannot write the trace: {exc.strerror or exc}")

    def _expect_open(self, run_id: str, what: str) -> int:
        if run_id in self._open:
            return self._open[run_id]
        if run_id in self._ended:
            raise self._error(f"{what} record for run {run_id!r} after its run_end footer; a run ends once")
        raise self._error(f"{what} record for run {run_id!r}, which was never started: write its run_start first")

    def _error(self, message: str) -> TraceFormatError:
        return TraceFormatError(message, path=self.path)


def open_run_trace(path: Path, start: RunStart, *, file_mode: int = 0o600) -> TraceWriter:
    """A tolerant writer of one run's trace at ``path`` (created, never overwritten), its header written. The header
    holds the policy's digest and settings, the whole policy written once beside it (:mod:`pyguard.trace.policy_file`).
    When the header cannot be written (a full disk) the file is removed again, so a retry of the run id is not
    refused, and a :class:`TraceFormatError` naming the file says why."""

    writer = TraceWriter(path, mode="x", file_mode=file_mode, tolerant=True)
    try:
        if start.policy:
            start = start.model_copy(update={"policy": compact_policy(start.policy, start.task_type, path.parent)})
        writer.start(start)
    except BaseException:
        writer.discard()
        raise
    return writer


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
