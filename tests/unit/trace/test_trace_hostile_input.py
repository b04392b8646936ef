"""Hostile recorded input in every command (replay, calibrate, check) and both formats: a clear message and exit 2,
never a traceback; strict values at the trace boundary; torn lines and unreadable files reported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pyguard.base.errors import TraceFormatError
from pyguard.cli import main
from pyguard.loading import load_runs
from pyguard.trace import read_trace

RECORDINGS = Path(__file__).parents[2] / "data" / "recordings"
COMMANDS = {
    "replay": ["replay"],
    "calibrate": ["calibrate", "--failure-cost", "100"],
    "check": ["check"],
}
PYGUARD_LINES = (RECORDINGS / "pyguard_trace.jsonl").read_text().splitlines()
OPENAI_LINES = (RECORDINGS / "openai_runs.jsonl").read_text().splitlines()


def _hostile(kind: str, fmt: str) -> str:
    """A file of valid records with one hostile line appended (a record, not the last torn line)."""
    good = PYGUARD_LINES if fmt == "pyguard" else OPENAI_LINES
    if kind == "deep":
        bad = "[" * 100_000 + "]" * 100_000
    elif kind == "huge_int":
        bad = json.dumps({"type": "run_start", "version": 1, "run_id": "x"})[:-1] + ', "n": ' + "9" * 4301 + "}"
        if fmt == "openai":
            bad = '{"id": "x", "messages": [], "n": ' + "9" * 4301 + "}"
    else:  # a line over the per-record limit (patched to 2000 bytes below)
        bad = json.dumps({"type": "run_start", "version": 1, "run_id": "big", "task": "x" * 5000})
        if fmt == "openai":
            bad = json.dumps({"id": "big", "messages": [{"role": "user", "content": "x" * 5000}]})
    return "\n".join([*good, bad, *good[:1]]) + "\n" if fmt == "pyguard" else "\n".join([*good, bad]) + "\n"


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("fmt", ["pyguard", "openai"])
@pytest.mark.parametrize("given", [True, False], ids=["format-given", "format-detected"])
@pytest.mark.parametrize("kind", ["deep", "huge_int", "huge_line"])
def test_hostile_input_is_a_clear_error_with_exit_2(tmp_path, monkeypatch, command, fmt, given, kind):
    """A pyguard trace is strict: the hostile line is an error naming the file (exit 2). A recording is read
    tolerantly (messy real logs): the hostile record is skipped and counted, the others are used (exit 0), and
    ``--strict`` makes it the error. Never a traceback either way, whether ``--format`` is given or detected."""
    monkeypatch.setattr("pyguard.base.safe_reader.MAX_LINE_BYTES", 2000)
    path = tmp_path / "runs.jsonl"
    path.write_text(_hostile(kind, fmt))
    args = [*COMMANDS[command], str(path), *(["--format", fmt] if given else [])]
    runs = [args, args + ["--strict"]] if fmt == "openai" else [args]
    for k, argv in enumerate(runs):
        result = CliRunner().invoke(main, argv, catch_exceptions=True)
        assert not isinstance(result.exception, (RecursionError, ValueError)) or isinstance(
            result.exception, SystemExit
        )
        assert "Traceback" not in result.output
        if fmt == "openai" and k == 0:
            assert result.exit_code in (0, 1), (result.output, result.exception)  # 1: check's gate on what was read
            assert "unreadable item" in result.output and "too deep" in result.output, result.output
            continue
        assert result.exit_code == 2, (result.output, result.exception)
        assert str(path) in result.output or "runs.jsonl" in result.output, result.output


_LIMIT_NAMED = {"deep": "recursion limit", "huge_int": "4300 digits", "huge_line": "per-line limit of 2000 bytes"}


def _only_hostile(kind: str) -> str:
    """A file whose one record is hostile: nothing in it can be read."""
    if kind == "deep":
        return '{"messages": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    if kind == "huge_int":
        return '{"id": "x", "messages": [{"role": "assistant", "content": "a"}], "n": ' + "9" * 4301 + "}\n"
    return json.dumps({"id": "big", "messages": [{"role": "user", "content": "x" * 5000}]}) + "\n"


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("fmt", [None, "openai", "pyguard"])
@pytest.mark.parametrize("kind", ["deep", "huge_int", "huge_line"])
def test_a_file_of_nothing_but_hostile_input_is_refused_naming_file_and_limit(
    tmp_path, monkeypatch, command, fmt, kind
):
    """Issue 24: with the format detected (the default) a deep nesting or a huge integer printed a traceback
    (RecursionError, ValueError) in replay, calibrate and check. Now every path refuses it with exit 2 and a
    message naming the file and the limit."""
    if kind == "huge_line":
        monkeypatch.setattr("pyguard.base.safe_reader.MAX_LINE_BYTES", 2000)
    path = tmp_path / "hostile.jsonl"
    path.write_text(_only_hostile(kind))
    argv = [*COMMANDS[command], str(path), *(["--format", fmt] if fmt else [])]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2, (result.output, result.exception)
    assert not isinstance(result.exception, (RecursionError, MemoryError)), result.exception
    assert "Traceback" not in result.output
    assert "hostile.jsonl" in result.output and _LIMIT_NAMED[kind] in result.output, result.output


def test_an_over_size_line_is_never_held_whole(tmp_path):
    """The line-size limit bounds memory: a line 40 times the limit is read past in chunks, never whole. Measured
    with tracemalloc (allocations, not time) in a process of its own: tracemalloc counts every thread's allocations,
    and a test worker may hold a thread of an earlier test (the novelty kernel loading), whose allocations would count
    against the reader. The peak stays within a few limits, far below the line's size."""
    limit = 1 << 20
    path = tmp_path / "big.jsonl"
    with path.open("w") as f:
        f.write('{"messages": [{"role": "user", "content": "')
        for _ in range(40):
            f.write("x" * limit)
        f.write('"}]}\n')
    probe = (
        "import json, sys, tracemalloc\n"
        "import pyguard.base.safe_reader as reader\n"
        "from pyguard.base.errors import TraceFormatError\n"
        "from pyguard.loading import load_runs\n"
        f"reader.MAX_LINE_BYTES = {limit}\n"
        "tracemalloc.start()\n"
        "try:\n"
        "    load_runs(sys.argv[1])\n"
        "    error = None\n"
        "except TraceFormatError as e:\n"
        "    error = {'message': str(e), 'path': e.path, 'line': e.line}\n"
        "peak = tracemalloc.get_traced_memory()[1]\n"
        "print(json.dumps({'peak': peak, 'error': error}))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    error = report["error"]
    assert error is not None and "per-line limit" in error["message"], report
    assert error["path"] == str(path) and error["line"] == 1
    assert report["peak"] < 4 * limit, f"peak {report['peak']} bytes for a {40 * limit}-byte line"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_fifo_is_named_as_a_fifo(tmp_path, command, monkeypatch):
    """A FIFO nobody writes to: given up after the wait (shortened here), named as a FIFO, never a hang."""
    import pyguard.base.safe_reader

    monkeypatch.setattr(pyguard.base.safe_reader, "FIFO_WAIT_S", 0.05)
    fifo = tmp_path / "runs.jsonl"
    os.mkfifo(fifo)
    result = CliRunner().invoke(main, [*COMMANDS[command], str(fifo)])
    assert result.exit_code == 2, result.output
    assert "FIFO" in result.output and "does not exist" not in result.output


def _trace_with(field_path: tuple[str, ...], value: object, record_type: str = "iteration") -> list[str]:
    lines = []
    for line in PYGUARD_LINES:
        obj = json.loads(line)
        if obj["type"] == record_type and not lines_done(lines):
            target = obj
            for key in field_path[:-1]:
                target = target[key]
            target[field_path[-1]] = value
            lines.append("MARK")
        lines.append(json.dumps(obj))
    return [x for x in lines if x != "MARK"]


def lines_done(lines: list[str]) -> bool:
    return "MARK" in lines


@pytest.mark.parametrize(
    "record_type, field, value",
    [
        ("iteration", ("total_tokens",), -4770),
        ("iteration", ("input_tokens",), "100"),
        ("iteration", ("index",), "1"),
        ("iteration", ("latency_ms",), float("nan")),
        ("iteration", ("latency_ms",), float("inf")),
        ("iteration", ("total_tokens",), True),
        ("run_end", ("success_label",), "yes"),
        ("run_end", ("total_tokens",), -105),
        ("run_end", ("wall_ms",), float("-inf")),
        ("run_end", ("iterations",), 2.5),
    ],
)
def test_strict_values_in_a_pyguard_trace(tmp_path, record_type, field, value):
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(_trace_with(field, value, record_type)) + "\n")
    with pytest.raises(TraceFormatError) as err:
        read_trace(path)
    assert field[-1] in str(err.value) or "NaN" in str(err.value) or "Infinity" in str(err.value), str(err.value)
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output


def _torn(path: Path) -> None:
    text = "\n".join(PYGUARD_LINES) + "\n"
    path.write_text(text + PYGUARD_LINES[-1][: len(PYGUARD_LINES[-1]) // 2])


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_torn_line_is_reported_by_every_command(tmp_path, command):
    path = tmp_path / "t.jsonl"
    _torn(path)
    result = CliRunner().invoke(main, [*COMMANDS[command], str(path)])
    assert "warning:" in result.output and "torn" in result.output, result.output
    assert f"line {len(PYGUARD_LINES) + 1}" in result.output


def test_an_unreadable_file_in_a_directory_is_skipped_with_a_counted_warning(tmp_path):
    (tmp_path / "a.jsonl").write_text("\n".join(PYGUARD_LINES) + "\n")
    (tmp_path / "b.jsonl").write_text('{"type": "run_st')  # a header cut mid-line: the file cannot be told
    (tmp_path / "c.jsonl").write_text(PYGUARD_LINES[0].replace('"inc-1"', '"other"') + "\n" + "[" * 100_000 + "\n")
    runs = load_runs(tmp_path)
    assert {r.run_id for r in runs} == {json.loads(x)["run_id"] for x in PYGUARD_LINES if '"run_start"' in x}
    assert runs.skipped == {"file that cannot be read as a recording": 2} and runs.files == 1
    assert all("b.jsonl" in m or "c.jsonl" in m for m in runs.examples["file that cannot be read as a recording"])
    result = CliRunner().invoke(main, ["replay", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "skipped 2 unreadable item(s): 2 file that cannot be read" in result.output


def test_a_single_unreadable_file_still_fails(tmp_path):
    path = tmp_path / "b.jsonl"
    path.write_text('{"type": "run_st')
    with pytest.raises(TraceFormatError):
        load_runs(path)
