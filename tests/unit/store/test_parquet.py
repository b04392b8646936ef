"""Parquet runs: a lossless round trip (runs, decisions, whole texts), load_runs' detection, clear errors."""

from __future__ import annotations

import sys

import pytest
from store_support import guarded_runs, mixed_runs

pytest.importorskip("pyarrow")

from pyguard.base.errors import InputError, MissingExtraError  # noqa: E402
from pyguard.base.events import Observation, RunRecord, RunStart  # noqa: E402
from pyguard.loading import detect_format, load_runs  # noqa: E402
from pyguard.store import read_parquet, run_schema, write_parquet  # noqa: E402
from pyguard.store.synthetic import synthetic_table  # noqa: E402
from pyguard.trace import read_trace, write_runs  # noqa: E402


def test_runs_and_decisions_round_trip(tmp_path):
    records, decisions = mixed_runs()
    big = "x" * 300_000 + "é\n\x00"  # a large, non-ASCII tool result comes back byte for byte
    first = records[0]
    call = {  # the model call's request and response details (pyguard.otel exports them)
        "request_model": "gpt-4o",
        "response_model": "gpt-4o-2024-08-06",
        "response_id": "chatcmpl-1",
        "request_parameters": {"temperature": 0.2, "max_tokens": 256, "stop_sequences": ["END"]},
        "trace_context": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    }
    event = first.events[-1].model_copy(update={"observations": (Observation(text=big, tool_name="t"),), **call})
    records[0] = first.model_copy(update={"events": first.events[:-1] + [event]})
    cut = [e.model_copy(update={"run_id": "no-footer"}) for e in first.events[:2]]
    records.append(RunRecord(start=RunStart(run_id="no-footer", task_type="lookup"), events=cut))
    path = tmp_path / "runs.parquet"
    assert write_parquet(path, records, decisions=decisions, row_group_size=7) == len(records)
    back = read_parquet(path)
    assert [r.record for r in back] == records
    assert {r.run_id: r.decisions for r in back if r.decisions} == {k: v for k, v in decisions.items() if v}
    assert back[-1].record.end is None and not back[-1].complete


def test_load_runs_detects_parquet_in_files_and_directories(tmp_path):
    records, _ = guarded_runs(1)
    write_parquet(tmp_path / "a" / "runs.parquet" if (tmp_path / "a").mkdir() is None else None, records[:5])
    write_parquet(tmp_path / "a" / "more.parquet", records[5:])
    assert detect_format(tmp_path / "a" / "runs.parquet") == "parquet"
    assert sorted(r.run_id for r in load_runs(tmp_path / "a")) == sorted(r.run_id for r in records)
    assert load_runs(tmp_path / "a" / "more.parquet", format="parquet") == records[5:]


def test_jsonl_and_parquet_of_the_same_runs_load_the_same(tmp_path):
    records, decisions = guarded_runs(1)
    write_runs(tmp_path / "t.jsonl", records, decisions=decisions)
    write_parquet(tmp_path / "t.parquet", read_trace(tmp_path / "t.jsonl").runs)
    assert load_runs(tmp_path / "t.parquet") == load_runs(tmp_path / "t.jsonl")
    assert [r.decisions for r in read_parquet(tmp_path / "t.parquet")] == [
        r.decisions for r in read_trace(tmp_path / "t.jsonl").runs
    ]


def test_a_directory_may_hold_parquet_and_jsonl(tmp_path):
    records, _ = guarded_runs(1)
    write_runs(tmp_path / "t.jsonl", records[:2])
    write_parquet(tmp_path / "t.parquet", records[2:4])
    assert sorted(r.run_id for r in load_runs(tmp_path)) == sorted(r.run_id for r in records[:4])


def test_the_schema_has_a_column_for_every_model_field():
    """A field added to the pyguard models must get its column (else it would be dropped silently)."""
    from pyguard.base.decisions import Decision
    from pyguard.base.events import IterationEvent, Observation, RunEnd, RunStart, ToolCall

    schema = run_schema()
    struct = lambda t: {f.name for f in t}  # noqa: E731
    assert set(RunStart.model_fields) | set(RunEnd.model_fields) | {"complete", "events", "decisions"} == set(
        schema.names
    )
    event = schema.field("events").type.value_type
    assert struct(event) == set(IterationEvent.model_fields) - {"run_id"}
    assert struct(event.field("tool_calls").type.value_type) == set(ToolCall.model_fields)
    assert struct(event.field("observations").type.value_type) == set(Observation.model_fields)
    assert struct(schema.field("decisions").type.value_type) == set(Decision.model_fields)


def test_bad_files_are_named(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"x": [1, 2]}), tmp_path / "foreign.parquet")
    with pytest.raises(InputError, match="foreign.parquet.*not pyguard runs.*run_id"):
        read_parquet(tmp_path / "foreign.parquet")
    (tmp_path / "torn.parquet").write_bytes(b"PAR1garbage")
    with pytest.raises(InputError, match="torn.parquet.*not a readable Parquet file"):
        load_runs(tmp_path / "torn.parquet")
    records, _ = guarded_runs(1)
    with pytest.raises(InputError, match="appears twice"):
        write_parquet(tmp_path / "dup.parquet", [records[0], records[0]])
    stray = RunRecord(start=RunStart(run_id="other"), events=records[0].events)
    with pytest.raises(InputError, match=f"run 'other' holds iteration 1 of run {records[0].run_id!r}"):
        write_parquet(tmp_path / "stray.parquet", [stray])


def test_synthetic_table_is_seeded_and_valid(tmp_path):
    import pyarrow.parquet as pq

    a, b = synthetic_table(300, seed=4), synthetic_table(300, seed=4)
    assert a.equals(b) and a.schema.equals(run_schema(), check_metadata=False)
    assert not a.equals(synthetic_table(300, seed=5))
    batched = synthetic_table(250, seed=4, batch=100)  # built in batches (bounded memory), ids run on across them
    assert batched.num_rows == 250 and len(set(batched.column("run_id").to_pylist())) == 250
    assert batched.column("run_id")[-1].as_py() == "run-0000249"
    pq.write_table(a, tmp_path / "s.parquet")
    runs = read_parquet(tmp_path / "s.parquet")  # every row validates as a pyguard run
    assert len(runs) == 300
    for run in runs[:50]:
        events = run.record.events
        assert [e.index for e in events] == list(range(1, len(events) + 1))
        assert run.record.end.iterations == len(events)
        assert run.record.end.tool_calls == sum(len(e.tool_calls) for e in events)
        assert run.record.end.total_tokens == sum(e.total_tokens for e in events)
        for prev, nxt in zip(events, events[1:], strict=False):  # call i+1 carries the results of call i's tool calls
            assert [o.tool_call_id for o in nxt.observations] == [c.id for c in prev.tool_calls]


def test_missing_extra_names_it(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(MissingExtraError, match=r"extra 'columnar'.*pip install 'pyguard\[columnar\]'"):
        write_parquet(tmp_path / "x.parquet", [])
