"""Live calibration: run a task set R times each against the Java agent, observe-only, then calibrate.

    from pyguard.calibrate.live import load_tasks, run_live
    tasks = load_tasks("examples/calibration/tasks.toml")
    live = run_live(tasks, "calib/traces", repeats=20, threads=2, progress=True)
    report = calibrate_runs(live.records, make_config(failure_cost=5000))   # once live.complete

Each run is ``run_unguarded`` with a generous cap (``TaskSet.cap``: LangChain4j's own cap, no guard stopping), so
the curves are not cut short by a guard; a run that reaches the cap is censored, not failed. A run succeeds when
the agent delivered an answer and, when the task gives ``expect`` (substring) or ``expect_regex``, the answer
matches; an answer that does not match is a failure (``success_label=False``).

Run ids are ``f"{task_id}#{rep}"`` with ``rep`` in 1..R; the plan is ordered repeat by repeat (every task's #1,
then every task's #2, ...) so a calibration stopped early still covers every task. Each finished run is written
at once to its own trace file ``<trace_dir>/<task_id>#<rep>.jsonl`` (written aside, then renamed: a file there is
always a whole run). Resuming reads the trace dir with :func:`pyguard.trace.load_runs` and skips every planned id
that already has a footer; a run recorded for a task that has since changed (text, type, agent, cap, expect)
is an error, not a silent mix. The run's seed derives from the task's seed (or its id) and the repeat, so a
rerun of an id plays the same scripted run.
"""

from __future__ import annotations

import json
import os
import re
import threading
import tomllib
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from pyguard.errors import InputError, PyguardError, RunError
from pyguard.events import Outcome, RunRecord
from pyguard.trace import TraceWriter, load_runs

__all__ = [
    "LiveTask",
    "TaskSet",
    "PlannedRun",
    "LiveResult",
    "Runner",
    "load_tasks",
    "parse_tasks",
    "run_id_for",
    "parse_run_id",
    "plan_runs",
    "completed_runs",
    "label_run",
    "jvm_runner",
    "run_live",
]

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
_KEY = "calibration"  # RunEnd.evidence key holding what a live run was run with


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LiveTask(_Model):
    """One task of a task set: what to ask, which agent answers, how to tell a success."""

    id: str
    """Unique within the task set; letters, digits, ``_ . -`` (run ids are ``<id>#<rep>``)."""
    task_type: str = Field(min_length=1)
    """The calibration groups runs by this (several tasks may share a type)."""
    task: str = Field(min_length=1)
    """The user message sent to the agent."""
    scenario: str = Field(min_length=1)
    """The agent's model: a shipped pyguard scenario name, or a scenario JSON path (relative to the task file)."""
    style: Literal["aiservices", "agentic", "executor"] = "aiservices"
    """The agent style built around the model."""
    expect: str | None = None
    """A substring the answer must contain to count as a success."""
    expect_regex: str | None = None
    """A regular expression (``re.search``) the answer must match to count as a success."""
    seed: int | None = None
    """Base seed of the scripted model (default: derived from the id); repeat r plays seed (base, r)."""

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError(f"task id {value!r} must be letters, digits, '_', '.' or '-' (no '#', no spaces)")
        return value

    @field_validator("expect_regex")
    @classmethod
    def _check_regex(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"expect_regex {value!r} is not a valid regular expression: {exc}") from None
        return value

    def verify(self, answer: str | None) -> bool | None:
        """True/False when the task states an expectation (None answer: False); None when it states none."""
        if self.expect is None and self.expect_regex is None:
            return None
        if answer is None:
            return False
        ok = self.expect is None or self.expect in answer
        return ok and (self.expect_regex is None or re.search(self.expect_regex, answer) is not None)


class TaskSet(_Model):
    """A task set: the tasks, and (optionally) how many repeats and how generous a cap."""

    tasks: list[LiveTask] = Field(min_length=1)
    repeats: int | None = Field(default=None, ge=1)
    """Runs per task (the CLI's --repeats overrides it)."""
    cap: int = Field(default=100, ge=1, le=10_000)
    """The agent's own cap per run (maxToolCallingRoundTrips / maxIterations): generous, so runs end on their own."""

    @model_validator(mode="after")
    def _unique_ids(self) -> TaskSet:
        dupes = sorted(i for i, n in Counter(t.id for t in self.tasks).items() if n > 1)
        if dupes:
            raise ValueError(f"task ids must be unique; repeated: {', '.join(dupes)}")
        return self


class PlannedRun(_Model):
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


# -- the task file ---------------------------------------------------------------------------------------------


def parse_tasks(data: Any, *, source: str = "<tasks>", base_dir: Path | None = None) -> TaskSet:
    """A :class:`TaskSet` from parsed TOML/JSON: ``{"repeats"?, "cap"?, "style"?, "tasks": [{...}, ...]}``.

    A top-level ``style`` is the default of every task; a scenario given as a path is resolved against
    ``base_dir``. Raises :class:`InputError` naming the file, the task and the field."""
    if not isinstance(data, dict):
        raise InputError(f"{source}: a task set is a table/object with a 'tasks' list, not {type(data).__name__}")
    data = dict(data)
    style = data.pop("style", None)
    raw_tasks = data.get("tasks")
    if not isinstance(raw_tasks, list) or not raw_tasks:
        raise InputError(
            f"{source}: no tasks; add a [[tasks]] table (TOML) or a 'tasks' list (JSON) with id, "
            "task_type, task and scenario"
        )
    tasks = []
    for i, raw in enumerate(raw_tasks):
        if not isinstance(raw, dict):
            raise InputError(f"{source}: task {i + 1} must be a table/object, got {type(raw).__name__}")
        raw = dict(raw)
        if style is not None:
            raw.setdefault("style", style)
        scenario = raw.get("scenario")
        if isinstance(scenario, str) and base_dir is not None and (scenario.endswith(".json") or "/" in scenario):
            raw["scenario"] = str((base_dir / scenario).resolve())
        tasks.append(raw)
    try:
        taskset = TaskSet.model_validate({**data, "tasks": tasks})
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = list(err.get("loc", ()))
            where = ""
            if len(loc) >= 2 and loc[0] == "tasks" and isinstance(loc[1], int):
                tid = tasks[loc[1]].get("id") if loc[1] < len(tasks) else None
                where = f"task {loc[1] + 1}" + (f" ({tid!r})" if isinstance(tid, str) else "") + ": "
                loc = loc[2:]
            field = ".".join(str(p) for p in loc)
            msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
            if err.get("type") == "missing":
                msg = "is required"
            elif err.get("type") == "extra_forbidden":
                msg = (
                    "is not a task-set key (tasks take id, task_type, task, scenario, style, expect, "
                    "expect_regex, seed; the file takes repeats, cap, style, tasks)"
                )
            problems.append(
                f"{where}{field + ' ' if field else ''}{msg}"
                + (
                    f" (got {err.get('input')!r})"
                    if err.get("type") not in ("missing", "extra_forbidden")
                    and not isinstance(err.get("input"), dict | list)
                    else ""
                )
            )
        raise InputError(f"{source}: " + "; ".join(problems)) from None
    from pyguard.jvm.scenarios import load_scenario  # pure Python: finds and parses the scenario file

    for t in taskset.tasks:
        try:
            load_scenario(t.scenario)
        except InputError as exc:
            raise InputError(f"{source}: task {t.id!r}: {exc}") from None
    return taskset


def load_tasks(path: str | os.PathLike[str]) -> TaskSet:
    """Read a task set from a ``.toml`` or ``.json`` file (see :func:`parse_tasks`)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"task set {str(p)!r} does not exist; pass a .toml or .json task file")
    try:
        text = p.read_text(encoding="utf-8")
        data = json.loads(text) if p.suffix.lower() == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        kind = "JSON" if p.suffix.lower() == ".json" else "TOML"
        raise InputError(f"task set {str(p)!r} is not valid {kind}: {exc}") from None
    return parse_tasks(data, source=str(p), base_dir=p.parent)


# -- plan and resume ---------------------------------------------------------------------------------------------


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


def _trace_file(trace_dir: Path, run_id: str) -> Path:
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


# -- running ----------------------------------------------------------------------------------------------------


def label_run(run: PlannedRun, record: RunRecord) -> RunRecord:
    """The run's record with its success decided by the task's expectation and its settings in the evidence."""
    end = record.end
    if end is None:
        raise RunError(f"run {run.run_id!r} came back without a footer; the runner must return a finished run")
    update: dict[str, Any] = {}
    verified = run.task.verify(end.answer) if end.outcome is Outcome.SUCCEEDED else None
    if verified is not None:
        update["success_label"] = verified
        if not verified:
            t = run.task
            missed = (
                f"expect {t.expect!r}"
                if t.expect is not None and t.expect not in (end.answer or "")
                else f"expect_regex {t.expect_regex!r}"
            )
            update.update(outcome=Outcome.FAILED, reason=f"the answer does not match the task's {missed}")
    update["evidence"] = {**end.evidence, _KEY: {**run.fingerprint(), "verified": verified}}
    start = (
        record.start if record.start.task_type else record.start.model_copy(update={"task_type": run.task.task_type})
    )
    return RunRecord(start=start, events=record.events, end=end.model_copy(update=update))


def _write(trace_dir: Path, record: RunRecord) -> None:
    final = _trace_file(trace_dir, record.run_id)
    part = final.with_name(final.name + ".part")
    with TraceWriter(part, mode="w") as writer:
        writer.write_run(record)
    os.replace(part, final)


def jvm_runner(run: PlannedRun) -> Any:
    """The default runner: the task's scenario played by pyguard's scripted model, unguarded, with the run's cap."""
    from pyguard.guard import run_unguarded
    from pyguard.jvm import scripted_model

    model = scripted_model(run.task.scenario, seed=run.seed)
    return run_unguarded(
        run.task.style,
        model,
        run.task.task,
        task_type=run.task.task_type,
        run_id=run.run_id,
        max_loop_iterations=run.cap,
        max_tool_calling_round_trips=run.cap,
    )


def _preflight(plan: Sequence[PlannedRun]) -> None:
    """Start the JVM and build each task's model once, so a bad scenario fails before any run starts."""
    from pyguard.jvm import scripted_model, start_jvm

    start_jvm()
    for scenario, task_id in {p.task.scenario: p.task.id for p in plan}.items():
        try:
            scripted_model(scenario)
        except PyguardError as exc:
            raise InputError(f"task {task_id!r}: scenario {scenario!r} cannot be played: {exc}") from None
        except Exception as exc:  # a Java exception (the scenario parser's)
            raise InputError(f"task {task_id!r}: scenario {scenario!r} is invalid: {exc}") from None


def run_live(
    tasks: TaskSet,
    trace_dir: str | os.PathLike[str],
    *,
    repeats: int | None = None,
    cap: int | None = None,
    threads: int = 2,
    limit: int | None = None,
    runner: Runner | None = None,
    progress: bool = False,
) -> LiveResult:
    """Run the planned runs not yet complete in ``trace_dir`` on ``threads`` threads (at most ``limit`` of them),
    writing each one as it finishes. ``runner`` defaults to :func:`jvm_runner` (which starts the JVM).

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
            _preflight(todo)
        _execute(todo, root, runner or jvm_runner, threads, done, progress)
    records = [done[p.run_id] for p in plan if p.run_id in done]
    return LiveResult(
        planned=len(plan),
        already_done=already,
        ran=len(records) - already,
        remaining=len(plan) - len(records),
        records=records,
        ignored=sorted(ignored),
    )


def _execute(
    todo: list[PlannedRun], root: Path, runner: Runner, threads: int, done: dict[str, RunRecord], progress: bool
) -> None:
    lock = threading.Lock()

    def one(run: PlannedRun) -> RunRecord:
        out = runner(run)
        record = label_run(run, out.record if hasattr(out, "record") else out)
        _write(root, record)
        with lock:
            done[run.run_id] = record
        return record

    bar = _Bar(len(todo)) if progress else None
    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="pyguard-calibrate")
    pending: set[Future] = set()
    try:
        futures = {pool.submit(one, run): run for run in todo}
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                exc = fut.exception()
                if exc is not None:
                    raise RunError(
                        f"run {futures[fut].run_id!r} could not be carried out ({type(exc).__name__}: {exc}); the "
                        f"runs finished so far are kept in {str(root)!r}: fix the cause and rerun to resume"
                    ) from exc
                if bar is not None:
                    bar.advance(fut.result())
    finally:
        for fut in pending:
            fut.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        if bar is not None:
            bar.close()


class _Bar:
    """A rich progress bar on stderr: runs done, successes / failures / cut-off so far, time left."""

    def __init__(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self._counts = {"ok": 0, "fail": 0, "cut": 0}
        self._p = Progress(
            TextColumn("calibrating"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.description}"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        self._p.start()
        self._task = self._p.add_task(self._text(), total=total)

    def _text(self) -> str:
        c = self._counts
        return f"ok {c['ok']} · failed {c['fail']} · cut off {c['cut']}"

    def advance(self, record: RunRecord) -> None:
        from pyguard.calibrate.runs import RunStatus, run_status

        status = run_status(record)
        self._counts[{RunStatus.SUCCESS: "ok", RunStatus.FAILURE: "fail", RunStatus.CENSORED: "cut"}[status]] += 1
        self._p.update(self._task, advance=1, description=self._text())

    def close(self) -> None:
        self._p.stop()
