"""Carrying out a live calibration's runs: a thread pool, each finished run written at once, progress on stderr (a bar
on a terminal, plain lines elsewhere: a CI log, a pipe).

Each finished run is written to its own trace file ``<trace_dir>/<task_id>#<rep>.jsonl`` (written aside, then
renamed: a file there is always a whole run). A run that raises stops the pool (:class:`RunError`; the runs finished
so far are kept); Ctrl-C lets the runs in flight finish and be written.
"""

from __future__ import annotations

import os
import sys
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import TextIO, cast

from pyguard.base.errors import RunError
from pyguard.base.events import RunRecord
from pyguard.calibrate.runs import RunStatus, run_status
from pyguard.live.calibration.plan import PlannedRun, Runner, label_run, trace_file
from pyguard.trace import TraceWriter

__all__: list[str] = []


def write_record(trace_dir: Path, record: RunRecord) -> None:
    final = trace_file(trace_dir, record.run_id)
    part = final.with_name(final.name + ".part")
    with TraceWriter(part, mode="w") as writer:
        writer.write_run(record)
    os.replace(part, final)


Progress = bool | str
"""How progress is shown: ``True`` or ``"bar"`` (a rich bar, for a terminal), ``"lines"`` (a plain line now and
then, for a log or a pipe), ``False`` (none)."""


def execute(
    todo: list[PlannedRun],
    root: Path,
    runner: Runner,
    threads: int,
    done: dict[str, RunRecord],
    progress: Progress,
    stream: TextIO | None = None,
) -> None:
    lock = threading.Lock()

    def one(run: PlannedRun) -> RunRecord:
        out = runner(run)
        raw = cast(RunRecord, getattr(out, "record", out))
        record = label_run(run, raw)
        write_record(root, record)
        with lock:
            done[run.run_id] = record
        return record

    bar: _Bar | _Lines | None = None
    if progress == "lines":
        bar = _Lines(len(todo), stream or sys.stderr)
    elif progress:
        bar = _Bar(len(todo))
    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="pyguard-calibrate")
    pending: set[Future] = set()
    try:
        futures = {pool.submit(one, run): run for run in todo}
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                exc = fut.exception()
                if exc is not None:
                    raise RunError(
                        f"run {futures[fut].run_id!r} could not be carried out ({type(exc).__name__}: {exc}); the "
                        f"runs finished so far are kept in {str(root)!r}: fix the cause and rerun to resume"
                    ) from exc
                if bar is not None:
                    bar.advance(fut.result())
    finally:
        for fut in pending:
            fut.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        if bar is not None:
            bar.close()


def _tally(counts: dict[str, int], record: RunRecord) -> None:

    status = run_status(record)
    counts[{RunStatus.SUCCESS: "ok", RunStatus.FAILURE: "fail", RunStatus.CENSORED: "cut"}[status]] += 1


class _Lines:
    """Progress as plain lines on a stream that is not a terminal: every run while there are at most 50, else about
    every 5% of them, and the last."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self._total, self._stream, self._done = total, stream, 0
        self._every = 1 if total <= 50 else -(-total // 20)
        self._counts = {"ok": 0, "fail": 0, "cut": 0}

    def advance(self, record: RunRecord) -> None:
        self._done += 1
        _tally(self._counts, record)
        if self._done % self._every == 0 or self._done == self._total:
            c = self._counts
            self._stream.write(
                f"calibrating: {self._done}/{self._total} runs (ok {c['ok']}, failed {c['fail']}, cut off "
                f"{c['cut']}; last {record.run_id})\n"
            )
            self._stream.flush()

    def close(self) -> None:
        pass


class _Bar:
    """A rich progress bar on stderr: runs done, successes / failures / cut-off so far, time left."""

    def __init__(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self._counts = {"ok": 0, "fail": 0, "cut": 0}
        self._p = Progress(
            TextColumn("calibrating"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.description}"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        self._p.start()
        self._task = self._p.add_task(self._text(), total=total)

    def _text(self) -> str:
        c = self._counts
        return f"ok {c['ok']} · failed {c['fail']} · cut off {c['cut']}"

    def advance(self, record: RunRecord) -> None:
        _tally(self._counts, record)
        self._p.update(self._task, advance=1, description=self._text())

    def close(self) -> None:
        self._p.stop()
