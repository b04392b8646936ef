"""The pyguard trace format, version 1: one JSON object per line, four record types.

    {"type": "run_start", "version": 1, ...RunStart}     the header of a run (exactly one per run)
    {"type": "iteration", ...IterationEvent}             one per model call, index 1, 2, 3, ... in order
    {"type": "decision", "run_id": ..., ...Decision}     optional: what the guard decided after an iteration
    {"type": "run_end", ...RunEnd}                       the footer (missing when the run was cut short)

Every record carries its ``run_id``, so the lines of concurrent runs may interleave in one file. The full
description lives in ``docs/trace-format.md``. This module holds the constants, the in-memory form of a
read run (:class:`TraceRun`, :class:`TraceFile`) and the one-line encoders shared by the writer.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from pyguard.base.decisions import Decision
from pyguard.base.events import RunRecord

__all__: list[str] = []

FORMAT_VERSION = 1
"""The trace format version written in every ``run_start`` header. Readers reject newer versions."""

RECORD_TYPES = ("run_start", "iteration", "decision", "run_end")
"""The values of the ``type`` key, in the order they appear within a run."""


class TraceWarning(UserWarning):
    """Something in recorded runs was skipped or repaired but the rest could be read (a torn last line, an
    unreadable file in a directory). Emitted with :func:`warnings.warn`; the CLI prints each as ``warning: ...``."""


class TraceRun(BaseModel):
    """One run read from a trace: the run itself, the guard's decisions, and where it came from."""

    model_config = ConfigDict(extra="forbid")

    record: RunRecord
    decisions: list[Decision] = Field(default_factory=list)
    """The decision records of this run, in file order (empty for an unguarded run or a recording)."""
    source: str | None = None
    """The file the run was read from."""
    first_line: int | None = None
    """The line number of the run's ``run_start`` header in ``source``."""
    damage: str | None = None
    """Why the trace of this run is incomplete although records of it may follow (a torn record inside the file, a
    gap in its iterations, a footer counting more model calls than the trace holds or saying records were lost), or
    None. A damaged run has no footer: it is never taken for a success."""

    @property
    def run_id(self) -> str:
        return self.record.run_id

    @property
    def complete(self) -> bool:
        """False when the run has no ``run_end`` footer: it was cut short and has no outcome."""
        return self.record.end is not None


class TraceFile(BaseModel):
    """Everything read from one trace file."""

    model_config = ConfigDict(extra="forbid")

    path: str
    runs: list[TraceRun] = Field(default_factory=list)
    """The runs in the order their headers appear."""
    torn_line: int | None = None
    """The number of the last line when it was cut mid-record (a writer killed mid-write); it was skipped."""

    @property
    def incomplete(self) -> list[TraceRun]:
        """The runs with no footer."""
        return [r for r in self.runs if not r.complete]


def encode_record(record_type: str, model: BaseModel, **prefix: object) -> bytes:
    """One trace line (UTF-8, ending in a newline) for ``model`` tagged with ``record_type``.

    Fields that are None are left out (they read back as None). Non-finite floats become null. Text is
    written whole: nothing is truncated, whatever its size.
    """
    import json

    if record_type not in RECORD_TYPES:
        raise ValueError(f"unknown trace record type {record_type!r}; expected one of {RECORD_TYPES}")
    # allow_nan=False: a NaN or an infinity would make a line the reader refuses (the models refuse them already)
    body = model.model_dump_json(exclude_none=True)
    head = json.dumps({"type": record_type, **prefix}, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    if body == "{}":
        line = head
    else:
        line = head[:-1] + "," + body[1:]
    return (line + "\n").encode("utf-8")
