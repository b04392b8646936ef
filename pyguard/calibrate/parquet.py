"""``pyguard calibrate`` on a Parquet file: the calibration's columns computed by DuckDB.

    arrays = calibration_arrays("runs.parquet")              # -> RunArrays
    report = calibrate_parquet("runs.parquet", config)       # -> CalibrationReport

DuckDB reads the columns (:mod:`pyguard.store.sql`) and computes each unit with the rules of
:mod:`pyguard.calibrate.runs` (:func:`pyguard.calibrate.runs.run_status`), handing back numpy columns: no Python
object per run. Needs the ``columnar`` extra.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from pyguard.base.errors import InputError
from pyguard.calibrate.calibration import calibrate_arrays, calibrate_runs
from pyguard.calibrate.models import CalibrationConfig, CalibrationReport
from pyguard.calibrate.runs import UNTYPED, Reading, RunArrays, RunStatus, censor_at_longest_run
from pyguard.store.parquet import iter_parquet
from pyguard.store.sql import CUT_OFF, EVENT_TOKENS, TOOL_END, connect

__all__: list[str] = []

_SUCC, _FAIL, _CENS = int(RunStatus.SUCCESS), int(RunStatus.FAILURE), int(RunStatus.CENSORED)

_TURNS = """
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
    FROM fl"""

_PER_RUN = f"""
    CREATE TEMP TABLE per_run AS
    SELECT file_row_number AS r, run_id,
           coalesce(task_type, list_filter(list_transform(events, lambda e: e.task_type),
                                           lambda t: t IS NOT NULL)[1], '{UNTYPED}') AS tt,
           CASE WHEN complete AND {TOOL_END} THEN CASE WHEN success_label = false THEN {_FAIL} ELSE {_CENS} END
                WHEN complete AND success_label AND censored THEN {_SUCC}
                WHEN NOT complete OR censored OR outcome IN {CUT_OFF} THEN {_CENS}
                WHEN success_label IS NOT NULL THEN CASE WHEN success_label THEN {_SUCC} ELSE {_FAIL} END
                WHEN outcome = 'succeeded' THEN {_SUCC}
                ELSE {_FAIL} END AS status,
           CASE WHEN NOT complete THEN {int(Reading.NO_FOOTER)}
                WHEN {TOOL_END} THEN CASE WHEN success_label = false THEN {int(Reading.FAILED_EARLY)}
                                           ELSE {int(Reading.TOOL_CALL_UNLABELLED)} END
                WHEN success_label AND censored THEN {int(Reading.ENDED)}
                WHEN censored OR outcome = 'expired' THEN {int(Reading.CAP_FIELD)}
                WHEN outcome IN {CUT_OFF} THEN {int(Reading.STOPPED)}
                ELSE {int(Reading.ENDED)} END AS reading,
           json_extract_string(evidence, '$.imported_from') AS fmt,
           coalesce(json_extract_string(evidence, '$.source'), '') AS src,
           len(events) AS n_events, coalesce(iterations, 0) AS n_footer
    FROM runs"""

_UNITS = """
    CREATE TEMP TABLE units AS
    WITH t AS (SELECT r, turn, count(*) AS n, min(pos) AS lo FROM turns GROUP BY r, turn),
    u AS (SELECT p.r, coalesce(t.turn, 1) AS turn, coalesce(t.n, p.n_footer) AS n, coalesce(t.lo, 1) AS lo,
                 p.tt, p.status, p.reading, p.fmt, p.src, p.run_id,
                 max(coalesce(t.turn, 1)) OVER (PARTITION BY p.r) AS turns
          FROM per_run p LEFT JOIN t ON t.r = p.r)
    SELECT row_number() OVER (ORDER BY r, turn) - 1 AS unit, * FROM u"""

_UNIT_COLUMNS = f"""
    SELECT tt, n, CASE WHEN turn = turns THEN status ELSE {_SUCC} END AS status, r, turns, run_id,
           CASE WHEN turn = turns THEN reading ELSE {int(Reading.ENDED)} END AS reading,
           CASE WHEN turn = turns THEN fmt END AS fmt, src
    FROM units ORDER BY unit"""

_UNIT_TOKENS = f"""
    SELECT u.unit AS unit, t.pos - u.lo + 1 AS k, CAST({EVENT_TOKENS} AS DOUBLE) AS v
    FROM turns t JOIN units u ON u.r = t.r AND u.turn = t.turn
    WHERE {EVENT_TOKENS} IS NOT NULL ORDER BY u.unit, t.pos"""


def calibration_arrays(path: str | os.PathLike[str]) -> RunArrays:
    """The :class:`pyguard.calibrate.RunArrays` of a Parquet file, computed by DuckDB with the rules of
    :mod:`pyguard.calibrate.runs`: one unit per user turn (:func:`pyguard.base.events.opens_turn`: the previous call
    answered and a user message arrived), the last turn taking the run's status (:func:`run_status`), earlier
    turns successes; task type: the run's, else its first call's, else ``(untyped)``
    (:data:`pyguard.base.events.UNTYPED`, as the JSON Lines path names it); recorded usage only."""
    con = connect(path)
    try:
        for table in (_TURNS, _PER_RUN, _UNITS):
            con.execute(table)
        cols = con.execute(_UNIT_COLUMNS).fetchnumpy()
        tokens = con.execute(_UNIT_TOKENS).fetchnumpy()
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


def _run_arrays(cols: Any, tokens: Any, n: np.ndarray) -> RunArrays:
    """The :class:`pyguard.calibrate.RunArrays` of the unit and token columns DuckDB computed; a labelled failure that
    ended calling a tool is censored at the longest run of its group (:func:`censor_at_longest_run`)."""
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


def calibrate_parquet(path: str | os.PathLike[str], config: CalibrationConfig) -> CalibrationReport:
    """``pyguard calibrate`` on a Parquet file. Token estimates from text (``estimate_tokens_from_text``) need the
    texts: the runs are then loaded."""
    if getattr(config, "estimate_tokens_from_text", False):
        return calibrate_runs((run.record for batch in iter_parquet(path) for run in batch), config)
    return calibrate_arrays(calibration_arrays(path), config)
