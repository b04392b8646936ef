"""The Guard API: run Java LangChain4j agents guarded by the engine, get an honest :class:`RunResult` and a trace.

Two ways in. pyguard's own agent styles (AiServices, an agentic loop, the explicit executor) around any LangChain4j
``ChatModel``::

    from pyguard.guard import Guard
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

import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyguard.decisions import Decision
from pyguard.ending import Ending, RunEnding, end_from_events, finish_arguments
from pyguard.errors import ConfigError, RunError
from pyguard.events import IterationEvent, Outcome, RunEnd, RunRecord, RunStart
from pyguard.limits import JAVA_INT_MAX, LANGCHAIN4J_ROUND_TRIPS, fail_safe_cap, loop_iterations
from pyguard.result import RunResult, mark_partial_usage
from pyguard.trace.writer import trace_file_name

if TYPE_CHECKING:  # pragma: no cover
    from pyguard.engine import Policy, PolicyConfig
    from pyguard.jvm.agents import BridgeResult, GuardedModel

__all__ = [
    "Guard",
    "GuardedRun",
    "run_unguarded",
    "trace_file_name",
    "recorded_task",
    "new_run_id",
    "DEFAULT_TASK",
    "DEFAULT_CALLBACK_TIMEOUT_MS",
]

DEFAULT_TASK = "Where is order 12345? Tell me its shipment status."

DEFAULT_CALLBACK_TIMEOUT_MS = 10_000
"""The default deadline of the guard's decision, per model call. An engine decision takes well under a millisecond
(benchmarks/RESULTS.md section 5), so 10 s is only ever reached by a hung engine; then the run goes on under the Java
fail-safe cap (outcome ``guard_error``), the late decision is discarded, and the caller of :meth:`Guard.run` gets its
result at most this long after the agent ends. ``callback_timeout_ms=0`` runs the decision on the agent's thread
instead (what that saves per model call: RESULTS section 3), but a hung engine then blocks the agent."""

Verifier = Callable[[str], bool]


class Guard:
    """A policy, a fail-safe and a place for traces; makes one :class:`GuardedRun` per run.

    ``config``: the engine's :class:`~pyguard.engine.PolicyConfig` (default policy when None).
    ``trace_dir``: write each run's JSONL trace there as it goes (:func:`trace_file_name`: ``<run_id>.jsonl`` for a
    plain id). A trace is never overwritten and never written through a symlink: a run id whose trace already exists
    there is refused (:class:`RunError`) when the run starts.
    ``trace_file_mode``: permissions of new trace files (default ``0o600``: traces hold prompts and tool output).
    ``max_model_calls``: the Java fail-safe cap per user turn; it holds even if Python fails. Default
    :func:`pyguard.limits.fail_safe_cap`: the most calls the policy allows in a turn plus a small margin (every limit
    and its default: :mod:`pyguard.limits`).
    ``callback_timeout_ms``: deadline for the engine's decision per model call (default
    :data:`DEFAULT_CALLBACK_TIMEOUT_MS`; 0: none, the decision then runs on the agent's thread and a hung engine blocks
    the agent).
    ``verifier``: optional ``answer -> bool``; a rejected answer makes the run ``failed``.
    ``telemetry``: optional :class:`pyguard.otel.GuardTelemetry` (``otel`` extra): each run also emits OpenTelemetry
    GenAI spans as it goes.
    """

    def __init__(
        self,
        config: PolicyConfig | None = None,
        *,
        trace_dir: str | Path | None = None,
        max_model_calls: int | None = None,
        callback_timeout_ms: int = DEFAULT_CALLBACK_TIMEOUT_MS,
        clock: Callable[[], float] = time.monotonic,
        verifier: Verifier | None = None,
        trace_file_mode: int = 0o600,
        telemetry: Any = None,
    ) -> None:
        from pyguard.engine import Policy, PolicyConfig

        if config is not None and not isinstance(config, PolicyConfig):
            raise ConfigError(f"config must be a pyguard.engine.PolicyConfig, not {type(config).__name__}")
        self.policy: Policy = Policy(config, clock=clock)
        self.config: PolicyConfig = self.policy.config
        self.trace_dir = Path(trace_dir) if trace_dir is not None else None
        if self.trace_dir is not None:
            self.trace_dir.mkdir(parents=True, exist_ok=True)
        if max_model_calls is None:
            max_model_calls = fail_safe_cap(self.config)
        if not _is_int(max_model_calls) or not 1 <= max_model_calls <= JAVA_INT_MAX:
            raise ConfigError(
                f"max_model_calls={max_model_calls!r} must be an integer from 1 to {JAVA_INT_MAX} (the Java fail-safe cap)"
            )
        if not _is_int(callback_timeout_ms) or not 0 <= callback_timeout_ms <= 86_400_000:
            raise ConfigError(
                f"callback_timeout_ms={callback_timeout_ms!r} must be 0 (no deadline) or a number of milliseconds up to"
                " 86400000 (a day)"
            )
        if not _is_int(trace_file_mode) or not 0 <= trace_file_mode <= 0o777:
            raise ConfigError(f"trace_file_mode={trace_file_mode!r} must be permission bits such as 0o600")
        self.max_model_calls = max_model_calls
        self.callback_timeout_ms = callback_timeout_ms
        self.trace_file_mode = trace_file_mode
        self.verifier = verifier
        self._active: set[GuardedRun] = set()
        self._active_lock = threading.Lock()
        self.telemetry = telemetry

    @classmethod
    def from_toml(cls, path: str | Path, **kwargs: Any) -> Guard:
        """A guard whose policy comes from a TOML file or a pyproject.toml's ``[tool.pyguard]``."""
        from pyguard.engine import PolicyConfig

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

    def run(
        self,
        style: str,
        model: Any,
        task: str | Sequence[str],
        *,
        tools: Any = None,
        task_type: str | None = None,
        run_id: str | None = None,
        max_loop_iterations: int | None = None,
        max_tool_calling_round_trips: int = LANGCHAIN4J_ROUND_TRIPS,
        exit_when_answer_contains: str | None = None,
        system_message: str | None = None,
        max_iterations: int | None = None,
    ) -> RunResult:
        """Run ``task`` on a pyguard-built agent of ``style`` ('aiservices', 'agentic', 'executor') around ``model``
        (any Java LangChain4j ChatModel) with ``tools`` (see :func:`pyguard.jvm.tool_set`). Never raises for the run
        itself: its outcome says how it ended. A list of user messages is a conversation in one run (aiservices).
        ``max_loop_iterations`` and ``max_tool_calling_round_trips`` are the agent's own loop caps
        (:mod:`pyguard.limits`; ``max_iterations`` is the deprecated name of the first)."""
        from pyguard.jvm import build_agent, run_built

        loop_cap = loop_iterations(max_loop_iterations, max_iterations, "Guard.run")

        if str(style) == "aiservices":  # pyguard's AiServices agent keeps its conversation: escalations can resume
            return self.run_streaming(
                model,
                task,
                tools=tools,
                task_type=task_type,
                run_id=run_id,
                max_tool_calling_round_trips=max_tool_calling_round_trips,
                system_message=system_message,
            )
        run = self.start_run(task=recorded_task(task), task_type=task_type, run_id=run_id, agent_style=str(style))
        guarded = run.guarded_model(model)
        try:
            agent = build_agent(
                style,
                guarded,
                tools=tools,
                max_loop_iterations=loop_cap,
                max_tool_calling_round_trips=max_tool_calling_round_trips,
                exit_when_answer_contains=exit_when_answer_contains,
                system_message=system_message,
            )
        except BaseException:
            run.abandon()
            raise
        res = run.interruptible(lambda: run_built(agent, task, guarded))
        return run.finish_bridge(res)

    def run_streaming(
        self,
        model: Any,
        task: str | Sequence[str],
        *,
        tools: Any = None,
        task_type: str | None = None,
        run_id: str | None = None,
        max_tool_calling_round_trips: int = LANGCHAIN4J_ROUND_TRIPS,
        system_message: str | None = None,
        on_partial: Callable[[str], None] | None = None,
        agent: str | None = None,
    ) -> RunResult:
        """Run ``task`` on pyguard's AiServices agent around a LangChain4j ``StreamingChatModel`` (the agent's method
        returns a ``TokenStream``; ``on_partial`` gets each text chunk as it streams) or a ``ChatModel``; guarded as
        :meth:`run` is: one event per completed model call, decisions applied before the next. An escalated run's
        result carries a resumable :class:`pyguard.escalation.EscalationHandle` (``agent`` names the agent in it).
        See :mod:`pyguard.conversation`."""
        from pyguard.conversation import run_chat

        return run_chat(
            self,
            model,
            task,
            tools=tools,
            task_type=task_type,
            run_id=run_id,
            max_tool_calling_round_trips=max_tool_calling_round_trips,
            system_message=system_message,
            on_partial=on_partial,
            agent=agent,
        )

    def resume(
        self,
        handle: Any,
        message: str,
        model: Any,
        *,
        tools: Any = None,
        on_partial: Callable[[str], None] | None = None,
        agent: str | None = None,
    ) -> RunResult:
        """Resume an escalated run from its :class:`pyguard.escalation.EscalationHandle` (or its JSON): ``message``,
        the human's answer, is the next user turn of the same agent rebuilt around ``model`` and ``tools``, with the
        ``resume_budget`` of this guard's policy. Raises :class:`pyguard.errors.HandleError` for a bad or stale
        handle. See :func:`pyguard.conversation.resume_run`."""
        from pyguard.conversation import resume_run

        return resume_run(self, handle, message, model, tools=tools, on_partial=on_partial, agent=agent)

    # -- cancelling ------------------------------------------------------------------------------------------------

    @property
    def active_runs(self) -> list[GuardedRun]:
        """The runs of this guard started and not yet finished."""
        with self._active_lock:
            return list(self._active)

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
        from pyguard.jvm import scripted_model, start_openai_server

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
        bar = _progress(len(jobs)) if progress else None
        with ThreadPoolExecutor(max_workers=threads) as pool:
            futures = {pool.submit(job, self): i for i, job in enumerate(jobs)}
            for fut in futures:
                results[futures[fut]] = fut.result()
                if bar is not None:
                    bar.advance()
        if bar is not None:
            bar.close()
        return [r for r in results if r is not None]


class GuardedRun:
    """One run under the guard: its engine session, its Java guarded model, its trace."""

    def __init__(
        self,
        guard: Guard,
        *,
        run_id: str,
        task: str | None,
        task_type: str | None,
        agent_style: str | None,
        parent_run_id: str | None = None,
    ):
        self.guard = guard
        self.run_id = run_id
        self.task_type = task_type
        self.session = guard.policy.new_run(run_id, task_type)
        self.start = RunStart(
            run_id=run_id,
            task_type=task_type,
            task=task,
            agent_style=agent_style,
            policy=guard.config.model_dump(mode="json"),
            started_at_ms=time.time() * 1000.0,
            parent_run_id=parent_run_id,
        )
        self.events: list[IterationEvent] = []
        self.decisions: list[Decision] = []
        self._lock = threading.Lock()
        """Guards events, decisions, the trace writer and the result: held only briefly, never across the engine."""
        self._engine_lock = threading.Lock()
        """Held while the engine decides (the session is single-threaded)."""
        self._guarded: GuardedModel | None = None
        self._result: RunResult | None = None
        self._cancelled: str | None = None
        self._abandoned_at: int | None = None
        self._java_note: str | None = None
        self.trace_path: Path | None = None
        self._writer = None
        if guard.trace_dir is not None:
            from pyguard.errors import TraceFormatError
            from pyguard.trace import TraceWriter

            self.trace_path = guard.trace_dir / trace_file_name(run_id)
            try:
                self._writer = TraceWriter(self.trace_path, mode="x", file_mode=guard.trace_file_mode)
            except TraceFormatError as exc:
                raise RunError(f"run {run_id!r} cannot start: {exc}") from None
            self._writer.start(self.start)
        with guard._active_lock:
            guard._active.add(self)
        self._spans = guard.telemetry.start_run(self.start) if guard.telemetry is not None else None

    # The Java sensor calls this once per model call (through pyguard.jvm's callback adapter).
    def observe(self, event: IterationEvent) -> Decision | None:
        """Record ``event``, ask the engine, record and return its decision. With a deadline, the decision is recorded
        only if Java still takes it (:meth:`_claim`): a decision that comes too late is discarded on both sides."""
        with self._lock:
            if self._result is not None or self._abandoned_at is not None:
                return None  # the run has ended, or its guard was given up: nothing more is recorded
            self.events.append(event)
            if self._writer is not None:
                self._writer.iteration(event)
        with self._engine_lock:
            if self._result is not None:
                return None
            decision = self.session.observe(event)
        with self._lock:
            if self._result is not None:
                return None  # the run ended while the engine decided: discarded
            if not self._claim(event.index):
                self._abandoned_at = event.index
                return None
            self.decisions.append(decision)
            if self._writer is not None:
                self._writer.decision(self.run_id, decision)
            if self._spans is not None:
                self._spans.iteration(event, decision)
            return decision

    def _claim(self, index: int) -> bool:
        """True when Java will apply the decision about event ``index`` (always, without a deadline)."""
        if self.guard.callback_timeout_ms <= 0 or self._guarded is None:
            return True
        return self._guarded.claim(index)

    def guarded_model(self, model: Any) -> GuardedModel:
        """The :class:`pyguard.jvm.GuardedModel` of this run around ``model`` (made once)."""
        from pyguard.jvm import guard_model

        return self._guard_once(guard_model, model)

    def guarded_streaming_model(self, model: Any) -> GuardedModel:
        """The :class:`pyguard.jvm.GuardedModel` of this run around a Java ``StreamingChatModel`` (made once): its
        ``.java`` is a ``GuardedStreamingChatModel``."""
        from pyguard.jvm.streaming import guard_streaming_model

        return self._guard_once(guard_streaming_model, model)

    def fail_safe_calls(self) -> int:
        """The Java fail-safe cap of this run's guarded model (:mod:`pyguard.limits`): the guard's ``max_model_calls``."""
        return self.guard.max_model_calls

    def _guard_once(self, wrap: Callable[..., GuardedModel], model: Any) -> GuardedModel:
        """This run's one guarded model, made by ``wrap`` around ``model`` the first time (a run wraps one model)."""
        if self._guarded is None:
            self._guarded = wrap(
                model,
                self.observe,
                run_id=self.run_id,
                task_type=self.task_type,
                max_model_calls=self.fail_safe_calls(),
                callback_timeout_ms=self.guard.callback_timeout_ms,
                keep_events=False,
            )
            if self._cancelled is not None:  # cancel() came before wrap(): the run is stopped before its first call
                self._guarded.request_stop(Outcome.CANCELLED, self._cancelled, "cancel")
        elif not self._guarded.wraps(model):
            raise RunError(f"run {self.run_id!r} already wraps another model: start a new run for a new model")
        return self._guarded

    def wrap_streaming(self, model: Any) -> Any:
        """A Java ``StreamingChatModel`` (pyguard's ``GuardedStreamingChatModel``) around ``model``: build your
        streaming agent with it. Wire ``TokenStream.beforeToolExecution(guarded::beforeToolExecution)`` where you can,
        so a stop keeps the last response's tools from running."""
        return self.guarded_streaming_model(model).java

    def wrap(self, model: Any) -> Any:
        """A Java ``ChatModel`` (pyguard's ``GuardedChatModel``) around ``model``: build your agent with it.

        For an AiServices agent, also give its builder :meth:`before_tool_execution`, so a stop keeps the last
        response's tools from running (without it, they run and the next model call is refused)."""
        return self.guarded_model(model).java

    def before_tool_execution(self) -> Any:
        """The guard's tool hook, typed only with LangChain4j's own interfaces: a Java
        ``java.util.function.Consumer<dev.langchain4j.service.tool.BeforeToolExecution>``. Your Java factory takes it
        as that type and passes it to ``AiServices.builder(...).beforeToolExecution(hook)``: it needs no pyguard jar to
        compile, and a stop keeps the tools of the last response from running. Call :meth:`wrap` first."""
        return self._wrapped("before_tool_execution").before_tool_execution()

    def after_tool_execution(self) -> Any:
        """A Java ``Consumer<dev.langchain4j.service.tool.ToolExecution>`` for ``afterToolExecution(...)``: counts the
        tools that ran (``toolExecutions`` of the run's Java counters). Call :meth:`wrap` first."""
        return self._wrapped("after_tool_execution").after_tool_execution()

    def _wrapped(self, what: str) -> GuardedModel:
        if self._guarded is None:
            raise RunError(f"run {self.run_id!r}: call run.wrap(model) before run.{what}() (the hook is the model's)")
        return self._guarded

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run your agent (``fn``) and end this run from what happened; returns ``fn``'s value, or None when the
        guard stopped the run (read :attr:`result`). Java exceptions other than a guard stop end the run ``failed``."""
        from pyguard.jvm.ending import ending_of_exception, ending_of_value

        try:
            value = self.interruptible(fn)
        except Exception as exc:  # a Java exception arrives as a Python exception (JPype)
            self.end(ending_of_exception(exc, last_text=self._last_text()))
            return None
        self.end(ending_of_value(value))
        return value

    def cancel(self, reason: str = "cancelled from Python") -> None:
        """End the run from any thread: the next model call or tool execution stops it; outcome ``cancelled``.
        Called before :meth:`wrap`, the run stops before its first model call."""
        self._cancelled = reason
        if self._guarded is not None:
            self._guarded.request_stop(Outcome.CANCELLED, reason, "cancel")

    @property
    def cancelled(self) -> bool:
        return self._cancelled is not None

    def interruptible(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` (the agent) so that Ctrl-C cancels this run instead of killing it half-written: see
        :func:`pyguard.interrupts.run_interruptibly`. On Ctrl-C the run ends ``cancelled`` (footer written), then the
        ``KeyboardInterrupt`` goes on to the caller."""
        from pyguard.interrupts import run_interruptibly

        return run_interruptibly(
            fn,
            name=f"pyguard-run-{self.run_id}",
            on_interrupt=lambda: self.cancel("interrupted (Ctrl-C)"),
            on_give_up=lambda: self._finish(cancelled=True, answer=self._last_text()),
        )

    @property
    def result(self) -> RunResult:
        if self._result is None:
            raise RunError(f"run {self.run_id!r} has not finished: run your agent inside GuardedRun.call(...) first")
        return self._result

    def __enter__(self) -> GuardedRun:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if self._result is None:
            self._finish(error=f"{exc_type.__name__}: {exc}" if exc_type else "the run ended without GuardedRun.call()")

    # -- ending ----------------------------------------------------------------------------------------------------

    def finish_bridge(self, res: BridgeResult) -> RunResult:
        """End this run from a :class:`pyguard.jvm.BridgeResult` (a pyguard-built agent's run)."""
        from pyguard.jvm.ending import ending_of_result

        return self.end(ending_of_result(res))

    def abandon(self) -> None:
        if self._result is None:
            self._finish(error="the agent could not be built")

    def end(self, ending: RunEnding) -> RunResult:
        """End this run from how its agent ended (:mod:`pyguard.jvm.ending`), through :func:`pyguard.ending.finish_arguments`; the
        engine's ``RunSession.finish`` then settles the outcome (a STOP it decided keeps its own)."""
        if ending.guard_failures:
            self._java_note = ending.guard_failures
        if ending.ending is Ending.STOPPED:
            stopped = False  # by the engine's own decision? (not when its decision was discarded, or it is stuck)
            if self._abandoned_at is None and self._engine_lock.acquire(timeout=self._deadline_s()):
                try:
                    stopped = self.session.stopped is not None
                finally:
                    self._engine_lock.release()
            if stopped:
                return self._finish(answer=ending.last_text)
            if self._cancelled is not None:
                return self._finish(cancelled=True, answer=ending.last_text)
        return self._finish(**finish_arguments(ending, self.start.agent_style))

    def _finish(
        self,
        *,
        answer: str | None = None,
        error: str | None = None,
        cancelled: bool = False,
        guard_error: str | None = None,
        expired: str | None = None,
    ) -> RunResult:
        # Wait for an engine decision in progress at most the callback deadline: Java has given up on it by then.
        engine = self._engine_lock.acquire(timeout=self._deadline_s())
        try:
            with self._lock:
                if self._result is not None:
                    return self._result
                verified = None
                if answer is not None and error is None and expired is None and self.guard.verifier is not None:
                    verified = bool(self.guard.verifier(answer))
                if engine and self._abandoned_at is None:
                    end = self.session.finish(
                        answer=answer,
                        error=error,
                        verified=verified,
                        cancelled=cancelled,
                        guard_error=guard_error,
                        expired=expired,
                    )
                else:
                    end = end_from_events(
                        self.run_id,
                        self.events,
                        answer=answer,
                        error=error,
                        verified=verified,
                        cancelled=cancelled,
                        guard_error=guard_error,
                        expired=expired,
                        guard_failed=self._guard_failure(),
                    )
                self._result = self._result_from(end)
                if self._guarded is not None:
                    self._guarded.release()  # free the run's state now: Java -> callback -> this run is a cycle
                return self._result
        finally:
            if engine:
                self._engine_lock.release()
            with self.guard._active_lock:
                self.guard._active.discard(self)

    def _guard_failure(self) -> str:
        """Why the engine could not finish the run: its decision missed the deadline, or it is still busy."""
        late = (
            f"the engine's decision about model call {self._abandoned_at} missed the callback deadline of"
            f" {self.guard.callback_timeout_ms} ms and was discarded"
            if self._abandoned_at is not None
            else f"the engine was still deciding {self.guard.callback_timeout_ms} ms after the run ended"
        )
        return late + (f"; Java saw {self._java_note}" if self._java_note else "")

    def _deadline_s(self) -> float:
        ms = self.guard.callback_timeout_ms
        return ms / 1000.0 if ms > 0 else -1

    def _result_from(self, end: RunEnd) -> RunResult:
        end = mark_partial_usage(end, self.events)
        if self._writer is not None:
            self._writer.end(end)
            self._writer.close()
        if self._spans is not None:
            self._spans.end(end)
        record = RunRecord(start=self.start, events=list(self.events), end=end)
        return RunResult(
            record=record,
            decisions=tuple(self.decisions),
            gains=tuple(self.session.gains),
            trace_path=None if self.trace_path is None else str(self.trace_path),
        )

    def _last_text(self) -> str | None:
        for event in reversed(self.events):
            if event.text:
                return event.text
        return None


def run_unguarded(
    style: str,
    model: Any,
    task: str | Sequence[str],
    *,
    tools: Any = None,
    task_type: str | None = None,
    run_id: str | None = None,
    max_loop_iterations: int | None = None,
    max_tool_calling_round_trips: int = LANGCHAIN4J_ROUND_TRIPS,
    max_iterations: int | None = None,
) -> RunResult:
    """The same agent with its own loop caps only (pyguard observes, never acts): the baseline.

    Its outcome is honest too: an answer is ``succeeded``, the agent's own cap is ``expired``, an error ``failed``."""
    from pyguard.jvm import run_agent
    from pyguard.jvm.ending import ending_of_result

    run_id = run_id or new_run_id()
    events: list[IterationEvent] = []
    res = run_agent(
        style,
        model,
        task,
        callback=events.append,
        run_id=run_id,
        task_type=task_type,
        tools=tools,
        guard=False,
        max_loop_iterations=loop_iterations(max_loop_iterations, max_iterations, "run_unguarded"),
        max_tool_calling_round_trips=max_tool_calling_round_trips,
    )
    ending = ending_of_result(res)
    end = end_from_events(run_id, events, **finish_arguments(ending, str(style)), wall_ms=res.wall_ms)
    start = RunStart(run_id=run_id, task_type=task_type, task=recorded_task(task), agent_style=str(style))
    return RunResult(record=RunRecord(start=start, events=events, end=end))


def recorded_task(task: str | Sequence[str]) -> str | None:
    """The task a trace records: the message itself, or a conversation's first user message (the others arrive as
    user observations of the events)."""
    if isinstance(task, str):
        return task
    return next(iter(task), None)


def new_run_id() -> str:
    """A fresh run id: 12 random hexadecimal characters."""
    return uuid.uuid4().hex[:12]


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _progress:
    """A rich progress bar on stderr for run_many."""

    def __init__(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import Progress

        self._p = Progress(console=Console(stderr=True), transient=True)
        self._p.start()
        self._task = self._p.add_task("runs", total=total)

    def advance(self) -> None:
        self._p.advance(self._task)

    def close(self) -> None:
        self._p.stop()
