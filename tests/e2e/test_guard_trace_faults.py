"""The guard's decisions never depend on its trace (issue 33): a disk that fills mid-run leaves a stuck agent stopped
after the same model calls as without a trace, with ``trace_error`` on the result and a trace that reads as
incomplete; a record over the per-record limit changes no decision; a full disk at the start is a clear error that
leaves nothing behind.

The disk is a small tmpfs when the test can mount one (root); otherwise the trace writer's ``os.write`` raises
ENOSPC while the test says the disk is full. The disk fills while the engine decides about a given model call (a
wrapped engine session calls ``fill``): no timing, the same point every run."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import types
import warnings
from pathlib import Path

import pytest

from pyguard.base.errors import RunError
from pyguard.base.events import Outcome
from pyguard.jvm import scripted_model
from pyguard.live.guard import Guard
from pyguard.loading import load_runs
from pyguard.trace import read_trace, trace_file_name
from pyguard.trace.records import TraceWarning

TASK = "Where is order 12345?"


def _stuck() -> dict:
    """An agent that asks for the same lookup again and again; each result is longer than a page (4 KiB), so each
    iteration's record needs a page of its own: once the tmpfs is full, the next iteration cannot be written."""
    result = "order 12345: status unknown. " * 200
    tool = {"name": "lookup", "description": "look up an order", "parameters": {}, "results": [result]}
    call = {"tool_calls": [{"name": "lookup", "arguments": {"id": "12345"}}]}
    return {
        "name": "stuck",
        "seed": 1,
        "toolset": "scenario",
        "tools": [tool],
        "turns": [call] * 300 + [{"answer": "x"}],
    }


class _Disk:
    """A folder on a disk the test can fill and free: a 1 MiB tmpfs, or a writer whose writes fail while 'full'."""

    def __init__(self, path: Path, monkeypatch) -> None:
        self.path = path
        self.mounted = False
        self.full = False
        path.mkdir()
        if os.geteuid() == 0 and shutil.which("mount"):
            done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(path)], capture_output=True)
            self.mounted = done.returncode == 0
        if not self.mounted:
            real = os.write

            def write(fd: int, data) -> int:
                if self.full:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                return real(fd, data)

            monkeypatch.setattr("pyguard.trace.writer.os", types.SimpleNamespace(**{**vars(os), "write": write}))

    def fill(self) -> None:
        self.full = True
        if self.mounted:
            with open(self.path / "filler", "wb") as f:
                try:
                    while True:
                        f.write(b"\0" * 65536)
                        f.flush()
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC

    def free(self) -> None:
        self.full = False
        if self.mounted:
            (self.path / "filler").unlink()

    def close(self) -> None:
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.path)], check=True)  # lazy: a file left open still lets go


@pytest.fixture
def disk(tmp_path, monkeypatch):
    d = _Disk(tmp_path / "disk", monkeypatch)
    yield d
    d.close()


class _Session:
    """A real engine session that runs ``act`` (fill or free the disk) before deciding about model call ``at``."""

    def __init__(self, inner, actions: dict) -> None:
        self._inner, self._actions = inner, actions

    def observe(self, event):
        action = self._actions.get(event.index)
        if action is not None:
            action()
        return self._inner.observe(event)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def _guard(actions: dict | None = None, **kwargs) -> Guard:
    guard = Guard(**kwargs)
    if actions:
        new_run = guard.policy.new_run
        guard.policy.new_run = lambda run_id, task_type=None: _Session(new_run(run_id, task_type), actions)
    return guard


def _decisions(result) -> list[tuple]:
    return [(d.action, d.rule, d.iteration) for d in result.decisions]


def test_a_disk_that_fills_mid_run_leaves_the_guard_deciding_as_without_a_trace(jvm, disk):
    alone = _guard().run("aiservices", scripted_model(_stuck()), TASK)
    assert alone.outcome is Outcome.STALLED and alone.model_calls < 20, alone.summary()
    result = _guard({2: disk.fill}, trace_dir=disk.path).run("aiservices", scripted_model(_stuck()), TASK, run_id="r")
    assert (result.outcome, result.model_calls, _decisions(result)) == (
        alone.outcome,
        alone.model_calls,
        _decisions(alone),
    )
    assert result.trace_error is not None and "No space left on device" in result.trace_error
    assert result.trace_path is not None and result.trace_path in result.trace_error
    assert result.end.evidence["trace_error"] == result.trace_error
    data = Path(result.trace_path).read_bytes()
    assert data.endswith(b"\n")  # whole lines only: the record cut by the full disk was cut off again
    (run,) = read_trace(result.trace_path).runs
    assert not run.complete and 1 <= len(run.record.events) < result.model_calls


def test_a_disk_that_frees_again_gives_a_footer_that_says_the_trace_is_incomplete(jvm, disk):
    alone = _guard().run("aiservices", scripted_model(_stuck()), TASK)
    guard = _guard({2: disk.fill, 3: disk.free}, trace_dir=disk.path)
    result = guard.run("aiservices", scripted_model(_stuck()), TASK, run_id="r")
    assert (result.outcome, result.model_calls) == (alone.outcome, alone.model_calls)
    assert result.trace_error is not None
    with pytest.warns(TraceWarning, match="run 'r' is incomplete: its writer lost records"):
        (run,) = read_trace(result.trace_path).runs
    assert run.record.end is None and len(run.record.events) < result.model_calls  # never a complete-looking run
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        (record,) = load_runs(result.trace_path)
    assert record.end is None


def test_a_full_disk_at_the_start_names_the_file_and_leaves_nothing_that_blocks_a_retry(jvm, disk):
    guard = _guard(trace_dir=disk.path)
    disk.fill()
    path = disk.path / trace_file_name("r")
    with pytest.raises(RunError, match=f"run 'r' cannot start: .*{path}"):
        guard.run("aiservices", scripted_model(_stuck()), TASK, run_id="r")
    assert not path.exists()
    disk.free()
    result = guard.run("aiservices", scripted_model(_stuck()), TASK, run_id="r")
    assert result.trace_error is None and read_trace(path).runs[0].complete


def test_a_record_over_the_limit_changes_no_decision(jvm, tmp_path, monkeypatch):
    """Two parallel tool results of 300,000 characters arrive as windows of 131,072; with the per-record limit lowered
    to 200,000 bytes each iteration's record is over it (as 200 results of 140,000 CJK characters are over 64 MiB)."""
    size_tool = {"name": "dump", "description": "dump a log", "parameters": {}, "size": 300_000}
    both = {"tool_calls": [{"name": "dump", "arguments": {}}, {"name": "dump", "arguments": {}}]}
    scenario = {"name": "big", "seed": 1, "toolset": "scenario", "tools": [size_tool], "turns": [both] * 40}
    alone = _guard().run("aiservices", scripted_model(scenario), "dump it")
    monkeypatch.setattr("pyguard.base.safe_reader.MAX_LINE_BYTES", 200_000)
    traced = _guard(trace_dir=tmp_path).run("aiservices", scripted_model(scenario), "dump it", run_id="big")
    assert traced.trace_error is None
    assert (traced.outcome, traced.model_calls, _decisions(traced)) == (
        alone.outcome,
        alone.model_calls,
        _decisions(alone),
    )
    (run,) = read_trace(traced.trace_path).runs
    assert run.complete and len(run.record.events) == traced.model_calls
    tool_obs = [o for e in run.record.events for o in e.observations if o.kind == "tool"]
    assert tool_obs and all(o.whole_chars == 300_000 for o in tool_obs)


def test_the_engine_decides_before_the_call_is_written(jvm, tmp_path):
    """Decide first, write after: when the engine decides about model call i, the trace holds calls 1..i-1 only, so
    the time a write takes (a slow disk, a record cut to fit) is never part of the decision's."""
    path = tmp_path / trace_file_name("r")
    held: dict[int, int] = {}

    def count(i: int):
        return lambda: held.setdefault(i, path.read_text().count('"type":"iteration"'))

    result = _guard({i: count(i) for i in (1, 2, 3)}, trace_dir=tmp_path).run(
        "aiservices", scripted_model(_stuck()), TASK, run_id="r"
    )
    assert held == {1: 0, 2: 1, 3: 2}
    (run,) = read_trace(path).runs
    assert run.complete and len(run.record.events) == result.model_calls
