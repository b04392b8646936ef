"""A Parquet file of runs as a DuckDB view, and the SQL every summary of it shares.

    con = connect("runs.parquet")                 # the view ``runs`` (plus ``file_row_number``)
    first_row(con, "SELECT count(*) FROM runs")
    records_where(con, IMPORTED)                  # the runs a summary reads in Python, as RunRecords

The summaries themselves live with the rules they compute: :mod:`pyguard.check.parquet` (``pyguard check``) and
:mod:`pyguard.calibrate.parquet` (``pyguard calibrate``); this module knows neither. Needs the ``columnar`` extra.
"""

from __future__ import annotations

import os
from typing import Any

from pyguard.base._extras import require
from pyguard.base.events import RunRecord
from pyguard.store.parquet import open_parquet, table_to_runs

__all__: list[str] = []


def token_count_sql(prefix: str = "") -> str:
    """:func:`pyguard.base.events.token_count` in SQL, over the columns ``total_tokens``, ``input_tokens`` and
    ``output_tokens`` (each after ``prefix``): the total when reported, else input + output of those reported, else
    NULL (unknown, never 0)."""
    return (
        f"coalesce({prefix}total_tokens, CASE WHEN {prefix}input_tokens IS NULL AND {prefix}output_tokens IS NULL"
        f" THEN NULL ELSE coalesce({prefix}input_tokens, 0) + coalesce({prefix}output_tokens, 0) END)"
    )


EVENT_TOKENS = token_count_sql("e.")
"""Tokens of one model call ``e`` (NULL when unknown), as :attr:`pyguard.base.events.IterationEvent.tokens` counts them."""
RUN_TOKENS = f"coalesce({token_count_sql()}, list_sum(list_transform(events, lambda e: {EVENT_TOKENS})))"
"""Tokens of one run (a row of the runs table), as :attr:`pyguard.base.events.RunRecord.tokens` counts them: its
footer's count, else the sum over its calls that reported usage, else NULL."""

CUT_OFF = "('expired', 'stalled', 'escalated', 'cancelled', 'guard_error')"
"""The outcomes of a run cut off before it ended on its own."""

IMPORTED = "json_extract_string(evidence, '$.imported_from') IS NOT NULL"
"""A run imported from a recording: its footer carries no guard outcome."""

TOOL_END = (  # a recording that ends calling a tool with nothing saying it ended (pyguard.calibrate.runs.read_run)
    f"{IMPORTED} AND json_extract_string(evidence, '$.cut_off') = 'recording_ends' AND success_label IS NOT true"
)

OBSERVED = f"json_extract(evidence, '$.observed_stop') IS NOT NULL AND NOT ({IMPORTED})"
"""A run a guard in observe or reflect mode watched: it counts as the stop it recorded."""


def connect(path: str | os.PathLike[str], *, threads: int | None = None) -> Any:
    """A DuckDB connection with the view ``runs`` over the Parquet file ``path`` (plus ``file_row_number``)."""
    duckdb = require("duckdb", extra="columnar", feature="Parquet summaries")
    open_parquet(path)  # a clear error for a missing, damaged or foreign file
    con = duckdb.connect()
    if threads is not None:
        con.execute(f"SET threads TO {int(threads)}")
    con.register("runs", con.read_parquet(str(path), file_row_number=True))
    return con


def first_row(con: Any, sql: str) -> Any:
    """The first row of ``sql`` (None when empty), with the result fully consumed."""
    rows = con.execute(sql).fetchall()
    return rows[0] if rows else None


def records_where(con: Any, where: str) -> list[RunRecord]:
    """The runs of the view ``runs`` matching ``where``, in file order, read back into records."""
    pa = require("pyarrow", extra="columnar", feature="Parquet summaries")
    result = con.sql(f"SELECT * EXCLUDE (file_row_number) FROM runs WHERE {where} ORDER BY file_row_number")
    fetch = next(getattr(result, m) for m in ("to_arrow_table", "fetch_arrow_table", "arrow") if hasattr(result, m))
    table = fetch()
    if not isinstance(table, pa.Table):
        table = table.read_all()
    return [run.record for run in table_to_runs(table, "<parquet>")]
