"""``pyguard check`` on a Parquet file: the gate's summary computed by DuckDB.

    summary = check_summary("runs.parquet")                  # -> RunSetSummary
    report = check_parquet("runs.parquet", GateConfig(...))  # -> GateReport

Nothing here builds a Python object per run: DuckDB reads the columns (:mod:`pyguard.store.sql`), computes each run's
facts with the same rules as :func:`pyguard.check.outcomes.facts_from_footer`, and hands back counts and numpy
columns. Two kinds of run are read into Python instead, so that their rule keeps one home: a run imported from a
recording (its footer's ``evidence.imported_from`` is set, so it carries no guard outcome) is replayed through the
policy, as ``pyguard check`` does for any recording; a run a guard in observe or reflect mode watched (its footer's
``evidence.observed_stop``) counts as the stop it recorded, by :func:`pyguard.check.outcomes.facts_from_footer`.
Needs the ``columnar`` extra.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from pyguard.base._extras import require
from pyguard.base.errors import InputError
from pyguard.check.gate import GateConfig, GateReport, evaluate
from pyguard.check.outcomes import Replayer, facts_from_footer, replay_outcomes
from pyguard.check.summary import ALL_TASKS, UNTYPED, RunFacts, RunSetSummary, TaskTypeFigures
from pyguard.store.sql import IMPORTED, OBSERVED, RUN_TOKENS, connect, first_row, records_where

__all__: list[str] = []

_IN_PYTHON = f"({IMPORTED}) OR ({OBSERVED})"


def _facts_sql(where: str) -> str:
    return f"""
        SELECT run_id, task_type,
               CASE WHEN success_label IS TRUE AND (outcome IN ('succeeded', 'failed')
                                                    OR (outcome = 'expired' AND censored)) THEN 'succeeded'
                    WHEN success_label IS FALSE AND outcome = 'succeeded' THEN 'failed'
                    ELSE outcome END AS outcome,
               CASE WHEN coalesce(iterations, 0) > 0 THEN iterations ELSE len(events) END AS iterations,
               {RUN_TOKENS} AS tokens,
               false AS replayed, false AS observed, CAST(NULL AS BIGINT) AS tokens_saved
        FROM runs WHERE {where}"""


def _refuse_bad_input(con: Any) -> None:
    """InputError on the gate's bad inputs: no run, the reserved task type '*', a run without its footer."""
    if not first_row(con, "SELECT count(*) FROM runs")[0]:
        raise InputError("no runs to check: the Parquet file holds no run")
    bad = first_row(con, "SELECT run_id FROM runs WHERE task_type = '*' LIMIT 1")
    if bad:
        raise InputError(
            f"run {bad[0]!r} has task_type '*', which pyguard check reserves for all runs together: "
            "rename the task type"
        )
    open_run = first_row(con, "SELECT run_id FROM runs WHERE NOT complete ORDER BY file_row_number LIMIT 1")
    if open_run:
        raise InputError(f"run {open_run[0]!r} has no run_end footer (cut short?): complete or drop the run")


def _facts_table(facts: list[RunFacts]) -> Any:
    pa = require("pyarrow", extra="columnar", feature="Parquet summaries")
    return pa.table(
        {
            "run_id": [f.run_id for f in facts],
            "task_type": [f.task_type for f in facts],
            "outcome": [f.outcome.value for f in facts],
            "iterations": [f.iterations for f in facts],
            "tokens": pa.array([f.tokens for f in facts], pa.int64()),
            "replayed": [f.replayed for f in facts],
            "observed": [f.observed for f in facts],
            "tokens_saved": pa.array([f.tokens_saved for f in facts], pa.int64()),
        }
    )


def check_facts(con: Any, make_replayer: Callable[[], Replayer] | None = None) -> None:
    """Create the table ``facts`` (run_id, task_type, outcome, iterations, tokens, replayed, observed, tokens_saved)
    on ``con``: from the footers, and from a replay for the runs imported from recordings. InputError on the gate's
    bad inputs."""
    _refuse_bad_input(con)
    con.execute(f"CREATE OR REPLACE TEMP TABLE facts AS SELECT * FROM ({_facts_sql('NOT (' + _IN_PYTHON + ')')})")
    todo = first_row(con, f"SELECT count(*) FROM runs WHERE {IMPORTED}")[0]
    if todo and make_replayer is None:
        raise InputError(
            f"{todo} run(s) carry no guard outcome (imported from a recording) and need a policy replay,"
            " which is not available here"
        )
    if not first_row(con, f"SELECT count(*) FROM runs WHERE {_IN_PYTHON}")[0]:
        return
    facts = [facts_from_footer(r) for r in records_where(con, OBSERVED)]
    if todo:
        assert make_replayer is not None
        facts += replay_outcomes(records_where(con, IMPORTED), make_replayer())
    con.register("replayed_facts", _facts_table(facts))
    con.execute("INSERT INTO facts SELECT * FROM replayed_facts")


def check_summary(path: str | os.PathLike[str], make_replayer: Callable[[], Replayer] | None = None) -> RunSetSummary:
    """The :class:`pyguard.check.RunSetSummary` of the runs in a Parquet file, computed by DuckDB."""
    con = connect(path)
    try:
        check_facts(con, make_replayer)
        grouped = f"coalesce(task_type, '{UNTYPED}')"
        key = f"CASE WHEN GROUPING({grouped}) = 1 THEN '{ALL_TASKS}' ELSE {grouped} END"
        outcomes = con.execute(
            f"SELECT {key}, outcome, count(*) FROM facts GROUP BY GROUPING SETS (({grouped}, outcome), (outcome))"
        ).fetchall()
        hist = con.execute(
            f"SELECT {key}, iterations, count(*) FROM facts "
            f"GROUP BY GROUPING SETS (({grouped}, iterations), (iterations))"
        ).fetchall()
        tok = con.execute(
            f"SELECT {grouped} AS k, tokens FROM facts WHERE tokens IS NOT NULL ORDER BY k, tokens"
        ).fetchnumpy()
        replayed, observed = first_row(
            con, "SELECT count(*) FILTER (WHERE replayed), count(*) FILTER (WHERE observed) FROM facts"
        )
        saved = dict(
            con.execute(
                f"SELECT {key}, coalesce(sum(tokens_saved), 0) FROM facts GROUP BY GROUPING SETS (({grouped}), ())"
            ).fetchall()
        )
    finally:
        con.close()
    tokens_by_key = _tokens_by_key(tok)
    groups = {}
    for k in [ALL_TASKS] + sorted({k for k, _, _ in outcomes} - {ALL_TASKS}):
        out = {o: c for kk, o, c in outcomes if kk == k}
        its = {int(i): c for kk, i, c in hist if kk == k}
        toks = tokens_by_key.get(k, np.zeros(0, np.int64))
        groups[k] = TaskTypeFigures(
            n=sum(out.values()), outcomes=out, iterations=its, tokens=toks.tolist(), tokens_saved=int(saved.get(k, 0))
        )
    return RunSetSummary(groups=groups, replayed=int(replayed), observed=int(observed))


def _tokens_by_key(tok: Any) -> dict[str, np.ndarray]:
    """Sorted token columns per task type (and for all), from DuckDB's ``k, tokens`` ordered by both."""
    out: dict[str, np.ndarray] = {}
    if len(tok["k"]):
        names = np.asarray(tok["k"], dtype=object)
        values = np.asarray(tok["tokens"], dtype=np.int64)
        bounds = np.flatnonzero(names[1:] != names[:-1]) + 1
        for chunk_names, chunk in zip(np.split(names, bounds), np.split(values, bounds), strict=False):
            out[chunk_names[0]] = chunk
        out[ALL_TASKS] = np.sort(values, kind="stable")
    return out


def check_parquet(
    path: str | os.PathLike[str],
    config: GateConfig | None = None,
    baseline: RunSetSummary | None = None,
    *,
    make_replayer: Callable[[], Replayer] | None = None,
) -> GateReport:
    """``pyguard check`` on a Parquet file: the DuckDB summary evaluated against ``config`` and ``baseline``."""
    return evaluate(check_summary(path, make_replayer), config or GateConfig(), baseline)
