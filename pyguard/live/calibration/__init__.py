"""Live calibration: run a task set R times each against the Java agent, observe-only, then calibrate.

    from pyguard.live.calibration import load_tasks, run_live
    tasks = load_tasks("examples/calibration/tasks.toml")
    live = run_live(tasks, "calib/traces", repeats=20, threads=2, progress=True)
    report = calibrate_runs(live.records, make_config(failure_cost=5000))   # once live.complete

Each run is observe-only with a generous cap (``TaskSet.cap``: no guard stopping it), so the curves are not cut
short; a run that reaches the cap is censored, not failed. A run succeeds when the agent delivered an answer and, when
the task gives ``expect`` (substring) or ``expect_regex``, the answer matches; an answer that does not match is a
failure (``success_label=False``).

The pieces, one module each: :mod:`pyguard.live.calibration.tasks` (the task file: pyguard's agent styles or your own Java
agent factory), :mod:`pyguard.live.calibration.plan` (run ids ``<task_id>#<rep>``, plan and resume, labels),
:mod:`pyguard.live.calibration.runners` (the runs on the JVM) and :mod:`pyguard.live.calibration.pool` (the thread pool writing
each run as it finishes). This module ties them together and re-exports their names.
"""

from __future__ import annotations

import os
from pathlib import Path

from pyguard.base.errors import InputError
from pyguard.live.calibration.caps import AgentCap, agent_cap_warnings, agent_caps
from pyguard.live.calibration.plan import (
    LiveResult,
    PlannedRun,
    Runner,
    completed_runs,
    label_run,
    parse_run_id,
    plan_runs,
    run_id_for,
)
from pyguard.live.calibration.pool import Progress, execute
from pyguard.live.calibration.runners import jvm_runner, preflight
from pyguard.live.calibration.tasks import LiveTask, TaskSet, load_tasks, parse_tasks

__all__ = [
    "LiveTask",
    "PlannedRun",
    "load_tasks",
    "parse_tasks",
    "run_id_for",
    "parse_run_id",
    "plan_runs",
    "completed_runs",
    "label_run",
    "jvm_runner",
    "AgentCap",
    "agent_caps",
    "agent_cap_warnings",
]


def run_live(
    tasks: TaskSet,
    trace_dir: str | os.PathLike[str],
    *,
    repeats: int | None = None,
    cap: int | None = None,
    threads: int = 2,
    limit: int | None = None,
    runner: Runner | None = None,
    progress: Progress = False,
) -> LiveResult:
    """Run the planned runs not yet complete in ``trace_dir`` on ``threads`` threads (at most ``limit`` of them),
    writing each one as it finishes. ``runner`` defaults to :func:`jvm_runner` (which starts the JVM). ``progress``:
    a bar (``True``/``"bar"``), plain lines on stderr (``"lines"``, for a log or a pipe), or nothing.

    A run that raises stops the calibration (:class:`RunError`; the runs finished so far are kept); Ctrl-C lets
    the runs in flight finish and be written, then re-raises ``KeyboardInterrupt``. Rerun to resume either way."""
    if threads < 1:
        raise InputError(f"threads={threads!r} must be a positive integer")
    if limit is not None and limit < 1:
        raise InputError(f"max runs={limit!r} must be a positive integer (leave it out to run everything)")
    plan = plan_runs(tasks, repeats, cap)
    root = Path(trace_dir)
    done, ignored = completed_runs(root, plan)
    todo = [p for p in plan if p.run_id not in done]
    if limit is not None:
        todo = todo[:limit]
    already = len(done)
    if todo:
        root.mkdir(parents=True, exist_ok=True)
        if runner is None:
            preflight(todo)
        execute(todo, root, runner or jvm_runner, threads, done, progress)
    records = [done[p.run_id] for p in plan if p.run_id in done]
    return LiveResult(
        planned=len(plan),
        already_done=already,
        ran=len(records) - already,
        remaining=len(plan) - len(records),
        records=records,
        ignored=sorted(ignored),
    )
