"""The runs of a live calibration on the JVM: pyguard's agent styles on a scripted scenario, or a user's own agent.

Every run is observe-only (no guard stopping it) under a generous cap, so the calibration curves are not cut short:

- a pyguard agent style: :func:`pyguard.live.guard.run_unguarded` with the task's cap as LangChain4j's own cap;
- a user's factory (``factory`` in the task file): the user's own agent built by its factory around the task's model
  (the scenario over pyguard's local OpenAI-compatible server, in-process, or a real endpoint from the environment)
  wrapped in a ``GuardedChatModel`` that only observes; the Java fail-safe ends a run at the cap (``expired``,
  censored), the agent's own caps apply too.

:func:`preflight` starts the JVM (with the task file's classpath) and checks every scenario and every factory once,
so a bad name fails before any run starts.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from pyguard.base.ending import Causes, footer, settle
from pyguard.base.errors import InputError, PyguardError
from pyguard.base.events import IterationEvent, RunRecord, RunStart
from pyguard.jvm import guard_model, openai_chat_model, scripted_model, start_jvm, start_openai_server
from pyguard.jvm.factory import load_factory
from pyguard.jvm.nested import guard_stop_of
from pyguard.live.calibration.plan import PlannedRun
from pyguard.live.guard import run_unguarded
from pyguard.result import RunResult

__all__: list[str] = []

DEFAULT_ENV_MODEL = "gpt-4o-mini"
"""The model name used with ``model = "env"`` when ``OPENAI_MODEL`` is not set."""

_FACTORIES: dict[tuple[str, str, str], Any] = {}
_FACTORIES_LOCK = threading.Lock()


def jvm_runner(run: PlannedRun) -> Any:
    """The default runner: the task's agent (a pyguard style on its scenario, or the user's factory), observed only,
    with the run's cap."""
    if run.task.factory is not None:
        return factory_runner(run)

    model = scripted_model(_scenario(run), seed=run.seed)
    return run_unguarded(
        run.task.style,
        model,
        run.task.task,
        task_type=run.task.task_type,
        run_id=run.run_id,
        max_loop_iterations=run.cap,
        max_tool_calling_round_trips=run.cap,
    )


def _scenario(run: PlannedRun) -> str:
    if run.task.scenario is None:  # the task file's validation requires one for every model but "env"
        raise InputError(f"task {run.task.id!r} has no scenario to play")
    return run.task.scenario


def env_model_settings(environ: dict[str, str] | None = None) -> tuple[str, str, str]:
    """``(base_url, api_key, model_name)`` of ``model = "env"``: ``OPENAI_BASE_URL`` (default OpenAI's),
    ``OPENAI_API_KEY`` (required), ``OPENAI_MODEL`` (default :data:`DEFAULT_ENV_MODEL`)."""
    env = os.environ if environ is None else environ
    key = env.get("OPENAI_API_KEY", "")
    if not key:
        raise InputError(
            "model = 'env' needs OPENAI_API_KEY set (and OPENAI_BASE_URL for an endpoint other than OpenAI's, "
            "OPENAI_MODEL for a model other than " + DEFAULT_ENV_MODEL + ")"
        )
    return env.get("OPENAI_BASE_URL") or "https://api.openai.com/v1", key, env.get("OPENAI_MODEL") or DEFAULT_ENV_MODEL


@contextmanager
def _model_for(run: PlannedRun) -> Iterator[Any]:

    source = run.task.model
    if source == "env":
        base_url, key, name = env_model_settings()
        yield openai_chat_model(base_url, name, api_key=key, timeout_ms=60_000, max_retries=2)
    elif source == "scripted":
        yield scripted_model(_scenario(run), seed=run.seed)
    else:
        with start_openai_server(_scenario(run), seed=run.seed) as server:
            yield server.chat_model()


def _factory(run: PlannedRun) -> Any:

    f = run.task.factory
    assert f is not None
    key = (f.class_name, f.method, f.call)
    with _FACTORIES_LOCK:
        if key not in _FACTORIES:
            _FACTORIES[key] = load_factory(f.class_name, f.method, call=f.call)
        return _FACTORIES[key]


def factory_runner(run: PlannedRun) -> RunResult:
    """One run of the user's own agent: built by its factory around the task's model, observed, capped at the run's
    cap by the Java fail-safe. Never raises for the run itself: its outcome says how it ended."""

    factory = _factory(run)
    events: list[IterationEvent] = []
    answer: str | None = None
    t0 = time.monotonic()
    with _model_for(run) as model:
        guarded = guard_model(
            model,
            lambda e: events.append(e),
            run_id=run.run_id,
            task_type=run.task.task_type,
            max_model_calls=run.cap,
            keep_events=False,
        )
        cap = error = None
        try:
            agent = factory.build(guarded.java)
            answer = factory.ask(agent, run.task.task)
        except Exception as exc:
            text = f"{type(exc).__name__}: {exc}"
            if guard_stop_of(exc) is not None:
                cap = f"the calibration cap of {run.cap} model calls ended the run"
            elif "tool calling round trips" in str(exc) or "sequential tool" in str(exc):
                cap = f"the agent's own cap ended the run: {text}"
            else:
                error = f"the agent failed: {text}"
        finally:
            guarded.release()  # the run is over: its Python side need not wait for the JVM's collector
    settled = settle(Causes(expired=cap, failed=error, ended="the agent answered"))
    end = footer(
        run.run_id,
        events,
        settled,
        answer=answer if answer is not None else next((e.text for e in reversed(events) if e.text), None),
        wall_ms=(time.monotonic() - t0) * 1000.0,
        censored=cap is not None or (bool(events) and not events[-1].is_final and answer is None),
    )
    f = run.task.factory
    assert f is not None
    start = RunStart(
        run_id=run.run_id, task_type=run.task.task_type, task=run.task.task, agent_style=f"factory:{f.qualified}"
    )
    return RunResult(record=RunRecord(start=start, events=events, end=end))


def round_trips_properties(plan: Sequence[PlannedRun]) -> list[str]:
    """``-D<name>=<cap>`` for every factory's ``round_trips_property``: the agent's own maxToolCallingRoundTrips
    raised to the calibration's cap (the Java fail-safe still ends a run at ``cap`` model calls)."""
    out: list[str] = []
    for p in plan:
        f = p.task.factory
        if f is not None and f.round_trips_property and (arg := f"-D{f.round_trips_property}={p.cap}") not in out:
            out.append(arg)
    return out


def preflight(plan: Sequence[PlannedRun]) -> None:
    """Start the JVM (with every factory's classpath) and check each task's scenario and factory once, so a bad
    name fails before any run starts."""

    classpath: list[str] = []
    for p in plan:
        if p.task.factory is not None:
            classpath.extend(c for c in p.task.factory.classpath if c not in classpath)
    properties = round_trips_properties(plan)
    try:
        info = start_jvm(classpath=classpath, jvm_args=properties)
    except PyguardError as exc:
        raise InputError(f"the task file's classpath cannot be used: {exc}") from None
    unset = [a for a in properties if a not in info.jvm_args]
    if unset:
        raise InputError(
            f"the JVM of this process was started before the calibration, without {', '.join(unset)}: the agent's "
            "round-trip cap cannot be raised in it; run the calibration in a new process (the CLI does)"
        )
    for scenario, task_id in {p.task.scenario: p.task.id for p in plan if p.task.scenario is not None}.items():
        try:
            scripted_model(scenario)
        except PyguardError as exc:
            raise InputError(f"task {task_id!r}: scenario {scenario!r} cannot be played: {exc}") from None
        except Exception as exc:  # a Java exception (the scenario parser's)
            raise InputError(f"task {task_id!r}: scenario {scenario!r} is invalid: {exc}") from None
    for p in plan:
        if p.task.factory is None:
            continue
        try:
            _factory(p)
        except InputError as exc:
            raise InputError(f"task {p.task.id!r}: {exc}") from None
        if p.task.model == "env":
            try:
                env_model_settings()
            except InputError as exc:
                raise InputError(f"task {p.task.id!r}: {exc}") from None
