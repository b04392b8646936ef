"""Censoring read from evidence (issue 37, point 1): a labelled failure that ended calling a tool below the longest run
of its task type and source is a failure; only runs that reached the cap they ran under are censored."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pyguard.calibrate import calibrate_runs, make_config
from pyguard.calibrate.runs import Reading, RunStatus, extract_runs
from pyguard.loading import load_runs

CAP = 20


def _run(i: int, n: int, label: bool | None, *, tool: str = "click", **extra: object) -> dict:
    """A web-shopping run: n assistant messages, each clicking (the purchase is a click too)."""
    messages: list[dict] = [{"role": "user", "content": "buy a red mug under $10"}]
    for k in range(n):
        call = {"id": f"c{k}", "type": "function", "function": {"name": tool, "arguments": json.dumps({"k": k})}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        if k < n - 1:
            messages.append({"role": "tool", "tool_call_id": f"c{k}", "content": "page"})
    run: dict = {"id": f"r{i}", "task_type": "shop", "messages": messages, **extra}
    if label is not None:
        run["success"] = label
    return run


def _shop(tmp_path: Path) -> tuple[Path, list[dict]]:
    """Successes and failures ending early with a click, a few runs cut at the recording's cap (20 calls)."""
    rng = np.random.default_rng(7)
    runs = []
    for i in range(240):
        kind = rng.choice(["ok", "fail", "cut"], p=[0.4, 0.5, 0.1])
        if kind == "cut":
            runs.append(_run(i, CAP, False))
        else:
            runs.append(_run(i, int(rng.integers(2, CAP)), kind == "ok"))
    path = tmp_path / "shop.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in runs) + "\n")
    return path, runs


def test_failures_that_ended_early_with_a_tool_call_are_failures_and_c_is_the_success_share(tmp_path: Path) -> None:
    path, runs = _shop(tmp_path)
    report = calibrate_runs(load_runs(str(path)), make_config(failure_cost=30, cost_per_call=1, bootstrap=50))
    (t,) = report.task_types
    n_calls = np.array([sum(m["role"] == "assistant" for m in r["messages"]) for r in runs])
    ok = np.array([r["success"] for r in runs])
    cut = ~ok & (n_calls == CAP)
    assert (t.successes, t.censored, t.failures) == (int(ok.sum()), int(cut.sum()), int((~ok & ~cut).sum()))
    # nothing is censored before n = 20: c(n) is the observed share of runs that succeeded within n calls
    for n in range(1, CAP):
        assert t.c[n - 1] == pytest.approx(np.mean(ok & (n_calls <= n)), abs=1e-12)
    assert t.censoring is not None
    assert (t.censoring.at_longest_run, t.censoring.failures_ended_early) == (int(cut.sum()), t.failures)
    assert t.censoring.longest_run == [CAP]
    assert "--terminal-tools" in t.censoring.statement and "longest run of their task type and source" in (
        t.censoring.statement
    )
    assert any(w == t.censoring.statement for w in report.warnings)


def test_unlabelled_runs_cut_while_calling_tools_stay_censored_and_a_halted_field_decides(tmp_path: Path) -> None:
    runs = [_run(0, 3, None), _run(1, 5, None, halted=False), _run(2, 4, False, halted=True), _run(3, 6, True)]
    path = tmp_path / "g.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in runs))
    arrays = extract_runs(load_runs(str(path)))
    assert arrays.reading is not None
    assert [Reading(v) for v in arrays.reading] == [
        Reading.TOOL_CALL_UNLABELLED,  # nothing says it ended
        Reading.ENDED,  # the recording says it was not halted: it ended on its own
        Reading.CAP_FIELD,  # the recording says it was halted at its cap
        Reading.ENDED,  # labelled successful
    ]
    assert [RunStatus(v) for v in arrays.status] == [
        RunStatus.CENSORED,
        RunStatus.SUCCESS,
        RunStatus.CENSORED,
        RunStatus.SUCCESS,
    ]


def test_the_longest_run_is_per_source(tmp_path: Path) -> None:
    """Two recordings of one task type with different caps: each failure is compared with its own source's cap."""
    a = [_run(i, 10 if i < 2 else 5, False) for i in range(4)] + [_run(9, 3, True)]
    b = [_run(i, 30 if i < 2 else 10, False) for i in range(4)]
    (tmp_path / "a.jsonl").write_text("\n".join(json.dumps(r) for r in a))
    (tmp_path / "b.jsonl").write_text("\n".join(json.dumps({**r, "id": "b" + r["id"]}) for r in b))
    arrays = extract_runs(load_runs(str(tmp_path)))
    by_id = dict(zip(arrays.run_ids or (), arrays.status, strict=True))
    assert by_id["r0"] == RunStatus.CENSORED and by_id["r2"] == RunStatus.FAILURE  # a: cap 10
    assert by_id["br2"] == RunStatus.FAILURE and by_id["br0"] == RunStatus.CENSORED  # b: 10 is below its cap 30


def test_parquet_reads_the_same_evidence(tmp_path: Path) -> None:
    """The DuckDB columns of a Parquet file carry the same reading as the records (one rule, two readers)."""
    pytest.importorskip("duckdb")
    from pyguard.calibrate.parquet import calibration_arrays
    from pyguard.store.parquet import write_parquet

    path, _ = _shop(tmp_path)
    extra = [_run(900, 4, None), _run(901, 5, None, halted=False), _run(902, 3, False, truncated=True)]
    with path.open("a") as f:
        f.write("\n".join(json.dumps(r) for r in extra) + "\n")
    records = list(load_runs(str(path)))
    write_parquet(tmp_path / "shop.parquet", records)
    a, b = extract_runs(records), calibration_arrays(tmp_path / "shop.parquet")
    for column in ("iterations", "status", "reading", "longest_run"):
        assert np.array_equal(getattr(a, column), getattr(b, column)), column
