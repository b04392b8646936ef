"""One guarded run's lifecycle: its engine session, its Java guarded model, its trace, and how it ends.

A :class:`GuardedRun` is what :meth:`pyguard.live.guard.Guard.start_run` opens, what :mod:`pyguard.live.conversation` and
:mod:`pyguard.live.agent_guard` run agents in, and what turns how an agent ended (:mod:`pyguard.jvm.ending`) into the run's
one outcome (:func:`pyguard.base.ending.finish_arguments`, the engine's ``RunSession.finish``, or
:func:`pyguard.base.ending.end_from_events` when the engine could not finish it). It sits below the Guard: it knows the guard only as a :class:`RunHost` (its policy, fail-safe,
trace place and telemetry), so nothing here imports :mod:`pyguard.live.guard`.

Three modules hold it: this one (the run observed, its Java model, :meth:`GuardedRun.drive`), :mod:`pyguard.live.run_finish`
(how the run ends, :class:`pyguard.live.run_finish.RunFinisher`) and :mod:`pyguard.live.run_host` (what it needs of its guard, the
names they share, re-exported here).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyguard.base.decisions import Action, Decision
from pyguard.base.ending import Causes
from pyguard.base.errors import RunError, TraceFormatError
from pyguard.base.events import IterationEvent, Observation, Outcome, RunStart
from pyguard.jvm import guard_model
from pyguard.jvm.ending import ending_of_exception, ending_of_result, ending_of_value, raise_if_stopped
from pyguard.jvm.otel_context import java_traceparent
from pyguard.jvm.streaming import guard_streaming_model
from pyguard.jvm.tool_limits import limit_run_tools, limited_tools
from pyguard.live.interrupts import run_interruptibly
from pyguard.live.on_stop import STOP_MESSAGE, WRAP_UP, on_stop_for, set_up_stops, stop_message
from pyguard.live.run_finish import RunFinisher
from pyguard.live.run_host import (
    ActiveRuns,
    OnStop,
    Reads,
    RunHost,
    Verifier,
    new_run_id,
    recorded_task,
    tell_no_conversation,
)
from pyguard.result import RunResult
from pyguard.trace.policy_file import dumped_policy
from pyguard.trace.writer import open_run_trace, trace_file_name

if TYPE_CHECKING:  # pragma: no cover
    from pyguard.engine.config import Mode
    from pyguard.jvm.agents import GuardedModel, WrapUpRecord

__all__ = [
    "STOP_MESSAGE",
    "WRAP_UP",
    "ActiveRuns",
    "OnStop",
    "Reads",
    "RunHost",
    "Verifier",
    "new_run_id",
    "recorded_task",
]


class GuardedRun(RunFinisher):
    """One run under the guard: its engine session, its Java guarded model, its trace."""

    wraps_up = True
    """With the guard's ``on_stop="answer"``, a stop of this run is answered by a wrap-up (run trees: no)."""
    in_conversation = False
    """A turn of a kept conversation (an attached agent's): ``[conversation]`` budgets hold for it."""

    def __init__(
        self,
        guard: RunHost,
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
        if not self.in_conversation:
            tell_no_conversation(guard, run_id)
        self.session = guard.policy.new_run(run_id, task_type)
        self.start = RunStart(
            run_id=run_id,
            task_type=task_type,
            task=task,
            agent_style=agent_style,
            policy=dumped_policy(guard.config),  # dumped once per config: runs share it
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
        self.agent_round_trips: int | None = None
        """The agent's own cap on tool-calling round trips per user turn (LangChain4j's), when known: with
        ``on_stop="answer"`` its end gets the wrap-up too. Set it before the model is wrapped."""
        self._wrap_up: WrapUpRecord | None = None
        self._answered = False
        self.counts_executions = False
        self.on_stop: OnStop = on_stop_for(guard, task_type)
        """What a stop of this run does (the guard's explicit ``on_stop``, else the policy's for its task type)."""
        self.mode: Mode = guard.config.mode_for(task_type)
        """How this run acts on the engine's decisions (``PolicyConfig.mode``, per task type)."""
        self.observed_stop: Decision | None = None
        """In observe or reflect mode: the stop the engine decided (and the guard did not act on), if any."""
        """True when the agent's loop reports the tools that ran (LangChain4j's after-tool hook, pyguard's agents):
        the footer's ``tool_calls_executed`` then holds the count (None otherwise)."""
        self.on_end: Callable[[RunResult], None] | None = None
        """Called once with the run's result when it ends, however it ends (an attached agent records its turns)."""
        self.trace_path: Path | None = None
        self._writer = None
        if guard.trace_dir is not None:
            self.trace_path = guard.trace_dir / trace_file_name(run_id)
            try:  # a tolerant writer: once started, a record it cannot write degrades the trace, never the run
                self._writer = open_run_trace(self.trace_path, self.start, file_mode=guard.trace_file_mode)
            except TraceFormatError as exc:
                raise RunError(f"run {run_id!r} cannot start: {exc}") from None
        guard.active.add(self)
        self._spans = None
        if guard.telemetry is not None:  # started on the caller's thread: a Java span current here is the parent
            self._spans = guard.telemetry.start_run(self.start, caller_traceparent=java_traceparent())

    # The Java sensor calls this once per model call (through pyguard.jvm's callback adapter).
    def observe(self, event: IterationEvent) -> Decision | None:
        """Record ``event``, ask the engine, record and return its decision. With a deadline, the decision is recorded
        only if Java still takes it (:meth:`_claim`): a decision that comes too late is discarded on both sides."""
        with self._lock:
            if self._result is not None or self._abandoned_at is not None:
                return None  # the run has ended, or its guard was given up: nothing more is recorded
            self.events.append(event)
            if self.observed_stop is not None:
                self._trace_iterations()
                return None  # observe/reflect mode: the engine stopped the run here, the run goes on (recorded)
        with self._engine_lock:
            if self._result is not None:
                return None
            decision = self.session.observe(event)
        with self._lock:
            if self._result is not None:
                return None  # the run ended while the engine decided: discarded (the footer's writer wrote the event)
            claimed = self._claim(event.index)
            self._trace_iterations()  # decided first, written after: the trace's time is never the decision's
            if not claimed:
                self._abandoned_at = event.index
                return None
            self.decisions.append(decision)
            if self._writer is not None:
                self._writer.decision(self.run_id, decision)
            if self._spans is not None:
                self._spans.iteration(event, decision)
            return self._acted(decision)

    # The guarded model calls this with call ``index``'s tool results, before the next call is sent.
    def observe_results(self, index: int, observations: list[Observation]) -> Decision | None:
        """Ask the engine about call ``index``'s tool results before the next call is sent
        (``RunSession.observe_results``), record and return its decision, claimed as :meth:`observe` does."""
        with self._lock:
            if self._result is not None or self._abandoned_at is not None or self.observed_stop is not None:
                return None
        with self._engine_lock:
            if self._result is not None or self.session.ended:
                return None
            decision = self.session.observe_results(index, observations)
        with self._lock:
            if self._result is not None:
                return None
            if not self._claim(index):
                self._abandoned_at = index
                return None
            if decision.action is Action.CONTINUE:
                return None  # nothing to act on or record: the call's own decision stands
            # one decision per model call: the one on its results, made after the one on its response, replaces it
            if self.decisions and self.decisions[-1].iteration == index:
                self.decisions[-1] = decision
            else:
                self.decisions.append(decision)
            if self._writer is not None:
                self._writer.decision(self.run_id, decision)
            if self._spans is not None:
                self._spans.results(index, decision)
            return self._acted(decision)

    def _acted(self, decision: Decision) -> Decision:
        """What Java is told to do about ``decision`` in this run's :attr:`mode` (the recorded decision is the
        engine's, in every mode): enforce, all of it; reflect, reflections, and a stop becomes one last reflection;
        observe, nothing (a continue that still carries the iteration and turn)."""
        if self.mode == "enforce":
            return decision
        if decision.stops:
            self.observed_stop = decision
        if self.mode == "reflect" and decision.action is not Action.CONTINUE:
            text = decision.reflection or (
                f"You appear to be stuck ({decision.reason or decision.rule}). Change your approach, or give your"
                " final answer now from what you have found."
            )
            return decision.model_copy(update={"action": Action.REFLECT, "reflection": text, "outcome": None})
        return decision.model_copy(update={"action": Action.CONTINUE, "reflection": None, "outcome": None})

    def _claim(self, index: int) -> bool:
        """True when Java will apply the decision about event ``index`` (always, without a deadline)."""
        if self.guard.callback_timeout_ms <= 0 or self._guarded is None:
            return True
        return self._guarded.claim(index)

    def guarded_model(self, model: Any) -> GuardedModel:
        """The :class:`pyguard.jvm.GuardedModel` of this run around ``model`` (made once)."""
        return self._guard_once(guard_model, model)

    def guarded_streaming_model(self, model: Any) -> GuardedModel:
        """The :class:`pyguard.jvm.GuardedModel` of this run around a Java ``StreamingChatModel`` (made once): its
        ``.java`` is a ``GuardedStreamingChatModel``."""
        return self._guard_once(guard_streaming_model, model)

    def fail_safe_calls(self) -> int:
        """The Java fail-safe cap of this run's guarded model (:mod:`pyguard.base.limits`): the guard's ``fail_safe_calls``."""
        return self.guard.fail_safe_calls

    def _guard_once(self, wrap: Callable[..., GuardedModel], model: Any) -> GuardedModel:
        """This run's one guarded model, made by ``wrap`` around ``model`` the first time (a run wraps one model)."""
        if self._guarded is None:
            try:
                self._guarded = wrap(
                    model,
                    self.observe,
                    run_id=self.run_id,
                    task_type=self.task_type,
                    max_model_calls=self.fail_safe_calls(),
                    callback_timeout_ms=self.guard.callback_timeout_ms,
                    keep_events=False,
                    results_fn=self.observe_results if self.session.config.judge_results_early else None,
                )
            except BaseException:
                self.abandon()  # no run is left open: its model could not be guarded
                raise
            if self.wraps_up:
                set_up_stops(self, self._guarded)
            if self.guard.config.caps.tool_limits:  # with their exits, an exit end's stop message, the run's mode
                limit_run_tools(
                    self._guarded.java, self.guard.config.caps.tool_limits, stop_message(self.guard), self.mode
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

    def tools(self, *objects: Any) -> Any:
        """Your tool objects (``@Tool`` methods) as a Java ``Map<ToolSpecification, ToolExecutor>`` whose executors
        keep the policy's per-tool limits (``[caps.tool_limits]``): a call over its tool's limit is not run and the
        model reads why. Build your AiServices agent with ``.tools(map)``. Call :meth:`wrap` first."""
        return limited_tools(self._wrapped("tools").java, objects)

    def after_tool_execution(self) -> Any:
        """A Java ``Consumer<dev.langchain4j.service.tool.ToolExecution>`` for ``afterToolExecution(...)``: counts the
        tools that ran (the footer's ``tool_calls_executed``; None without this hook). Call :meth:`wrap` first."""
        self.counts_executions = True
        return self._wrapped("after_tool_execution").after_tool_execution()

    def _wrapped(self, what: str) -> GuardedModel:
        if self._guarded is None:
            raise RunError(f"run {self.run_id!r}: call run.wrap(model) before run.{what}() (the hook is the model's)")
        return self._guarded

    def drive(
        self,
        execute: Callable[[Any], Any],
        *,
        build: Callable[[], Any] | None = None,
        reads: Reads = "bridge",
    ) -> RunResult:
        """The one lifecycle of a guarded run, every entry point's (:meth:`Guard.run <pyguard.live.guard.Guard.run>`,
        conversations and escalation's resume, :meth:`Guard.agent <pyguard.live.guard.Guard.agent>`, run trees,
        :meth:`call`): ``build()`` the agent (the run is abandoned if that fails: no run is left open), run
        ``execute(agent)`` interruptibly (Ctrl-C cancels the run, :meth:`interruptible`), then end the run once from
        how the agent ended: a pyguard-built agent's :class:`pyguard.jvm.BridgeResult` (``reads="bridge"``), or a
        returned value or raised exception (``reads="value"``: your agent's ``chat()``). Returns the run's result;
        an exception other than the agent's own ends the run and goes on to the caller."""
        try:
            agent = None if build is None else build()
        except BaseException:
            self.abandon()
            raise
        try:
            value = self.interruptible(lambda: execute(agent))
        except Exception as exc:  # a Java exception arrives as a Python exception (JPype)
            if reads == "value":
                return self.end(ending_of_exception(exc, last_text=self.last_text()))
            self._finish(Causes(failed=f"the run failed: {type(exc).__name__}: {exc}", answer=self.last_text()))
            raise
        except BaseException:  # Ctrl-C: on the main thread the run has ended cancelled already (interruptible)
            self._finish(Causes(cancelled=True, answer=self.last_text()))
            raise
        if reads == "value":
            return self.end(ending_of_value(value))
        self.counts_executions = True  # a pyguard-built agent's loop reports the tools that ran
        return self.end(ending_of_result(value))

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run your agent (``fn``), end this run from what happened (:meth:`drive`); return ``fn``'s value, or after
        a stop the wrap-up's answer (``on_stop="answer"``) or None (:attr:`result`); ``on_stop="raise"``: raise Java's
        ``GuardStopException`` (:func:`pyguard.jvm.ending.raise_if_stopped`). Other Java exceptions end it ``failed``."""
        returned: list[Any] = []
        raised: list[BaseException] = []

        def execute(_: Any) -> Any:
            try:
                returned.append(fn())
            except Exception as exc:  # a Java exception arrives as a Python one (JPype)
                raised.append(exc)
                raise
            return returned[0]

        result = self.drive(execute, reads="value")
        if returned:
            return returned[0]
        raise_if_stopped(self, raised[0] if raised else None)
        return result.answer if result.end.answer_source in ("wrap_up", "stop_message") else None

    @property
    def guarded(self) -> GuardedModel:
        """This run's guarded model (made by :meth:`guarded_model` or :meth:`guarded_streaming_model`)."""
        return self._wrapped("guarded")

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
        :func:`pyguard.live.interrupts.run_interruptibly`. On Ctrl-C the run ends ``cancelled`` (footer written), then the
        ``KeyboardInterrupt`` goes on to the caller."""
        return run_interruptibly(
            fn,
            name=f"pyguard-run-{self.run_id}",
            on_interrupt=lambda: self.cancel("interrupted (Ctrl-C)"),
            on_give_up=lambda: self._finish(Causes(cancelled=True, answer=self.last_text())),
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
            self._finish(
                Causes(
                    failed="the run failed: "
                    + (f"{exc_type.__name__}: {exc}" if exc_type else "the run ended without GuardedRun.call()")
                )
            )
