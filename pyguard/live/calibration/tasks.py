"""The live task file: which tasks a live calibration runs, against which agent and model, and how to tell a success.

A task file (TOML or JSON) holds ``tasks`` and, optionally, ``repeats``, ``cap``, a default ``style`` and a
``classpath``. Each task names its agent in one of two ways:

- pyguard's own agent styles (``style``: aiservices | agentic | executor) around a scripted ``scenario``;
- **your own Java agent**: ``factory = {class = "com.acme.Agents", method = "create", call = "chat"}`` names a
  ``public static`` method taking a LangChain4j ``ChatModel`` and returning your agent, and the agent method that
  takes the user's message (default ``chat``). Its classes come from the top-level ``classpath`` (paths and globs,
  relative to the task file). Its model is ``model = "server"`` (the task's ``scenario`` served by pyguard's local
  OpenAI-compatible server, reached through LangChain4j's real ``OpenAiChatModel``; the default), ``"scripted"`` (the
  scenario played in-process) or ``"env"`` (a real endpoint from ``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` and
  ``OPENAI_MODEL``).

See docs/calibrate-live.md. Errors name the file, the task and the field (:class:`~pyguard.base.errors.InputError`).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from pyguard.base.errors import InputError
from pyguard.base.safe_reader import load_config_file
from pyguard.jvm.scenarios import load_scenario

__all__: list[str] = []

ID_PATTERN = _ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


class FrozenModel(BaseModel):
    """Base of the calibration task models: unknown fields are refused, instances are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


_JAVA_NAME = re.compile(r"^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$")
_JAVA_IDENT = re.compile(r"^[A-Za-z_$][\w$]*$")
ModelSource = Literal["server", "scripted", "env"]


class AgentFactory(FrozenModel):
    """Your Java agent: ``public static <Agent> method(ChatModel model)`` of ``class``; the agent's ``call`` method
    takes the user's message (a ``String``) and returns the answer."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    class_name: str = Field(alias="class", min_length=1)
    """The fully qualified class name, e.g. ``com.example.logistics.LogisticsAgentFactory``."""
    method: str = "create"
    """A public static method of that class taking one ``ChatModel`` and returning the agent."""
    call: str = "chat"
    """The agent's public method that takes the user's message (one ``String``)."""
    classpath: tuple[str, ...] = ()
    """Where the classes are (the task file's top-level ``classpath``, resolved); not part of a run's identity."""
    round_trips_property: str | None = None
    """A Java system property your factory reads for its ``maxToolCallingRoundTrips`` (e.g.
    ``Integer.getInteger("logistics.maxRoundTrips", 25)``): pyguard starts the JVM with it set to the calibration's
    ``cap``, so the agent's own cap does not cut runs short of it."""

    @field_validator("class_name")
    @classmethod
    def _check_class(cls, value: str) -> str:
        if not _JAVA_NAME.match(value):
            raise ValueError(f"{value!r} is not a Java class name; give the fully qualified name, e.g. com.acme.Agents")
        return value

    @field_validator("round_trips_property")
    @classmethod
    def _check_property(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z_][\w.\-]*", value):
            raise ValueError(f"{value!r} is not a Java system property name (letters, digits, '_', '.', '-')")
        return value

    @field_validator("method", "call")
    @classmethod
    def _check_ident(cls, value: str) -> str:
        if not _JAVA_IDENT.match(value):
            raise ValueError(f"{value!r} is not a Java method name")
        return value

    @property
    def qualified(self) -> str:
        return f"{self.class_name}.{self.method}"


class LiveTask(FrozenModel):
    """One task of a task set: what to ask, which agent answers, how to tell a success."""

    id: str
    """Unique within the task set; letters, digits, ``_ . -`` (run ids are ``<id>#<rep>``)."""
    task_type: str = Field(min_length=1)
    """The calibration groups runs by this (several tasks may share a type)."""
    task: str = Field(min_length=1)
    """The user message sent to the agent."""
    scenario: str | None = Field(default=None, min_length=1)
    """The agent's model: a shipped pyguard scenario name, or a scenario JSON path (relative to the task file).
    Required, except for a ``factory`` task whose model is ``"env"``."""
    style: Literal["aiservices", "agentic", "executor"] = "aiservices"
    """The agent style built around the model (pyguard's own agents; not used with ``factory``)."""
    factory: AgentFactory | None = None
    """Your own Java agent instead of a pyguard agent style."""
    model: ModelSource | None = None
    """Where a ``factory`` agent's model comes from: ``"server"`` (default: the scenario over pyguard's local
    OpenAI-compatible server), ``"scripted"`` (the scenario in-process) or ``"env"`` (``OPENAI_BASE_URL``,
    ``OPENAI_API_KEY``, ``OPENAI_MODEL``)."""
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

    @model_validator(mode="after")
    def _check_agent(self) -> LiveTask:
        if self.factory is None:
            if self.model is not None:
                raise ValueError(
                    f"model = {self.model!r} is for a factory task (your own agent); leave it out or add factory"
                )
            if self.scenario is None:
                raise ValueError("scenario is required (or name your own agent with factory and model = 'env')")
            return self
        model = self.model or "server"
        if model != "env" and self.scenario is None:
            raise ValueError(
                f"factory task with model = {model!r} needs a scenario to play; give scenario = NAME, or set"
                " model = 'env' to use the endpoint in OPENAI_BASE_URL / OPENAI_API_KEY"
            )
        if model == "env" and self.scenario is not None:
            raise ValueError("scenario is not used with model = 'env' (a real endpoint answers); remove one of them")
        return self if self.model is not None else self.model_copy(update={"model": model})

    def verify(self, answer: str | None) -> bool | None:
        """True/False when the task states an expectation (None answer: False); None when it states none."""
        if self.expect is None and self.expect_regex is None:
            return None
        if answer is None:
            return False
        ok = self.expect is None or self.expect in answer
        return ok and (self.expect_regex is None or re.search(self.expect_regex, answer) is not None)


class TaskSet(FrozenModel):
    """A task set: the tasks, and (optionally) how many repeats and how generous a cap."""

    tasks: list[LiveTask] = Field(min_length=1)
    repeats: int | None = Field(default=None, ge=1)
    """Runs per task (the CLI's --repeats overrides it)."""
    cap: int = Field(default=100, ge=1, le=10_000)
    """The agent's own cap per run (maxToolCallingRoundTrips / maxIterations): generous, so runs end on their own.
    For a ``factory`` agent, the Java fail-safe's cap on model calls (its own caps apply too)."""
    classpath: list[str] = Field(default_factory=list)
    """Jars and class directories of ``factory`` agents (resolved against the task file; globs allowed)."""

    @model_validator(mode="after")
    def _unique_ids(self) -> TaskSet:
        dupes = sorted(i for i, n in Counter(t.id for t in self.tasks).items() if n > 1)
        if dupes:
            raise ValueError(f"task ids must be unique; repeated: {', '.join(dupes)}")
        return self


def parse_tasks(data: Any, *, source: str = "<tasks>", base_dir: Path | None = None) -> TaskSet:
    """A :class:`TaskSet` from parsed TOML/JSON: ``{"repeats"?, "cap"?, "style"?, "tasks": [{...}, ...]}``.

    A top-level ``style`` is the default of every task; a scenario given as a path is resolved against
    ``base_dir``. Raises :class:`InputError` naming the file, the task and the field."""
    if not isinstance(data, dict):
        raise InputError(f"{source}: a task set is a table/object with a 'tasks' list, not {type(data).__name__}")
    data = dict(data)
    style = data.pop("style", None)
    classpath = data.get("classpath", [])
    if isinstance(classpath, str):
        classpath = [classpath]
    if not isinstance(classpath, list) or not all(isinstance(c, str) for c in classpath):
        raise InputError(
            f"{source}: classpath must be a list of paths (jars, class directories, globs), got {classpath!r}"
        )
    base = base_dir if base_dir is not None else Path.cwd()
    classpath = [c if os.path.isabs(c) else str((base / c).resolve()) for c in classpath]
    data["classpath"] = classpath
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
        if isinstance(raw.get("factory"), dict):
            raw["factory"] = {**raw["factory"], "classpath": classpath}
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
                    "is not a task-set key (tasks take id, task_type, task, scenario, style, factory, model, expect, "
                    "expect_regex, seed; a factory takes class, method, call; the file takes repeats, cap, style, "
                    "classpath, tasks)"
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

    for t in taskset.tasks:
        if t.scenario is None:
            continue
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
    data = load_config_file(p, what="task set")  # the one safe reader: size, depth, integer limits
    return parse_tasks(data, source=str(p), base_dir=p.parent)
