"""The Guard API: run Java LangChain4j agents guarded by the engine, get an honest :class:`RunResult` and a trace.

Two ways in. pyguard's own agent styles (AiServices, an agentic loop, the explicit executor) around any LangChain4j
``ChatModel``::

    from pyguard.live.guard import Guard
    from pyguard.jvm import start_jvm, scripted_model
    start_jvm()
    guard = Guard(trace_dir="traces")
    result = guard.run("aiservices", scripted_model("logistics_incident"), "Where is order 12345?", tools="logistics")
    result.outcome, result.answer, result.model_calls, result.total_tokens, result.evidence

Or your own Java agent, built around the guarded model pyguard hands you::

    with guard.start_run(task="Where is order 12345?", task_type="lookup") as run:
        agent = MyAgents.create(run.wrap(my_chat_model))      # your Java factory, any LangChain4j ChatModel
        run.call(lambda: str(agent.chat("Where is order 12345?")))
    result = run.result

This module imports no jpype itself: it reaches the JVM through :mod:`pyguard.jvm`, imported when a run starts.
Every run gets its own engine session and its own Java ``GuardedChatModel``, so runs on many threads never mix.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from pyguard.base.agent_options import AgentKeywords, AgentOptions, agent_options
from pyguard.base.ending import end_from_events, finish_arguments
from pyguard.base.errors import ConfigError
from pyguard.base.events import IterationEvent, RunRecord, RunStart
from pyguard.base.limits import fail_safe_cap, renamed_limit
from pyguard.engine import Policy, PolicyConfig
from pyguard.jvm import build_agent, run_agent, run_built, scripted_model, start_openai_server
from pyguard.jvm.ending import ending_of_result
from pyguard.live.agent_guard import AgentGuard, GuardedAgent
from pyguard.live.conversation import STREAMING_OPTIONS, resume_run, run_chat
from pyguard.live.guard_settings import AGENT_OPTIONS, ATTACH_OPTIONS, check_guard_settings, with_mode
from pyguard.live.run import ActiveRuns, GuardedRun, OnStop, Verifier, new_run_id, recorded_task
from pyguard.result import RunResult

if TYPE_CHECKING:  # pragma: no cover
    from pyguard.engine.config import Mode

__all__: list[str] = []

DEFAULT_TASK = "Where is order 12345? Tell me its shipment status."

DEFAULT_CALLBACK_TIMEOUT_MS = 10_000
"""The default deadline of the guard's decision, per model call. An engine decision takes well under a millisecond
(the engine_scaling benchmark suite), so 10 s is only ever reached by a hung engine; then the Java fail-safe stops the
run at once (outcome ``guard_error``, no further model call), the late decision is discarded, and the caller of
:meth:`Guard.run` waits for the engine no longer: one deadline per run. ``callback_timeout_ms=0`` runs the decision on the agent's thread
instead (what that saves per model call: the overhead suite), but a hung engine then blocks the agent."""


class Guard:
    """A policy, a fail-safe and a place for traces; makes one :class:`GuardedRun` per run.

    ``config``: the engine's :class:`~pyguard.engine.PolicyConfig` (default policy when None).
    ``trace_dir``: write each run's JSONL trace there as it goes (:func:`trace_file_name`: ``<run_id>.jsonl`` for a
    plain id). A trace is never overwritten and never written through a symlink: a run id whose trace already exists
    there is refused (:class:`RunError`) when the run starts.
    ``trace_file_mode``: permissions of new trace files (default ``0o600``: traces hold prompts and tool output).
    ``fail_safe_calls``: the Java fail-safe cap on model calls per user turn; it holds even if Python fails. Default
    :func:`pyguard.base.limits.fail_safe_cap`: the most calls the policy allows in a turn plus a small margin (every limit
    and its default: :mod:`pyguard.base.limits`). ``max_model_calls`` is its deprecated name (``max_model_calls`` means the
    policy's cap on model calls per run, ``[caps] max_model_calls``).
    ``callback_timeout_ms``: deadline for the engine's decision per model call (default
    :data:`DEFAULT_CALLBACK_TIMEOUT_MS`; 0: none, the decision then runs on the agent's thread and a hung engine blocks
    the agent).
    ``verifier``: optional ``answer -> bool``; a rejected answer makes the run ``failed``.
    ``telemetry``: optional :class:`pyguard.otel.GuardTelemetry` (``otel`` extra): each run also emits OpenTelemetry
    GenAI spans as it goes.
    ``mode``: ``"observe"``, ``"reflect"`` or ``"enforce"`` for every run: it replaces the policy file's top-level
    ``mode``; a task type of the policy whose own ``mode`` differs is refused (:class:`ConfigError`, see
    :mod:`pyguard.live.guard_settings` for why). Observe records every decision in the trace and acts on none (no stop, no
    reflection, no wrap-up, not even at the agent's own cap), reflect sends reflections and never stops, enforce acts
    on every decision. None: the policy's (``PolicyConfig.mode`` and its task types', default enforce).
    ``on_stop``: ``"answer"`` (default): a stopped run (the guard's stop, the fail-safe cap, the agent's own cap when
    pyguard knows it) ends with one last model call with no tools asking for the best answer from what the run knows
    (:data:`pyguard.live.run.WRAP_UP`); the agent returns that answer, the outcome still says ``stalled``/``expired`` and
    ``RunResult.answer_source`` is ``"wrap_up"``. ``"raise"``: the agent's call raises Java's
    ``GuardStopException`` (``pyguard.jvm.GuardStopException`` from Python), through an attached
    agent, :meth:`GuardedRun.call` and :meth:`agent` alike (:meth:`run` returns the result). ``"end"``: no model call after the stop; the agent returns the stop message
    (``stop_message``, default :data:`pyguard.live.run.STOP_MESSAGE`: ``{outcome}``, ``{rule}``, ``{reason}`` and
    ``{found}``, the run's last tool result, which ``stop_message_content=False`` leaves out) and
    ``RunResult.answer_source`` is ``"stop_message"``. None (default): the policy's ``on_stop`` for the run's task
    type (``PolicyConfig.on_stop``, ``[task_types.X] on_stop``; default ``"answer"``); a value here replaces them.
    """

    def __init__(
        self,
        config: PolicyConfig | None = None,
        *,
        trace_dir: str | Path | None = None,
        fail_safe_calls: int | None = None,
        max_model_calls: int | None = None,
        callback_timeout_ms: int = DEFAULT_CALLBACK_TIMEOUT_MS,
        clock: Callable[[], float] = time.monotonic,
        verifier: Verifier | None = None,
        trace_file_mode: int = 0o600,
        telemetry: Any = None,
        on_stop: OnStop | None = None,
        mode: Mode | None = None,
        stop_message: str | None = None,
        stop_message_content: bool = True,
    ) -> None:
        if config is not None and not isinstance(config, PolicyConfig):
            raise ConfigError(f"config must be a pyguard.engine.PolicyConfig, not {type(config).__name__}")
        if mode is not None:
            config = with_mode(config or PolicyConfig(), mode)
        self.policy: Policy = Policy(config, clock=clock)
        self.config: PolicyConfig = self.policy.config
        self.trace_dir = Path(trace_dir) if trace_dir is not None else None
        if self.trace_dir is not None:
            self.trace_dir.mkdir(parents=True, exist_ok=True)
        fail_safe_calls = renamed_limit("Guard", "max_model_calls", max_model_calls, "fail_safe_calls", fail_safe_calls)
        if fail_safe_calls is None:
            fail_safe_calls = fail_safe_cap(self.config)
        check_guard_settings(
            fail_safe_calls=fail_safe_calls,
            callback_timeout_ms=callback_timeout_ms,
            trace_file_mode=trace_file_mode,
            on_stop=on_stop,
            stop_message=stop_message,
        )
        self.on_stop: OnStop = on_stop if on_stop is not None else self.config.on_stop
        self.on_stop_set = on_stop is not None
        """True when ``on_stop`` was given here: it replaces the policy's task types' (else each run reads its own)."""
        self.stop_message = stop_message
        self.stop_message_content = bool(stop_message_content)
        self.fail_safe_calls: int = fail_safe_calls
        self.callback_timeout_ms = callback_timeout_ms
        self.trace_file_mode = trace_file_mode
        self.verifier = verifier
        self.active = ActiveRuns()
        self.telemetry = telemetry

    @property
    def max_model_calls(self) -> int:
        """Deprecated: :attr:`fail_safe_calls` (the Java fail-safe per user turn)."""
        warnings.warn(
            "Guard.max_model_calls is now Guard.fail_safe_calls (max_model_calls is the policy's cap per run)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.fail_safe_calls

    @classmethod
    def from_toml(cls, path: str | Path, **kwargs: Any) -> Guard:
        """A guard whose policy comes from a TOML file or a pyproject.toml's ``[tool.pyguard]``."""
        return cls(PolicyConfig.from_toml(path), **kwargs)

    # -- runs ----------------------------------------------------------------------------------------------------

    def start_run(
        self,
        *,
        task: str | None = None,
        task_type: str | None = None,
        run_id: str | None = None,
        agent_style: str | None = None,
    ) -> GuardedRun:
        """Open one guarded run: call :meth:`GuardedRun.wrap` on your model, run your agent inside
        :meth:`GuardedRun.call`, then read :attr:`GuardedRun.result`. Usable as a context manager."""
        return GuardedRun(self, run_id=run_id or new_run_id(), task=task, task_type=task_type, agent_style=agent_style)

    def attach(
        self,
        model: Any,
        *,
        options: AgentOptions | None = None,
        agent_style: str | None = None,
        on_result: Callable[[RunResult], None] | None = None,
        **keywords: Unpack[AgentKeywords],
    ) -> AgentGuard:
        """Attach this guard to an agent for its lifetime: build your agent once around the returned
        :class:`pyguard.live.agent_guard.AgentGuard`'s ``.model`` (and its :meth:`~pyguard.live.agent_guard.AgentGuard.
        before_tool_execution` hook); every user turn (every ``chat()`` call, on any thread) is then a guarded run of
        its own, with its own trace, budget and outcome (``.results``; ``on_result`` hears each as it ends).
        ``options`` (:class:`pyguard.AgentOptions`) or keywords: ``task_type``, and ``max_tool_calling_round_trips``,
        your agent's ``maxToolCallingRoundTrips``, so that its end gets the wrap-up answer too (``round_trips`` is
        its deprecated name). Java code holding the agent reads each call's end from ``.model``
        (``lastOutcome()``, outcome listeners); ``.watch(agent)`` ends each call's run with the call, cap told or not."""
        options = agent_options("Guard.attach", options, keywords, uses=ATTACH_OPTIONS)
        return AgentGuard(self, model, options, agent_style=agent_style, on_result=on_result)

    def agent(
        self,
        style: str,
        model: Any,
        *,
        options: AgentOptions | None = None,
        on_result: Callable[[RunResult], None] | None = None,
        **keywords: Unpack[AgentKeywords],
    ) -> GuardedAgent:
        """One of pyguard's agent styles ('aiservices', 'agentic', 'executor') around ``model``, built once and
        guarded for its lifetime: each ``.chat(task)`` (from any thread) is a guarded run and returns its
        :class:`RunResult`. ``options`` (:class:`pyguard.AgentOptions`) or keywords, as for :meth:`run` but no
        ``run_id`` (each run gets its own). The aiservices agent keeps no conversation between calls (a fresh chat
        memory per run)."""
        options = agent_options("Guard.agent", options, keywords, uses=AGENT_OPTIONS)
        # the wrap-up at the agent's own cap: pyguard knows it for its AiServices agent
        round_trips = options.round_trips() if str(style) == "aiservices" else None
        lifetime = options.model_copy(update={"max_tool_calling_round_trips": round_trips})
        agent_guard = AgentGuard(self, model, lifetime, agent_style=str(style), on_result=on_result)
        java_agent = build_agent(style, agent_guard.model, options=options, per_run_memory=True)
        return GuardedAgent(agent_guard, java_agent, str(style))

    def run(
        self,
        style: str,
        model: Any,
        task: str | Sequence[str],
        *,
        options: AgentOptions | None = None,
        **keywords: Unpack[AgentKeywords],
    ) -> RunResult:
        """Run ``task`` on a pyguard-built agent of ``style`` ('aiservices', 'agentic', 'executor') around ``model``
        (any Java LangChain4j ChatModel). Never raises for the run itself: its outcome says how it ended. A list of
        user messages is a conversation in one run (aiservices).

        ``options`` (:class:`pyguard.AgentOptions`) or the same as keywords (a keyword wins over the object's field):
        ``tools`` (see :func:`pyguard.jvm.tool_set`), ``task_type``, ``run_id``, the agent's own loop caps
        ``max_loop_iterations`` and ``max_tool_calling_round_trips`` (:mod:`pyguard.base.limits`; ``max_iterations`` is
        the deprecated name of the first), ``exit_when_answer_contains``, ``system_message``."""
        options = agent_options("Guard.run", options, keywords)
        run = self.start_run(
            task=recorded_task(task), task_type=options.task_type, run_id=options.run_id, agent_style=str(style)
        )
        if str(style) == "aiservices":  # pyguard's AiServices agent keeps its conversation: escalations can resume
            return run_chat(run, model, task, options)
        return run.drive(
            lambda agent: run_built(agent, task, run.guarded),
            build=lambda: build_agent(style, run.guarded_model(model), options=options),
        )

    def run_streaming(
        self,
        model: Any,
        task: str | Sequence[str],
        *,
        options: AgentOptions | None = None,
        on_partial: Callable[[str], None] | None = None,
        agent: str | None = None,
        **keywords: Unpack[AgentKeywords],
    ) -> RunResult:
        """Run ``task`` on pyguard's AiServices agent around a LangChain4j ``StreamingChatModel`` (the agent's method
        returns a ``TokenStream``; ``on_partial`` gets each text chunk as it streams) or a ``ChatModel``; guarded as
        :meth:`run` is: one event per completed model call, decisions applied before the next. ``options``
        (:class:`pyguard.AgentOptions`) or keywords: ``tools``, ``task_type``, ``run_id``,
        ``max_tool_calling_round_trips``, ``system_message``. An escalated run's result carries a resumable
        :class:`pyguard.escalation.EscalationHandle` (``agent`` names the agent in it). See
        :mod:`pyguard.live.conversation`."""
        options = agent_options("Guard.run_streaming", options, keywords, uses=STREAMING_OPTIONS)
        run = self.start_run(
            task=recorded_task(task), task_type=options.task_type, run_id=options.run_id, agent_style="aiservices"
        )
        return run_chat(run, model, task, options, on_partial=on_partial, agent=agent)

    def resume(
        self,
        handle: Any,
        message: str,
        model: Any,
        *,
        options: AgentOptions | None = None,
        on_partial: Callable[[str], None] | None = None,
        agent: str | None = None,
        **keywords: Unpack[AgentKeywords],
    ) -> RunResult:
        """Resume an escalated run from its :class:`pyguard.escalation.EscalationHandle` (or its JSON): ``message``,
        the human's answer, is the next user turn of the same agent rebuilt around ``model`` and ``tools`` (an agent
        option, as a keyword or in ``options``; the handle keeps the rest), with the ``resume_budget`` of this guard's
        policy. Raises :class:`pyguard.base.errors.HandleError` for a bad or stale handle. See
        :func:`pyguard.live.conversation.resume_run`."""
        options = agent_options("Guard.resume", options, keywords, uses=("tools",))
        return resume_run(self, handle, message, model, tools=options.tools, on_partial=on_partial, agent=agent)

    # -- cancelling ------------------------------------------------------------------------------------------------

    @property
    def active_runs(self) -> list[GuardedRun]:
        """The runs of this guard started and not yet finished."""
        return self.active.snapshot()

    def cancel_all(self, reason: str = "interrupted (Ctrl-C)") -> int:
        """Cancel every active run of this guard (their next model call or tool execution stops them, outcome
        ``cancelled``, trace footer written); returns how many were cancelled. Safe from any thread."""
        runs = self.active_runs
        for run in runs:
            run.cancel(reason)
        return len(runs)

    def run_scenario(
        self,
        scenario: Any,
        task: str = DEFAULT_TASK,
        *,
        style: str = "aiservices",
        task_type: str | None = None,
        seed: int | None = None,
        run_id: str | None = None,
        over_http: bool = False,
        **kwargs: Any,
    ) -> RunResult:
        """Run one of pyguard's scripted scenarios (a shipped name, a JSON path or a dict) guarded.

        ``over_http=True`` serves the scenario from the local OpenAI-compatible server and drives it with
        LangChain4j's real ``OpenAiChatModel`` (token usage then arrives through HTTP ``usage``)."""
        if over_http:
            with start_openai_server(scenario, seed=seed) as server:
                return self.run(
                    style, server.chat_model(), task, tools=server, task_type=task_type, run_id=run_id, **kwargs
                )
        return self.run(style, scripted_model(scenario, seed=seed), task, task_type=task_type, run_id=run_id, **kwargs)

    def run_many(
        self,
        jobs: Iterable[Callable[[Guard], RunResult]],
        *,
        threads: int = 8,
        progress: bool = False,
    ) -> list[RunResult]:
        """Run jobs (each ``guard -> RunResult``, e.g. ``lambda g: g.run_scenario("convergent")``) on ``threads``
        Java-attached Python threads; results in job order. Each run keeps its own budget and trace."""
        jobs = list(jobs)
        if threads < 1:
            raise ConfigError(f"threads={threads!r} must be a positive integer")
        results: list[RunResult | None] = [None] * len(jobs)
        with ThreadPoolExecutor(max_workers=threads) as pool, _progress(len(jobs), progress) as advance:
            futures = {pool.submit(job, self): i for i, job in enumerate(jobs)}
            for fut in futures:
                results[futures[fut]] = fut.result()
                advance()
        return [r for r in results if r is not None]


def run_unguarded(
    style: str,
    model: Any,
    task: str | Sequence[str],
    *,
    options: AgentOptions | None = None,
    **keywords: Unpack[AgentKeywords],
) -> RunResult:
    """The same agent with its own loop caps only (pyguard observes, never acts): the baseline. ``options``
    (:class:`pyguard.AgentOptions`) or keywords, as for :meth:`Guard.run`.

    Its outcome is honest too: an answer is ``succeeded``, the agent's own cap is ``expired``, an error ``failed``."""
    options = agent_options("run_unguarded", options, keywords)
    run_id = options.run_id or new_run_id()
    options = options.model_copy(update={"run_id": run_id})
    events: list[IterationEvent] = []
    res = run_agent(style, model, task, callback=events.append, guard=False, options=options)
    ending = ending_of_result(res)
    end = end_from_events(run_id, events, finish_arguments(ending, str(style)), wall_ms=res.wall_ms)
    start = RunStart(run_id=run_id, task_type=options.task_type, task=recorded_task(task), agent_style=str(style))
    return RunResult(record=RunRecord(start=start, events=events, end=end))


@contextmanager
def _progress(total: int, shown: bool) -> Iterator[Callable[[], None]]:
    """A rich progress bar on stderr for run_many (nothing when not ``shown``): yields its advance function."""
    if not shown:
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("runs", total=total)
        yield lambda: bar.advance(task)
