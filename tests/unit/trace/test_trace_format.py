"""The pyguard JSONL trace: writer -> reader round trips, torn and malformed files, incomplete runs."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyguard.base.decisions import Action, Decision
from pyguard.base.errors import InputError, TraceFormatError
from pyguard.base.events import IterationEvent, Observation, Outcome, RunEnd, RunRecord, RunStart, ToolCall
from pyguard.loading import load_runs
from pyguard.trace import FORMAT_VERSION, TraceWriter, read_trace, write_runs
from pyguard.trace.records import TraceWarning

RECORDINGS = Path(__file__).parents[2] / "data" / "recordings"


def _event(run_id: str, index: int, *, text: str = "", calls: int = 1) -> IterationEvent:
    return IterationEvent(
        run_id=run_id,
        index=index,
        input_tokens=100 + index,
        output_tokens=10,
        total_tokens=110 + index,
        tool_calls=tuple(ToolCall(id=f"c{index}.{k}", name="search", arguments='{"q": "x"}') for k in range(calls)),
        observations=(Observation(tool_call_id=f"c{index - 1}.0", tool_name="search", text=text),) if index > 1 else (),
    )


def _run(run_id: str, n: int, *, end: bool = True) -> RunRecord:
    events = [_event(run_id, i, text=f"result {i} ü ✓") for i in range(1, n + 1)]
    footer = (
        RunEnd(
            run_id=run_id,
            outcome=Outcome.STALLED,
            reason="looping",
            iterations=n,
            tool_calls=n,
            evidence={"repeats": [1, 2]},
        )
        if end
        else None
    )
    return RunRecord(start=RunStart(run_id=run_id, task_type="lookup", task="find x"), events=events, end=footer)


def test_round_trip_keeps_runs_and_decisions(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    runs = [_run("a", 3), _run("b", 1)]
    decisions = {
        "a": [
            Decision(
                action=Action.REFLECT,
                reason="no gain",
                rule="repeat_no_gain",
                reflection="think",
                iteration=2,
                budget=5,
            ),
            Decision(action=Action.STOP, reason="stalled", outcome=Outcome.STALLED, iteration=3),
        ]
    }
    assert write_runs(path, runs, decisions=decisions) == 2
    tf = read_trace(path)
    assert [r.record for r in tf.runs] == runs
    assert tf.runs[0].decisions == decisions["a"]
    assert tf.runs[1].decisions == []
    assert tf.torn_line is None and tf.incomplete == []
    first = json.loads(path.read_text().splitlines()[0])
    assert first["type"] == "run_start" and first["version"] == FORMAT_VERSION


def test_interleaved_concurrent_runs_are_keyed_by_run_id(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    n_threads, n_iter = 16, 20
    with TraceWriter(path) as w:

        def work(k: int) -> None:
            rid = f"run-{k}"
            w.start(RunStart(run_id=rid))
            for i in range(1, n_iter + 1):
                w.iteration(_event(rid, i, text=f"{rid}:{i}"))
            w.end(RunEnd(run_id=rid, outcome=Outcome.SUCCEEDED, iterations=n_iter))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    runs = load_runs(path)
    assert sorted(r.run_id for r in runs) == sorted(f"run-{k}" for k in range(n_threads))
    for r in runs:
        assert [e.index for e in r.events] == list(range(1, n_iter + 1))
        assert all(e.run_id == r.run_id for e in r.events)
        assert [o.text for e in r.events[1:] for o in e.observations] == [
            f"{r.run_id}:{i}" for i in range(2, n_iter + 1)
        ]
        assert r.end is not None


def test_truncated_last_line_is_skipped_and_run_is_incomplete(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write_runs(path, [_run("a", 3)])
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    # cut the footer in the middle, as a process killed mid-write would
    cut = b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2]
    path.write_bytes(cut)
    tf = read_trace(path)
    assert tf.torn_line == len(lines)
    (run,) = tf.runs
    assert not run.complete and run.record.end is None
    assert len(run.record.events) == 3
    # the cut iteration line: the run keeps only whole iterations
    path.write_bytes(b"".join(lines[:3]) + lines[3][:40])
    (run,) = read_trace(path).runs
    assert [e.index for e in run.record.events] == [1, 2] and run.record.end is None


def test_missing_footer_is_reported_incomplete_not_succeeded(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with TraceWriter(path) as w:
        w.write_run(_run("open", 2, end=False))
        w.write_run(_run("done", 1))
        assert w.open_runs == ["open"]
    tf = read_trace(path)
    assert [r.run_id for r in tf.incomplete] == ["open"]
    runs = {r.run_id: r for r in load_runs(path)}
    assert runs["open"].end is None and len(runs["open"].events) == 2
    assert runs["done"].end is not None


def test_malformed_line_in_the_middle_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write_runs(path, [_run("a", 3)])
    lines = path.read_text().splitlines()
    lines[2] = "this is not a record"  # a line that is NOT a record, NOT the last one
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceFormatError) as info:
        read_trace(path)
    assert info.value.line == 3 and info.value.path == str(path)
    assert f"{path}:3" in str(info.value)


def test_a_torn_record_inside_the_file_makes_its_run_incomplete_and_the_rest_readable(tmp_path: Path) -> None:
    """A record cut mid-write with the next record glued to it (a disk that filled, then had room again): its run keeps
    what came before and has no footer, whatever follows of it; the other runs read whole (issue 33)."""
    path = tmp_path / "t.jsonl"
    write_runs(path, [_run("a", 3), _run("b", 2)])
    lines = path.read_text().splitlines()
    footer_a = next(i for i, line in enumerate(lines) if '"run_end","run_id":"a"' in line)
    lines[2] = lines[2][:40] + lines[footer_a]  # iteration 2 of "a" torn, its footer glued to it
    del lines[footer_a]
    path.write_text("\n".join(lines) + "\n")
    with pytest.warns(TraceWarning, match=r"run 'a' is incomplete: line 3 is torn"):
        tf = read_trace(path)
    runs = {r.run_id: r for r in tf.runs}
    assert runs["a"].record.end is None and not runs["a"].complete and runs["a"].damage is not None
    assert [e.index for e in runs["a"].record.events] == [1]
    assert runs["b"].complete and len(runs["b"].record.events) == 2
    with pytest.warns(TraceWarning):
        loaded = {r.run_id: r for r in load_runs(path)}
    assert loaded["a"].end is None and loaded["b"].end is not None


def test_a_gap_in_the_iterations_or_a_footer_counting_more_makes_the_run_incomplete(tmp_path: Path) -> None:
    """Records missing from a run (a writer that lost some) never read as a complete run of what is left."""
    gap = tmp_path / "gap.jsonl"
    gap.write_text(
        '{"type":"run_start","version":1,"run_id":"a"}\n{"type":"iteration","run_id":"a","index":1}\n'
        '{"type":"iteration","run_id":"a","index":4}\n{"type":"run_end","run_id":"a","outcome":"succeeded",'
        '"iterations":4}\n'
    )
    with pytest.warns(TraceWarning, match="iterations 2..3 are missing"):
        (run,) = read_trace(gap).runs
    assert run.record.end is None and [e.index for e in run.record.events] == [1]
    short = tmp_path / "short.jsonl"
    short.write_text(
        '{"type":"run_start","version":1,"run_id":"a"}\n{"type":"iteration","run_id":"a","index":1}\n'
        '{"type":"run_end","run_id":"a","outcome":"succeeded","iterations":31}\n'
    )
    with pytest.warns(TraceWarning, match="counts 31 model calls, the trace holds 1"):
        (run,) = read_trace(short).runs
    assert run.record.end is None and not run.complete


@pytest.mark.parametrize(
    "bad, needle",
    [
        ('{"type": "iteration", "run_id": "a", "index": 1}', "out of order"),
        ('{"type": "iteration", "run_id": "zz", "index": 1}', "before its run_start"),
        ('{"type": "iteration", "run_id": "a", "index": "two"}', "index"),
        ('{"type": "bogus", "run_id": "a"}', "unknown record type"),
        ("[1, 2]", "JSON object"),
        ('{"type": "run_start", "version": 1, "run_id": "a"}', "starts twice"),
        ('{"type": "run_start", "version": 99, "run_id": "n"}', "upgrade pyguard"),
        ('{"type": "run_start", "run_id": "n"}', "version None"),
        ('{"type": "decision", "run_id": "a", "action": "stop", "iteration": 7}', "iteration 7"),
        ('{"type": "iteration", "run_id": "a", "index": 2, "surprise": 1}', "surprise"),
        ('{"messages": []}', "format='openai'"),
    ],
)
def test_invalid_records_raise_with_line_number(tmp_path: Path, bad: str, needle: str) -> None:
    path = tmp_path / "t.jsonl"
    good = [
        '{"type": "run_start", "version": 1, "run_id": "a"}',
        '{"type": "iteration", "run_id": "a", "index": 1}',
    ]
    path.write_text("\n".join(good + [bad, '{"type": "run_end", "run_id": "a", "outcome": "failed"}']) + "\n")
    with pytest.raises(TraceFormatError, match=needle) as info:
        read_trace(path)
    assert info.value.line == 3


def test_record_after_footer_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write_runs(path, [_run("a", 1)])
    with path.open("a") as f:
        f.write('{"type": "iteration", "run_id": "a", "index": 2}\n')
    with pytest.raises(TraceFormatError, match="after its run_end"):
        read_trace(path)


def test_writer_refuses_records_that_would_make_a_bad_trace(tmp_path: Path) -> None:
    with TraceWriter(tmp_path / "t.jsonl") as w:
        with pytest.raises(TraceFormatError, match="never started"):
            w.iteration(_event("x", 1))
        w.start(RunStart(run_id="x"))
        with pytest.raises(TraceFormatError, match="out of order"):
            w.iteration(_event("x", 2))
        with pytest.raises(TraceFormatError, match="write the iteration first"):
            w.decision("x", Decision(action=Action.CONTINUE))
        w.iteration(_event("x", 1))
        w.decision("x", Decision(action=Action.CONTINUE))  # iteration defaults to the last one written
        w.end(RunEnd(run_id="x", outcome=Outcome.FAILED))
        with pytest.raises(TraceFormatError, match="already started"):
            w.start(RunStart(run_id="x"))
    (run,) = read_trace(tmp_path / "t.jsonl").runs
    assert run.decisions[0].iteration == 1
    with pytest.raises(TraceFormatError, match="closed"):
        w.start(RunStart(run_id="y"))


def test_five_megabyte_observation_round_trips_intact(tmp_path: Path) -> None:
    big = ('0123456789abcdef\n"quoted" ✓ ' * 200_000)[: 5 * 1024 * 1024]
    assert len(big) == 5 * 1024 * 1024
    run = _run("big", 2)
    run.events[1] = run.events[1].model_copy(
        update={"observations": (Observation(tool_call_id="c1.0", tool_name="dump", text=big),)}
    )
    path = tmp_path / "big.jsonl"
    write_runs(path, [run])
    (back,) = load_runs(path)
    assert back.events[1].observations[0].text == big
    assert back == run


def test_non_finite_floats_are_written_as_null(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    run = _run("a", 1)
    run.events[0] = run.events[0].model_copy(update={"latency_ms": float("nan")})
    write_runs(path, [run])
    for line in path.read_text().splitlines():
        json.loads(line, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    assert load_runs(path)[0].events[0].latency_ms is None


text_st = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=40, deadline=None)
@given(
    texts=st.lists(text_st, min_size=1, max_size=5),
    args=text_st,
    tokens=st.one_of(st.none(), st.integers(min_value=0, max_value=10**9)),
)
def test_any_text_round_trips(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str], args: str, tokens: int | None
) -> None:
    events = [
        IterationEvent(
            run_id="h",
            index=i + 1,
            text=t,
            total_tokens=tokens,
            tool_calls=(ToolCall(name=t or "f", arguments=args),),
            observations=(Observation(kind="user", text=t),),
        )
        for i, t in enumerate(texts)
    ]
    run = RunRecord(
        start=RunStart(run_id="h", task=args),
        events=events,
        end=RunEnd(run_id="h", outcome=Outcome.EXPIRED, answer=args),
    )
    path = tmp_path_factory.mktemp("h") / "t.jsonl"
    write_runs(path, [run])
    assert load_runs(path) == [run]


def test_example_recording_reads_with_decisions() -> None:
    tf = read_trace(RECORDINGS / "pyguard_trace.jsonl")
    by_id = {r.run_id: r for r in tf.runs}
    assert set(by_id) == {"inc-1", "look-1"}
    assert by_id["inc-1"].record.end.outcome is Outcome.STALLED
    assert [d.action for d in by_id["inc-1"].decisions][-1] is Action.STOP
    assert by_id["look-1"].record.end.outcome is Outcome.SUCCEEDED


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        load_runs(tmp_path / "nope.jsonl")


def test_process_killed_mid_run_leaves_a_readable_prefix(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    path = tmp_path / "killed.jsonl"
    child = (
        "import sys\n"
        "from pyguard.base.events import IterationEvent, RunStart\n"
        "from pyguard.trace import TraceWriter\n"
        f"w = TraceWriter({str(path)!r})\n"
        "w.start(RunStart(run_id='k'))\n"
        "for i in range(1, 4):\n"
        "    w.iteration(IterationEvent(run_id='k', index=i, text='x' * 1000))\n"
        "print('ready', flush=True)\n"
        "sys.stdin.read()\n"  # block until killed: no footer, file never closed
    )
    proc = subprocess.Popen([sys.executable, "-c", child], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
        if proc.stdin:
            proc.stdin.close()
        if proc.stdout:
            proc.stdout.close()
    (run,) = read_trace(path).runs
    assert not run.complete
    assert [e.index for e in run.record.events] == [1, 2, 3]
