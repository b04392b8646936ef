"""Observe mode in ``pyguard check`` (issue 32 point 6): a run whose stop was only observed spent every token of its
run, so the check counts what was spent and shows what enforcing the stop would have saved apart (it counted the
tokens up to the would-be stop: 1,093 where 10,619 were spent)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from pyguard.base.events import IterationEvent, Outcome, RunEnd, RunRecord, RunStart
from pyguard.check import resolve_runs, summarize
from pyguard.cli import main
from pyguard.trace import write_runs


def _observed_run(rid: str, per_call: list[int], stop_at: int) -> RunRecord:
    events = [IterationEvent(run_id=rid, index=i + 1, total_tokens=t, task_type="t") for i, t in enumerate(per_call)]
    stop = {"outcome": "stalled", "iteration": stop_at, "rule": "cycle", "mode": "observe"}
    end = RunEnd(run_id=rid, outcome=Outcome.SUCCEEDED, iterations=len(events), evidence={"observed_stop": stop})
    return RunRecord(start=RunStart(run_id=rid, task_type="t"), events=events, end=end)


def _plain_run(rid: str, per_call: list[int]) -> RunRecord:
    events = [IterationEvent(run_id=rid, index=i + 1, total_tokens=t, task_type="t") for i, t in enumerate(per_call)]
    end = RunEnd(run_id=rid, outcome=Outcome.SUCCEEDED, iterations=len(events))
    return RunRecord(start=RunStart(run_id=rid, task_type="t"), events=events, end=end)


RUNS = [_observed_run("watched", [300, 400, 393, 3000, 3263, 3263], stop_at=3), _plain_run("plain", [500, 500])]


def test_an_observed_stop_counts_what_was_spent_and_what_a_stop_would_have_saved_apart():
    summary = summarize(resolve_runs(RUNS, "pyguard"))
    group = summary.groups["t"]
    assert sorted(group.tokens) == [1000, 10619]  # spent, not the 1,093 up to the would-be stop
    assert group.tokens_saved == 10619 - 1093
    assert group.count(Outcome.STALLED) == 1 and summary.observed == 1  # still counted as the stop it recorded


def test_the_cli_reports_both_in_json_and_text(tmp_path):
    path = tmp_path / "runs.jsonl"
    write_runs(path, RUNS)
    data = json.loads(CliRunner().invoke(main, ["check", str(path), "--json"]).stdout)
    assert data["tokens_saved_by_observed_stops"] == 9526 and data["groups"]["t"]["tokens_saved"] == 9526
    assert data["groups"]["t"]["tokens_mean"] == (10619 + 1000) / 2
    text = " ".join(CliRunner().invoke(main, ["check", str(path)]).output.split())  # unwrapped
    assert "11,619 tokens spent" in text and "would have saved 9,526 tokens" in text, text


def test_parquet_reports_the_same(tmp_path):
    import pytest

    pytest.importorskip("duckdb")
    from pyguard.check.parquet import check_summary
    from pyguard.store import write_parquet

    path = tmp_path / "runs.parquet"
    write_parquet(path, RUNS)
    assert check_summary(path) == summarize(resolve_runs(RUNS, "pyguard"))
