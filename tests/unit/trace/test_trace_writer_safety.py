"""Trace files are written safely: no symlinks followed, owner-only by default, never overwritten in mode "x", a torn
tail repaired before appending, no record the readers would refuse."""

from __future__ import annotations

import os
import stat

import pytest

from pyguard.base.errors import TraceFormatError
from pyguard.base.events import IterationEvent, Outcome, RunEnd, RunStart
from pyguard.trace import TraceWriter, read_trace
from pyguard.trace.records import TraceWarning


def _write_run(writer: TraceWriter, run_id: str) -> None:
    writer.start(RunStart(run_id=run_id))
    writer.iteration(IterationEvent(run_id=run_id, index=1, text="done"))
    writer.end(RunEnd(run_id=run_id, outcome=Outcome.SUCCEEDED, iterations=1))


@pytest.mark.parametrize("mode", ["a", "w", "x"])
def test_a_symlink_is_refused_and_its_target_untouched(tmp_path, mode):
    target = tmp_path / "precious"
    target.write_text("keep me")
    link = tmp_path / "t.jsonl"
    link.symlink_to(target)
    with pytest.raises(TraceFormatError, match="symbolic link|already there"):
        TraceWriter(link, mode=mode)
    assert target.read_text() == "keep me"


def test_new_trace_files_are_owner_only_by_default_and_configurable(tmp_path):
    with TraceWriter(tmp_path / "a.jsonl") as w:
        _write_run(w, "a")
    assert stat.S_IMODE(os.stat(tmp_path / "a.jsonl").st_mode) == 0o600
    old = os.umask(0)
    try:
        with TraceWriter(tmp_path / "b.jsonl", file_mode=0o640) as w:
            _write_run(w, "b")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "b.jsonl").st_mode) == 0o640


def test_exclusive_mode_never_overwrites(tmp_path):
    path = tmp_path / "t.jsonl"
    with TraceWriter(path, mode="x") as w:
        _write_run(w, "first")
    with pytest.raises(TraceFormatError, match="never overwritten"):
        TraceWriter(path, mode="x")
    assert [r.run_id for r in read_trace(path).runs] == ["first"]


def test_appending_after_a_torn_line_repairs_the_file(tmp_path):
    path = tmp_path / "t.jsonl"
    with TraceWriter(path) as w:
        _write_run(w, "r1")
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"type":"run_start","version":1,"run_id":"cut')  # a writer killed mid-line
    with pytest.warns(TraceWarning, match="torn"):
        w = TraceWriter(path)
    with w:
        _write_run(w, "r2")
    trace = read_trace(path)
    assert [r.run_id for r in trace.runs] == ["r1", "r2"] and trace.torn_line is None


def test_a_record_over_the_limit_is_written_as_a_window_and_one_that_cannot_fit_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr("pyguard.base.safe_reader.MAX_LINE_BYTES", 2_000)
    with TraceWriter(tmp_path / "t.jsonl") as w:
        w.start(RunStart(run_id="r1"))
        w.iteration(IterationEvent(run_id="r1", index=1, text="x" * 10_000))  # cut to a window, never refused
        with pytest.raises(TraceFormatError, match="per-record limit"):  # 50 strings of 512 characters cannot fit
            w.iteration(IterationEvent(run_id="r1", index=2, tool_calls=tuple(_calls(50))))
    (run,) = read_trace(tmp_path / "t.jsonl").runs
    (event,) = run.record.events
    assert event.text is not None and len(event.text) < 2_000 and "characters of 10000 not read here" in event.text


def _calls(n: int):
    from pyguard.base.events import ToolCall

    return [ToolCall(id=f"c{i}", name="t", arguments="y" * 600) for i in range(n)]
