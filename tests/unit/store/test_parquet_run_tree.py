"""A run tree's parent ids survive Parquet, and files written before run trees (no parent_run_id column) still read."""

from __future__ import annotations

import pytest

pytest.importorskip("pyarrow")

from pyguard.base.events import Outcome, RunEnd, RunRecord, RunStart  # noqa: E402
from pyguard.store import read_parquet, write_parquet  # noqa: E402
from pyguard.store.parquet import table_to_runs  # noqa: E402


def _runs() -> list[RunRecord]:
    return [
        RunRecord(start=RunStart(run_id="root"), end=RunEnd(run_id="root", outcome=Outcome.STALLED)),
        RunRecord(
            start=RunStart(run_id="root-tracker-1", parent_run_id="root"),
            end=RunEnd(run_id="root-tracker-1", outcome=Outcome.STALLED),
        ),
    ]


def test_parent_run_ids_round_trip_and_old_files_read_as_top_level(tmp_path):
    import pyarrow.parquet as pq

    path = tmp_path / "runs.parquet"
    write_parquet(path, _runs())
    assert [r.record.start.parent_run_id for r in read_parquet(path)] == [None, "root"]
    old = pq.read_table(path).drop_columns(["parent_run_id"])
    assert [r.record.start.parent_run_id for r in table_to_runs(old)] == [None, None]
