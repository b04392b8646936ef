"""A windowed observation (the Java sensor's window of a long tool result, ``Observation.whole_chars`` set) is recorded
explicitly: traces and Parquet files keep it, loading reads it, and replay decides on it exactly as on the whole
text. No JVM here: the window is built with the engine's own ``observed_text``, which Java's equals
(tests/jvm/test_observation_window.py)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pyguard.base.events import IterationEvent, Observation, RunRecord, RunStart, ToolCall
from pyguard.engine.window import WINDOW_CHARS, observed_text
from pyguard.loading import load_runs
from pyguard.replay import replay_run
from pyguard.trace import write_runs

READ = ToolCall(id="c", name="read_log", arguments='{"path": "app.log"}')


def _log(n: int) -> str:
    lines = [f"{i:08d} worker ok checksum {i * 7919 % 10007}\n" for i in range(n)]
    return "".join(lines)


def _run(windowed: bool) -> RunRecord:
    """Five reads of the same long log, then an answer; each result whole, or as the sensor sends its window."""
    whole = _log(12_000)  # ~395 K characters
    obs = (
        Observation(tool_call_id="c", tool_name="read_log", text=observed_text(whole), whole_chars=len(whole))
        if windowed
        else Observation(tool_call_id="c", tool_name="read_log", text=whole)
    )
    events = [
        IterationEvent(run_id="r", index=1, tool_calls=(READ,), observations=(Observation(kind="user", text="go"),))
    ]
    events += [IterationEvent(run_id="r", index=i, tool_calls=(READ,), observations=(obs,)) for i in range(2, 7)]
    events.append(IterationEvent(run_id="r", index=7, text="done", observations=(obs,)))
    return RunRecord(start=RunStart(run_id="r"), events=events)


def test_whole_chars_must_exceed_the_text_it_stands_for():
    with pytest.raises(ValidationError, match="whole_chars=3 is not more than the 3 characters"):
        Observation(text="abc", whole_chars=3)
    assert Observation(text="abc").chars == 3 and Observation(text="abc", whole_chars=10).chars == 10


def test_the_window_of_a_window_is_itself_so_the_engine_reads_a_sent_window_as_the_whole_text():
    for size in (WINDOW_CHARS, WINDOW_CHARS + 1, 3 * WINDOW_CHARS, 1_000_003):
        window = observed_text(_log(size // 38 + 1)[:size])
        assert len(window) <= WINDOW_CHARS
        assert observed_text(window) is window


def test_the_line_for_the_left_out_middle_fits_its_room_for_any_size():
    from pyguard.engine.window import EDGE_CHARS, MARKER_ROOM, marker_line

    assert len(marker_line(10**19 - 1, 10**19 - 1, 2**32 - 1)) <= MARKER_ROOM
    assert 2 * EDGE_CHARS + MARKER_ROOM == WINDOW_CHARS


def test_replay_decides_on_a_recorded_window_as_on_the_whole_text(tmp_path):
    whole, windowed = replay_run(_run(False)), replay_run(_run(True))
    assert windowed.stop_at is not None  # the repeats are seen through the window: the run is stopped
    assert windowed.model_dump() == whole.model_dump()


def test_a_trace_records_the_window_explicitly_and_reads_it_back(tmp_path):
    record = _run(True)
    path = tmp_path / "t.jsonl"
    write_runs(path, [record])
    lines = path.read_bytes().splitlines()
    size = record.events[-1].observations[0].chars
    assert size > 3 * WINDOW_CHARS
    assert max(map(len, lines)) < 2 * WINDOW_CHARS  # the window (newlines written as two bytes), not the whole
    assert sum(f'"whole_chars":{size}'.encode() in line for line in lines) == 6
    [back] = load_runs(path)
    assert back.events == record.events
    assert replay_run(back).model_dump() == replay_run(record).model_dump()


def test_parquet_keeps_the_window_and_its_size(tmp_path):
    pytest.importorskip("pyarrow")
    from pyguard.store import read_parquet, write_parquet

    record = _run(True)
    write_parquet(tmp_path / "r.parquet", [record])
    [back] = read_parquet(tmp_path / "r.parquet")
    assert back.record.events == record.events
