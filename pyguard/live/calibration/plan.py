"""Plan and resume: the runs of a live calibration (``<task_id>#<rep>``), which are already done, how a run is labelled.

The plan is ordered repeat by repeat (every task's #1, then every task's #2, ...) so a calibration stopped early still
covers every task. Resuming reads the trace dir with :func:`pyguard.loading.load_runs` and skips every planned id that
already has a footer; a run recorded for a task that has since changed (text, type, agent, cap, expect) is an error,
not a silent mix. The run's seed derives from the task's seed (or its id) and the repeat, so a rerun of an id plays
the same scripted run.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from pyguard.base.errors import InputError, RunError
from pyguard.base.events import Outcome, RunRecord
from pyguard.live.calibration.tasks import ID_PATTERN as _ID
from pyguard.live.calibration.tasks import FrozenModel, LiveTask, TaskSet
from pyguard.loading import load_runs

__all__: list[str] = []

_KEY = "calibration"  # RunEnd.evidence key holding what a live run was run with


class PlannedRun(FrozenModel):
    """One run of the plan."""

    task: LiveTask
    rep: int = Field(ge=1)
    cap: int = Field(ge=1)

    @property
    def run_id(self) -> str:
        return run_id_for(self.task.id, self.rep)

    @property
    def seed(self) -> int:
        base = self.task.seed if self.task.seed is not None else zlib.crc32(self.task.id.encode())
        return int(np.random.SeedSequence([base & 0xFFFFFFFFFFFF, self.rep]).generate_state(1, np.uint64)[0] >> 1)

    def fingerprint(self) -> dict[str, Any]:
        """What this run was run with (stored in its footer's evidence; compared on resume)."""
        t = self.task
        return {
            "task_id": t.id,
            "rep": self.rep,
            "task_type": t.task_type,
            "task": t.task,
            "scenario": t.scenario,
            "style": t.style,
            "expect": t.expect,
            "expect_regex": t.expect_regex,
            "seed": self.seed,
            "cap": self.cap,
            # None for pyguard's own agents, so traces written before factory tasks existed still match
            "factory": None
            if t.factory is None
            else f"{t.factory.qualified}:{t.factory.call}"
            + (f" -D{t.factory.round_trips_property}" if t.factory.round_trips_property else ""),
            "model": t.model,
        }


class LiveResult(BaseModel):
    """What :func:`run_live` did: the plan's size, what was already there, what ran now, and the runs."""

    model_config = ConfigDict(extra="forbid")

    planned: int
    already_done: int
    """Planned runs found complete in the trace dir (skipped)."""
    ran: int
    """Runs carried out by this call."""
    remaining: int
    """Planned runs still to do (after a --max-runs limit or an interruption)."""
    records: list[RunRecord]
    """Every complete planned run, in plan order (calibrate from these)."""
    ignored: list[str] = Field(default_factory=list)
    """Run ids in the trace dir that the plan does not hold (another repeat count, a removed task): not used."""

    @property
    def complete(self) -> bool:
        return self.remaining == 0

    def summary(self) -> dict[str, Any]:
        return {
            "planned": self.planned,
            "already_done": self.already_done,
            "ran": self.ran,
            "remaining": self.remaining,
            "complete": self.complete,
            "ignored": len(self.ignored),
        }


Runner = Callable[[PlannedRun], Any]
"""Carries out one planned run; returns a :class:`~pyguard.result.RunResult` or a :class:`RunRecord`."""


def run_id_for(task_id: str, rep: int) -> str:
    """The run id of repeat ``rep`` (1-based) of a task: ``"<task_id>#<rep>"``."""
    return f"{task_id}#{rep}"


def parse_run_id(run_id: str) -> tuple[str, int] | None:
    """``(task_id, rep)`` from a live run id, None when ``run_id`` is not one."""
    task_id, sep, rep = run_id.rpartition("#")
    if not sep or not _ID.match(task_id) or not rep.isdigit() or int(rep) < 1:
        return None
    return task_id, int(rep)


def plan_runs(tasks: TaskSet, repeats: int | None = None, cap: int | None = None) -> list[PlannedRun]:
    """Every run of the calibration, repeat by repeat. ``repeats``/``cap`` override the task set's."""
    repeats = repeats if repeats is not None else tasks.repeats
    if repeats is None:
        raise InputError("how many runs per task? pass --repeats R (or set repeats = R in the task file)")
    if repeats < 1:
        raise InputError(f"repeats={repeats!r} must be at least 1 (calibration wants 100 or more runs per task type)")
    cap = cap if cap is not None else tasks.cap
    if cap < 1:
        raise InputError(f"cap={cap!r} must be a positive number of model calls (a generous one: 100 is LangChain4j's)")
    return [PlannedRun(task=t, rep=r, cap=cap) for r in range(1, repeats + 1) for t in tasks.tasks]


def trace_file(trace_dir: Path, run_id: str) -> Path:
    return trace_dir / f"{run_id}.jsonl"


def completed_runs(
    trace_dir: str | os.PathLike[str], plan: Sequence[PlannedRun]
) -> tuple[dict[str, RunRecord], list[str]]:
    """The planned runs already complete in ``trace_dir`` (id -> record), and ids there the plan does not hold.

    Raises :class:`InputError` when a recorded run was run with other settings than its planned twin."""
    root = Path(trace_dir)
    if root.exists() and not root.is_dir():
        raise InputError(f"trace dir {str(root)!r} is a file; pass a directory (created if missing)")
    if not root.is_dir() or not any(root.rglob("*.jsonl")):
        return {}, []
    planned = {p.run_id: p for p in plan}
    done: dict[str, RunRecord] = {}
    ignored: list[str] = []
    for record in load_runs(root, format="pyguard"):
        p = planned.get(record.run_id)
        if p is None:
            ignored.append(record.run_id)
            continue
        if record.end is None:
            continue  # cut short: run it again
        stored = record.end.evidence.get(_KEY, {})
        diff = sorted(k for k, v in p.fingerprint().items() if stored.get(k) != v)
        if diff:
            raise InputError(
                f"run {record.run_id!r} in {str(root)!r} was run with other settings than the task set now gives "
                f"({', '.join(f'{k}: {stored.get(k)!r} -> {p.fingerprint()[k]!r}' for k in diff[:3])}); "
                "use a new trace dir for the changed task set, or delete the stale runs"
            )
        done[record.run_id] = record
    return done, ignored


def label_run(run: PlannedRun, record: RunRecord) -> RunRecord:
    """The run's record with its success decided by the task's expectation and its settings in the evidence."""
    end = record.end
    if end is None:
        raise RunError(f"run {run.run_id!r} came back without a footer; the runner must return a finished run")
    # The footer keeps the outcome settled when the run ended; the task's check is a label beside it, which every
    # reader takes through pyguard.base.ending.verdict (a run labelled failed that the footer calls succeeded: failed).
    update: dict[str, Any] = {}
    verified = run.task.verify(end.answer) if end.outcome is Outcome.SUCCEEDED else None
    mismatch = None
    if verified is not None:
        update["success_label"] = verified
        if not verified:
            t = run.task
            missed = (
                f"expect {t.expect!r}"
                if t.expect is not None and t.expect not in (end.answer or "")
                else f"expect_regex {t.expect_regex!r}"
            )
            mismatch = f"the answer does not match the task's {missed}"
    update["evidence"] = {**end.evidence, _KEY: {**run.fingerprint(), "verified": verified, "mismatch": mismatch}}
    start = (
        record.start if record.start.task_type else record.start.model_copy(update={"task_type": run.task.task_type})
    )
    return RunRecord(start=start, events=record.events, end=end.model_copy(update=update))
