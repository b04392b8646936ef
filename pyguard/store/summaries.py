"""The summaries behind ``pyguard check`` and ``pyguard calibrate``, computed by DuckDB on a Parquet file.

    summary = check_summary("runs.parquet")                  # -> pyguard.check.RunSetSummary
    report = check_parquet("runs.parquet", GateConfig(...))  # -> pyguard.check.GateReport
    arrays = calibration_arrays("runs.parquet")              # -> pyguard.calibrate.RunArrays
    report = calibrate_parquet("runs.parquet", config)       # -> pyguard.calibrate.CalibrationReport

Nothing here builds a Python object per run: DuckDB reads the columns, computes each run's facts with the same
rules as :func:`pyguard.check.outcomes.facts_from_footer` and :func:`pyguard.calibrate.runs.run_status`, and
hands back counts and numpy columns. Two kinds of run are read into Python instead, so that their rule keeps one
home: a run imported from a recording (its footer's ``evidence.imported_from`` is set, so it carries no guard
outcome) is replayed through the policy, as ``pyguard check`` does for any recording; a run a guard in observe or
reflect mode watched (its footer's ``evidence.observed_stop``) counts as the stop it recorded, by
:func:`pyguard.check.outcomes.facts_from_footer`. Needs the ``columnar`` extra.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from pyguard._extras import require
from pyguard.errors import InputError

__all__ = ["check_parquet", "calibrate_parquet"]

# Tokens of one model call (NULL when unknown) and of a run from its calls, as the check and calibration read them.
_EVENT_TOKENS = (
    "coalesce(e.total_tokens, CASE WHEN e.input_tokens IS NULL AND e.output_tokens IS NULL THEN NULL "
    "ELSE coalesce(e.input_tokens, 0) + coalesce(e.output_tokens, 0) END)"
)
_CUT_OFF = "('expired', 'stalled', 'escalated', 'cancelled', 'guard_error')"


def connect(path: str | os.PathLike[str], *, threads: int | None = None) -> Any:
    """A DuckDB connection with the view ``runs`` over the Parquet file ``path`` (plus ``file_row_number``)."""
    from pyguard.store.parquet import open_parquet

    duckdb = require("duckdb", extra="columnar", feature="Parquet summaries")
    open_parquet(path)  # a clear error for a missing, damaged or foreign file
    con = duckdb.connect()
    if threads is not None:
        con.execute(f"SET threads TO {int(threads)}")
    con.register("runs", con.read_parquet(str(path), file_row_number=True))
    return con


def _facts_sql(where: str) -> str:
    tokens = f"list_sum(list_transform(events, lambda e: {_EVENT_TOKENS}))"
    return f"""
        SELECT run_id, task_type,
               CASE WHEN success_label IS TRUE AND (outcome IN ('succeeded', 'failed')
                                                    OR (outcome = 'expired' AND censored)) THEN 'succeeded'
                    WHEN success_label IS FALSE AND outcome = 'succeeded' THEN 'failed'
                    ELSE outcome END AS outcome,
               CASE WHEN coalesce(iterations, 0) > 0 THEN iterations ELSE len(events) END AS iterations,
               coalesce(total_tokens,
                        CASE WHEN input_tokens IS NOT NULL AND output_tokens IS NOT NULL
                             THEN input_tokens + output_tokens END,
                        {tokens}) AS tokens,
               false AS replayed, false AS observed, CAST(NULL AS BIGINT) AS tokens_saved
        FROM runs WHERE {where}"""


_IMPORTED = "json_extract_string(evidence, '$.imported_from') IS NOT NULL"
_TOOL_END = (  # a recording that ends calling a tool with nothing saying it ended (pyguard.calibrate.runs.read_run)
    f"{_IMPORTED} AND json_extract_string(evidence, '$.cut_off') = 'recording_ends' AND success_label IS NOT true"
)
_OBSERVED = f"json_extract(evidence, '$.observed_stop') IS NOT NULL AND NOT ({_IMPORTED})"
_IN_PYTHON = f"({_IMPORTED}) OR ({_OBSERVED})"


def _first(con: Any, sql: str) -> Any:
    """The first row of ``sql`` (None when empty), with the result fully consumed."""
    rows = con.execute(sql).fetchall()
    return rows[0] if rows else None


def check_facts(con: Any, make_replayer: Callable[[], Any] | None = None) -> None:
    """Create the table ``facts`` (run_id, task_type, outcome, iterations, tokens, replayed, observed, tokens_saved)
    on ``con``: from the footers, and from a replay for the runs imported from recordings. InputError on the gate's
    bad inputs."""
    first = _first(con, "SELECT count(*) FROM runs")[0]
    if not first:
        raise InputError("no runs to check: the Parquet file holds no run")
    bad = _first(con, "SELECT run_id FROM runs WHERE task_type = '*' LIMIT 1")
    if bad:
        raise InputError(
            f"run {bad[0]!r} has task_type '*', which pyguard check reserves for all runs together: "
            "rename the task type"
        )
    open_run = _first(con, "SELECT run_id FROM runs WHERE NOT complete ORDER BY file_row_number LIMIT 1")
    if open_run:
        raise InputError(f"run {open_run[0]!r} has no run_end footer (cut short?): complete or drop the run")
    con.execute(f"CREATE OR REPLACE TEMP TABLE facts AS SELECT * FROM ({_facts_sql('NOT (' + _IN_PYTHON + ')')})")
    todo = _first(con, f"SELECT count(*) FROM runs WHERE {_IMPORTED}")[0]
    if todo and make_replayer is None:
        raise InputError(
            f"{todo} run(s) carry no guard outcome (imported from a recording) and need a policy replay,"
            " which is not available here"
        )
    if not _first(con, f"SELECT count(*) FROM runs WHERE {_IN_PYTHON}")[0]:
        return
    from pyguard.check.outcomes import facts_from_footer, replay_outcomes
    from pyguard.store.parquet import table_to_runs

    pa = require("pyarrow", extra="columnar", feature="Parquet summaries")

    def records(where: str) -> list[Any]:
        result = con.sql(f"SELECT * EXCLUDE (file_row_number) FROM runs WHERE {where} ORDER BY file_row_number")
        fetch = next(getattr(result, m) for m in ("to_arrow_table", "fetch_arrow_table", "arrow") if hasattr(result, m))
        table = fetch()
        if not isinstance(table, pa.Table):
            table = table.read_all()
        return [run.record for run in table_to_runs(table, "<parquet>")]

    facts = [facts_from_footer(r) for r in records(_OBSERVED)]
    if todo:
        assert make_replayer is not None
        facts += replay_outcomes(records(_IMPORTED), make_replayer())
    replayed = pa.table(
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
    con.register("replayed_facts", replayed)
    con.execute("INSERT INTO facts SELECT * FROM replayed_facts")


def check_summary(path: str | os.PathLike[str], make_replayer: Callable[[], Any] | None = None) -> Any:
    """The :class:`pyguard.check.RunSetSummary` of the runs in a Parquet file, computed by DuckDB."""
    from pyguard.check.summary import ALL_TASKS, UNTYPED, GroupSummary, RunSetSummary

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
        replayed, observed = _first(
            con, "SELECT count(*) FILTER (WHERE replayed), count(*) FILTER (WHERE observed) FROM facts"
        )
        saved = dict(
            con.execute(
                f"SELECT {key}, coalesce(sum(tokens_saved), 0) FROM facts GROUP BY GROUPING SETS (({grouped}), ())"
            ).fetchall()
        )
    finally:
        con.close()
    keys = sorted({k for k, _, _ in outcomes})
    tokens_by_key: dict[str, np.ndarray] = {}
    if len(tok["k"]):
        names = np.asarray(tok["k"], dtype=object)
        values = np.asarray(tok["tokens"], dtype=np.int64)
        bounds = np.flatnonzero(names[1:] != names[:-1]) + 1
        for chunk_names, chunk in zip(np.split(names, bounds), np.split(values, bounds), strict=False):
            tokens_by_key[chunk_names[0]] = chunk
        tokens_by_key[ALL_TASKS] = np.sort(values, kind="stable")
    groups = {}
    for k in [ALL_TASKS] + [k for k in keys if k != ALL_TASKS]:
        out = {o: c for kk, o, c in outcomes if kk == k}
        its = {int(i): c for kk, i, c in hist if kk == k}
        toks = tokens_by_key.get(k, np.zeros(0, np.int64))
        groups[k] = GroupSummary(
            n=sum(out.values()), outcomes=out, iterations=its, tokens=toks.tolist(), tokens_saved=int(saved.get(k, 0))
        )
    return RunSetSummary(groups=groups, replayed=int(replayed), observed=int(observed))


def check_parquet(
    path: str | os.PathLike[str],
    config: Any = None,
    baseline: Any = None,
    *,
    make_replayer: Callable[[], Any] | None = None,
) -> Any:
    """``pyguard check`` on a Parquet file: the DuckDB summary evaluated against ``config`` and ``baseline``."""
    from pyguard.check.gate import GateConfig, evaluate

    return evaluate(check_summary(path, make_replayer), config or GateConfig(), baseline)


def calibration_arrays(path: str | os.PathLike[str]) -> Any:
    """The :class:`pyguard.calibrate.RunArrays` of a Parquet file, computed by DuckDB with the rules of
    :mod:`pyguard.calibrate.runs`: one unit per user turn (:func:`pyguard.events.opens_turn`: the previous call
    answered and a user message arrived), the last turn taking the run's status (:func:`run_status`), earlier
    turns successes; task type: the run's, else its first call's, else ``default``; recorded usage only."""
    from pyguard.calibrate.runs import UNTYPED, Reading, RunStatus

    succ, fail, cens = int(RunStatus.SUCCESS), int(RunStatus.FAILURE), int(RunStatus.CENSORED)
    con = connect(path)
    try:
        con.execute("""
            CREATE TEMP TABLE turns AS
            WITH ev AS (SELECT file_row_number AS r, generate_subscripts(events, 1) AS pos, unnest(events) AS e
                        FROM runs),
            fl AS (SELECT r, pos, e,
                          CASE WHEN pos = 1 THEN 1
                               WHEN lag(len(e.tool_calls)) OVER w = 0 AND lag(e.error) OVER w IS NULL
                                    AND len(list_filter(e.observations, lambda o: o.kind = 'user')) > 0 THEN 1
                               ELSE 0 END AS opens
                   FROM ev WINDOW w AS (PARTITION BY r ORDER BY pos))
            SELECT r, pos, e, sum(opens) OVER (PARTITION BY r ORDER BY pos ROWS UNBOUNDED PRECEDING) AS turn
            FROM fl""")
        con.execute(f"""
            CREATE TEMP TABLE per_run AS
            SELECT file_row_number AS r, run_id,
                   coalesce(task_type, list_filter(list_transform(events, lambda e: e.task_type),
                                                   lambda t: t IS NOT NULL)[1], '{UNTYPED}') AS tt,
                   CASE WHEN complete AND {_TOOL_END} THEN CASE WHEN success_label = false THEN {fail} ELSE {cens} END
                        WHEN complete AND success_label AND censored THEN {succ}
                        WHEN NOT complete OR censored OR outcome IN {_CUT_OFF} THEN {cens}
                        WHEN success_label IS NOT NULL THEN CASE WHEN success_label THEN {succ} ELSE {fail} END
                        WHEN outcome = 'succeeded' THEN {succ}
                        ELSE {fail} END AS status,
                   CASE WHEN NOT complete THEN {int(Reading.NO_FOOTER)}
                        WHEN {_TOOL_END} THEN CASE WHEN success_label = false THEN {int(Reading.FAILED_EARLY)}
                                                   ELSE {int(Reading.TOOL_CALL_UNLABELLED)} END
                        WHEN success_label AND censored THEN {int(Reading.ENDED)}
                        WHEN censored OR outcome = 'expired' THEN {int(Reading.CAP_FIELD)}
                        WHEN outcome IN {_CUT_OFF} THEN {int(Reading.STOPPED)}
                        ELSE {int(Reading.ENDED)} END AS reading,
                   json_extract_string(evidence, '$.imported_from') AS fmt,
                   coalesce(json_extract_string(evidence, '$.source'), '') AS src,
                   len(events) AS n_events, coalesce(iterations, 0) AS n_footer
            FROM runs""")
        con.execute("""
            CREATE TEMP TABLE units AS
            WITH t AS (SELECT r, turn, count(*) AS n, min(pos) AS lo FROM turns GROUP BY r, turn),
            u AS (SELECT p.r, coalesce(t.turn, 1) AS turn, coalesce(t.n, p.n_footer) AS n, coalesce(t.lo, 1) AS lo,
                         p.tt, p.status, p.reading, p.fmt, p.src, p.run_id,
                         max(coalesce(t.turn, 1)) OVER (PARTITION BY p.r) AS turns
                  FROM per_run p LEFT JOIN t ON t.r = p.r)
            SELECT row_number() OVER (ORDER BY r, turn) - 1 AS unit, * FROM u""")
        cols = con.execute(f"""
            SELECT tt, n, CASE WHEN turn = turns THEN status ELSE {succ} END AS status, r, turns, run_id,
                   CASE WHEN turn = turns THEN reading ELSE {int(Reading.ENDED)} END AS reading,
                   CASE WHEN turn = turns THEN fmt END AS fmt, src
            FROM units ORDER BY unit""").fetchnumpy()
        tokens = con.execute(f"""
            SELECT u.unit AS unit, t.pos - u.lo + 1 AS k, CAST({_EVENT_TOKENS} AS DOUBLE) AS v
            FROM turns t JOIN units u ON u.r = t.r AND u.turn = t.turn
            WHERE {_EVENT_TOKENS} IS NOT NULL ORDER BY u.unit, t.pos""").fetchnumpy()
    finally:
        con.close()
    n = np.asarray(cols["n"], dtype=np.int64)
    if len(n) and n.min() < 1:
        bad = int(np.flatnonzero(n < 1)[0])
        raise InputError(
            f"run {cols['run_id'][bad]!r} has no iterations (no events and iterations=0); drop it from "
            "the calibration input or record its model calls"
        )
    return _run_arrays(cols, tokens, n)


def _run_arrays(cols: Any, tokens: Any, n: np.ndarray) -> Any:
    """The :class:`pyguard.calibrate.RunArrays` of the unit and token columns DuckDB computed; a labelled failure that
    ended calling a tool is censored at the longest run of its group (:func:`censor_at_longest_run`)."""
    from pyguard.calibrate.runs import RunArrays, censor_at_longest_run

    types = np.asarray(cols["tt"], dtype=object)
    names, codes = np.unique(types, return_inverse=True)
    multi = set(types[np.asarray(cols["turns"]) > 1].tolist())
    status, reading = np.asarray(cols["status"], dtype=np.int8), np.asarray(cols["reading"], dtype=np.int8)
    groups = [
        None if f is None else (str(t), str(f), str(src))
        for t, f, src in zip(types, cols["fmt"], cols["src"], strict=True)
    ]
    longest = censor_at_longest_run(n, status, reading, groups)
    return RunArrays(
        task_types=tuple(str(x) for x in names),
        type_code=codes.astype(np.int64),
        iterations=n,
        status=status,
        token_run=np.asarray(tokens["unit"], dtype=np.int64),
        token_iter=np.asarray(tokens["k"], dtype=np.int64),
        token_value=np.asarray(tokens["v"], dtype=np.float64),
        run_index=np.asarray(cols["r"], dtype=np.int64),
        multi_turn=tuple(str(x) for x in names if x in multi),
        token_estimated=np.zeros(len(tokens["v"]), dtype=bool),
        reading=reading,
        longest_run=longest,
    )


def calibrate_parquet(path: str | os.PathLike[str], config: Any) -> Any:
    """``pyguard calibrate`` on a Parquet file (a :class:`pyguard.calibrate.CalibrationConfig`). Token estimates
    from text (``estimate_tokens_from_text``) need the texts: the runs are then loaded."""
    from pyguard.calibrate import calibrate_arrays, calibrate_runs

    if getattr(config, "estimate_tokens_from_text", False):
        from pyguard.store.parquet import iter_parquet

        return calibrate_runs((run.record for batch in iter_parquet(path) for run in batch), config)
    return calibrate_arrays(calibration_arrays(path), config)
