"""pyguard runs in Parquet: one row per run, its model calls and the guard's decisions as nested lists.

    from pyguard.store import write_parquet, read_parquet, iter_parquet
    write_parquet("runs.parquet", records, decisions={"r1": [...]})   # any iterable; written in row groups
    runs = read_parquet("runs.parquet")                                # -> list[TraceRun] (record + decisions)
    for batch in iter_parquet("runs.parquet", batch_size=10_000): ...  # bounded memory

Columns (``RUN_SCHEMA``): the fields of :class:`~pyguard.base.events.RunStart` and :class:`~pyguard.base.events.RunEnd`
flat (``complete`` is False for a run with no footer, whose footer columns are then null), ``events`` (one
struct per :class:`~pyguard.base.events.IterationEvent`, tool calls and observations nested) and ``decisions`` (one
struct per :class:`~pyguard.base.decisions.Decision`). Free-form dicts (``policy``, ``evidence``) are JSON strings.
The summaries behind ``pyguard check`` and ``pyguard calibrate`` read these columns with DuckDB
(:mod:`pyguard.check.parquet`, :mod:`pyguard.calibrate.parquet`) without building Python objects. Needs the
``columnar`` extra (pyarrow).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from pyguard.base._extras import require
from pyguard.base.decisions import Decision
from pyguard.base.errors import InputError, UnreadableRecord
from pyguard.base.events import IterationEvent, RunRecord
from pyguard.base.safe_reader import loads
from pyguard.trace.records import TraceRun
from pyguard.trace.tolerance import SkipLog

__all__: list[str] = []

FORMAT_TAG = b"pyguard-runs/1"
"""Written in the file's key-value metadata under ``b"pyguard.format"``."""
PARQUET_MAGIC = b"PAR1"

_START = ("run_id", "task_type", "task", "agent_style", "policy", "started_at_ms", "parent_run_id")
_END = (
    "outcome",
    "reason",
    "answer",
    "iterations",
    "tool_calls",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "cost",
    "wall_ms",
    "evidence",
    "success_label",
    "censored",
    "tokens_partial",
    "answer_source",
    "wrap_up_tokens",
    "tool_calls_executed",
)


def _pa() -> Any:
    return require("pyarrow", extra="columnar", feature="Parquet traces")


def run_schema() -> Any:
    """The Arrow schema of a pyguard Parquet file."""
    pa = _pa()
    s, i64, f64, b = pa.string(), pa.int64(), pa.float64(), pa.bool_()
    tool_call = pa.struct([("id", s), ("name", s), ("arguments", s)])
    observation = pa.struct(
        [("kind", s), ("tool_call_id", s), ("tool_name", s), ("text", s), ("is_error", b), ("whole_chars", i64)]
    )
    event = pa.struct(
        [
            ("index", i64),
            ("provider", s),
            ("model", s),
            ("input_tokens", i64),
            ("output_tokens", i64),
            ("total_tokens", i64),
            ("latency_ms", f64),
            ("finish_reason", s),
            ("tool_calls", pa.list_(tool_call)),
            ("observations", pa.list_(observation)),
            ("text", s),
            ("error", s),
            ("task_type", s),
            ("timestamp_ms", f64),
            ("request_model", s),
            ("response_model", s),
            ("response_id", s),
            ("request_parameters", s),
            ("trace_context", s),
        ]
    )
    decision = pa.struct(
        [
            ("action", s),
            ("reason", s),
            ("rule", s),
            ("reflection", s),
            ("outcome", s),
            ("evidence", s),
            ("iteration", i64),
            ("turn", i64),
            ("budget", i64),
        ]
    )
    return pa.schema(
        [
            ("run_id", s),
            ("task_type", s),
            ("task", s),
            ("agent_style", s),
            ("policy", s),
            ("started_at_ms", f64),
            ("parent_run_id", s),
            ("complete", b),
            ("outcome", s),
            ("reason", s),
            ("answer", s),
            ("iterations", i64),
            ("tool_calls", i64),
            ("input_tokens", i64),
            ("output_tokens", i64),
            ("total_tokens", i64),
            ("cost", f64),
            ("wall_ms", f64),
            ("evidence", s),
            ("success_label", b),
            ("censored", b),
            ("tokens_partial", b),
            ("answer_source", s),
            ("wrap_up_tokens", i64),
            ("tool_calls_executed", i64),
            ("events", pa.list_(event)),
            ("decisions", pa.list_(decision)),
        ],
        metadata={b"pyguard.format": FORMAT_TAG},
    )


def is_parquet(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a file that starts with Parquet's magic bytes (no extra needed to tell)."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == PARQUET_MAGIC
    except (IsADirectoryError, FileNotFoundError, PermissionError):
        return False


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def _event_row(event: IterationEvent) -> dict[str, Any]:
    row = event.model_dump(mode="json", exclude={"run_id"})
    row["request_parameters"] = _json(row["request_parameters"])  # a map of mixed values: one JSON column
    return row


def _row(record: RunRecord, decisions: Sequence[Decision]) -> dict[str, Any]:
    stray = next((e for e in record.events if e.run_id != record.run_id), None)
    if stray is not None:
        raise InputError(
            f"run {record.run_id!r} holds iteration {stray.index} of run {stray.run_id!r}; every "
            "iteration of a run must carry its run id"
        )
    start = record.start.model_dump(mode="json")
    row: dict[str, Any] = {k: start[k] for k in _START}
    row["policy"] = _json(row["policy"])
    end = record.end.model_dump(mode="json") if record.end is not None else None
    row["complete"] = end is not None
    for k in _END:
        row[k] = None if end is None else end[k]
    if end is not None:
        row["evidence"] = _json(end["evidence"])
    row["events"] = [_event_row(e) for e in record.events]
    row["decisions"] = [{**d.model_dump(mode="json"), "evidence": _json(d.evidence)} for d in decisions]
    return row


def runs_to_table(
    runs: Iterable[RunRecord | TraceRun], decisions: Mapping[str, Sequence[Decision]] | None = None
) -> Any:
    """An Arrow table of ``runs`` (RunRecords, or TraceRuns whose decisions come along)."""
    pa = _pa()
    rows = []
    for run in runs:
        if isinstance(run, TraceRun):
            rows.append(_row(run.record, run.decisions))
        else:
            rows.append(_row(run, (decisions or {}).get(run.run_id, ())))
    return pa.Table.from_pylist(rows, schema=run_schema())


def write_parquet(
    path: str | os.PathLike[str],
    runs: Iterable[RunRecord | TraceRun],
    *,
    decisions: Mapping[str, Sequence[Decision]] | None = None,
    row_group_size: int = 50_000,
    compression: str = "zstd",
) -> int:
    """Write ``runs`` to one Parquet file, ``row_group_size`` runs at a time (memory stays bounded for a
    generator); returns how many runs were written. Run ids must be unique."""
    pq = require("pyarrow.parquet", extra="columnar", feature="Parquet traces")
    if row_group_size < 1:
        raise InputError(f"row_group_size={row_group_size!r} must be a positive integer")
    seen: set[str] = set()
    n = 0
    with pq.ParquetWriter(str(path), run_schema(), compression=compression) as writer:
        batch: list[RunRecord | TraceRun] = []

        def flush() -> None:
            if batch:
                writer.write_table(runs_to_table(batch, decisions), row_group_size=row_group_size)
                batch.clear()

        for run in runs:
            run_id = run.run_id
            if run_id in seen:
                raise InputError(f"run id {run_id!r} appears twice; run ids must be unique in one Parquet file")
            seen.add(run_id)
            batch.append(run)
            n += 1
            if len(batch) >= row_group_size:
                flush()
        flush()
    return n


def _loads(value: str | None, what: str, run_id: str) -> Any:
    if value is None:
        return None
    try:
        return loads(value, source=f"run {run_id!r}, column {what!r}")
    except json.JSONDecodeError as exc:
        raise InputError(f"run {run_id!r}: column {what!r} is not valid JSON ({exc.msg})") from None


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def _to_run(row: dict[str, Any], source: str) -> TraceRun:
    run_id = row["run_id"]
    try:
        start = {k: row.get(k) for k in _START}  # files written before run trees have no parent_run_id
        start["policy"] = _loads(start["policy"], "policy", run_id)
        events = []
        for e in row["events"] or ():
            e = _drop_none(e)
            e["tool_calls"] = [_drop_none(t) for t in e.get("tool_calls") or ()]
            e["observations"] = [_drop_none(o) for o in e.get("observations") or ()]
            if "request_parameters" in e:
                e["request_parameters"] = _loads(e["request_parameters"], "request_parameters", run_id)
            events.append({**e, "run_id": run_id})
        end = None
        if row["complete"]:
            end = _drop_none({k: row.get(k) for k in _END})  # files written before a column was added lack it
            end["run_id"] = run_id
            end["evidence"] = _loads(row["evidence"], "evidence", run_id) or {}
        record = RunRecord.model_validate({"start": start, "events": events, "end": end})
        decisions = [
            Decision.model_validate(
                {**_drop_none(d), "evidence": _loads(d["evidence"], "decision evidence", run_id) or {}}
            )
            for d in row.get("decisions") or ()
        ]
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise InputError(f"{source}: run {run_id!r} is not a valid pyguard run: {where}: {first.get('msg')}") from None
    return TraceRun(record=record, decisions=decisions, source=source)


def table_to_runs(table: Any, source: str = "<table>") -> list[TraceRun]:
    """TraceRuns from an Arrow table in the pyguard schema."""
    return [_to_run(row, source) for row in table.to_pylist()]


def open_parquet(path: str | os.PathLike[str]) -> Any:
    """The ``pyarrow.parquet.ParquetFile`` of a pyguard Parquet file; an :class:`InputError` naming the path when it
    is missing, damaged, or a Parquet file without pyguard's columns."""
    pq = require("pyarrow.parquet", extra="columnar", feature="Parquet traces")
    p = str(path)
    if not os.path.isfile(p):
        raise InputError(f"{p!r} does not exist or is not a file; pass a Parquet file written by pyguard")
    try:
        f = pq.ParquetFile(p)
    except Exception as exc:  # pyarrow raises ArrowInvalid / OSError for a damaged file
        raise InputError(f"{p!r} is not a readable Parquet file: {exc}") from None
    names = set(f.schema_arrow.names)
    missing = [c for c in ("run_id", "complete", "events") if c not in names]
    if missing:
        raise InputError(
            f"{p!r} is a Parquet file but not pyguard runs (no column {', '.join(missing)}); write it "
            "with pyguard.store.write_parquet or `pyguard export`"
        )
    return f


def iter_parquet(
    path: str | os.PathLike[str],
    *,
    batch_size: int = 10_000,
    row_groups: Sequence[int] | None = None,
    log: SkipLog | None = None,
) -> Iterator[list[TraceRun]]:
    """The runs of a pyguard Parquet file, ``batch_size`` at a time (only ``row_groups`` when given). A row that is
    not a valid run raises :class:`InputError`, or with ``log`` (a tolerant load) is skipped and counted there (a
    strict log raises)."""
    f = open_parquet(path)
    for batch in f.iter_batches(batch_size=batch_size, row_groups=row_groups):
        runs = []
        for row in batch.to_pylist():
            try:
                runs.append(_to_run(row, str(path)))
            except InputError as exc:
                if log is None:
                    raise
                log.skip(UnreadableRecord(str(exc), reason="Parquet row that is not a valid run"))
        yield runs


def read_parquet(path: str | os.PathLike[str], *, log: SkipLog | None = None) -> list[TraceRun]:
    """Every run of a pyguard Parquet file (with its decisions), in file order (``log``: see :func:`iter_parquet`)."""
    return [run for batch in iter_parquet(path, log=log) for run in batch]
