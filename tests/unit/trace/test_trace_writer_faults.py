"""A trace that cannot be written degrades the trace, never the run (issue 33): a write that fails part-way leaves no
partial line, a tolerant writer reports what it lost in the footer and on :attr:`TraceWriter.error`, the reader
reports such a run as incomplete, a record over the per-record limit is written as windows with their whole size, and
a header that cannot be written leaves no file behind."""

from __future__ import annotations

import errno
import os
import types
from pathlib import Path

import pytest

from pyguard.base.decisions import Action, Decision
from pyguard.base.errors import TraceFormatError
from pyguard.base.events import IterationEvent, Observation, Outcome, RunEnd, RunStart, ToolCall
from pyguard.loading import load_runs
from pyguard.trace import read_trace
from pyguard.trace.records import TraceWarning
from pyguard.trace.writer import TraceWriter, open_run_trace


class _Disk:
    """``os`` for the writer, whose ``write`` has ``room`` bytes left: a write past it writes what fits, then the next
    raises ENOSPC, as a full disk does. ``room = None``: unlimited."""

    def __init__(self, room: int | None) -> None:
        self.room = room

    def write(self, fd: int, data) -> int:
        if self.room is None:
            return os.write(fd, data)
        if self.room <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = os.write(fd, bytes(data[: self.room]))
        self.room -= n
        return n

    def __getattr__(self, name: str):
        return getattr(os, name)


@pytest.fixture
def disk(monkeypatch) -> _Disk:
    d = _Disk(None)
    monkeypatch.setattr("pyguard.trace.writer.os", types.SimpleNamespace(**{**vars(os), "write": d.write}))
    return d


def _event(index: int, text: str = "") -> IterationEvent:
    return IterationEvent(
        run_id="r",
        index=index,
        tool_calls=(ToolCall(id=f"c{index}", name="lookup", arguments='{"id": 1}'),),
        observations=(Observation(kind="tool", tool_call_id=f"c{index - 1}", tool_name="lookup", text=text or "ok"),),
    )


def _end(iterations: int) -> RunEnd:
    return RunEnd(run_id="r", outcome=Outcome.SUCCEEDED, iterations=iterations, answer="done")


def test_a_disk_that_fills_mid_run_degrades_the_trace_never_raises_and_leaves_only_whole_lines(tmp_path, disk):
    path = tmp_path / "r.jsonl"
    writer = open_run_trace(path, RunStart(run_id="r"))
    writer.iteration(_event(1))
    writer.decision("r", Decision(action=Action.CONTINUE))
    disk.room = 100  # the next record is cut part-way by a full disk
    for i in range(2, 6):
        writer.iteration(_event(i))
        writer.decision("r", Decision(action=Action.CONTINUE))
    disk.room = None  # room again: a writer that wrote on now would leave a gap, and glue a record to a torn line
    writer.iteration(_event(6))
    end = writer.end(_end(6))
    writer.close()
    assert writer.error is not None and "No space left on device" in writer.error and str(path) in writer.error
    assert end.evidence["trace_error"] == writer.error and end.evidence["trace_records_lost"] == writer.lost == 9
    data = path.read_bytes()
    assert data.endswith(b"\n") and all(line.startswith(b'{"type":"') for line in data.splitlines())
    with pytest.warns(TraceWarning, match="run 'r' is incomplete: its writer lost records"):
        (run,) = read_trace(path).runs
    assert not run.complete and run.record.end is None and [e.index for e in run.record.events] == [1]
    with pytest.warns(TraceWarning):
        (record,) = load_runs(path)
    assert record.end is None  # never read as a complete run of what is left


def test_a_strict_writer_raises_naming_the_file_and_cuts_the_partial_line_off(tmp_path, disk):
    path = tmp_path / "t.jsonl"
    with TraceWriter(path) as writer:
        writer.start(RunStart(run_id="r"))
        disk.room = 10
        with pytest.raises(TraceFormatError, match=rf"{path}: cannot write the trace: No space left on device"):
            writer.iteration(_event(1))
        disk.room = None
        writer.iteration(_event(1))  # the refused record was not counted: the same index is the next one
        writer.end(_end(1))
    (run,) = read_trace(path).runs
    assert run.complete and len(run.record.events) == 1


def test_a_header_that_cannot_be_written_leaves_no_file_behind_and_names_it(tmp_path, disk):
    path = tmp_path / "r.jsonl"
    disk.room = 0
    with pytest.raises(TraceFormatError, match=rf"{path}: cannot write the trace: No space left on device"):
        open_run_trace(path, RunStart(run_id="r"))
    assert not path.exists()  # a retry of the run id is not refused
    disk.room = None
    writer = open_run_trace(path, RunStart(run_id="r"))
    writer.end(_end(0))
    writer.close()
    assert read_trace(path).runs[0].complete


def test_a_record_over_the_limit_is_written_as_windows_stating_their_whole_size(tmp_path, monkeypatch):
    monkeypatch.setattr("pyguard.base.safe_reader.MAX_LINE_BYTES", 20_000)
    path = tmp_path / "t.jsonl"
    big = "数据" * 6_000  # 12,000 characters, 36,000 bytes of UTF-8
    event = IterationEvent(
        run_id="r",
        index=2,
        observations=tuple(
            Observation(kind="tool", tool_call_id=f"c{i}", tool_name="dump", text=big + str(i)) for i in range(3)
        ),
    )
    writer = open_run_trace(path, RunStart(run_id="r"))
    writer.iteration(_event(1))
    writer.iteration(event)  # over the limit: written as windows, never refused
    writer.iteration(_event(3))  # and the next index is the next one ("out of order" never follows)
    writer.end(_end(3))
    writer.close()
    assert writer.error is None and writer.windowed == 3
    assert all(len(line) <= 20_000 for line in path.read_bytes().splitlines())
    (run,) = read_trace(path).runs
    assert run.complete and [e.index for e in run.record.events] == [1, 2, 3]
    for i, o in enumerate(run.record.events[1].observations):
        assert o.whole_chars == 12_001 and o.chars == 12_001 and len(o.text) < 12_001
        assert o.text.startswith("数据数据") and o.text.endswith(f"据{i}")
        assert "[pyguard window: " in o.text and "characters of 12001 not read here" in o.text


def test_a_record_that_cannot_fit_at_all_degrades_a_tolerant_trace(tmp_path, monkeypatch):
    monkeypatch.setattr("pyguard.base.safe_reader.MAX_LINE_BYTES", 2_000)
    path = tmp_path / "t.jsonl"
    many = IterationEvent(
        run_id="r", index=1, tool_calls=tuple(ToolCall(id=f"c{i}", name="t", arguments="x" * 600) for i in range(50))
    )
    writer = open_run_trace(path, RunStart(run_id="r"))
    writer.iteration(many)
    end = writer.end(_end(1))
    writer.close()
    assert writer.error is not None and "does not fit the per-record limit of 2000 bytes" in writer.error
    assert end.evidence["trace_records_lost"] == 1
    with pytest.warns(TraceWarning, match="incomplete"):
        (run,) = read_trace(path).runs
    assert not run.complete


def test_an_unwritable_trace_folder_is_an_error_naming_it(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(TraceFormatError, match=str(Path(blocker) / "r.jsonl")):
        open_run_trace(blocker / "r.jsonl", RunStart(run_id="r"))
