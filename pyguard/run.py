"""One guarded run's lifecycle: its engine session, its Java guarded model, its trace, and how it ends.

A :class:`GuardedRun` is what :meth:`pyguard.guard.Guard.start_run` opens, what :mod:`pyguard.conversation` and
:mod:`pyguard.agent_guard` run agents in, and what turns how an agent ended (:mod:`pyguard.jvm.ending`) into the run's
one outcome (:func:`pyguard.ending.finish_arguments`, the engine's ``RunSession.finish``, or
:func:`pyguard.ending.end_from_events` when the engine could not finish it). It sits below the Guard: it knows the guard only as a :class:`RunHost` (its policy, fail-safe,
trace place and telemetry), so nothing here imports :mod:`pyguard.guard`.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pyguard.decisions import Action, Decision
from pyguard.ending import (
    Causes,
    Ending,
    EndNotes,
    RunEnding,
    end_from_events,
    finish_arguments,
    token_totals,
)
from pyguard.errors import RunError
from pyguard.events import IterationEvent, Observation, Outcome, RunEnd, RunRecord, RunStart
from pyguard.jvm.ending import billed_tokens, ending_of_wrap_up
from pyguard.result import RunResult
from pyguard.trace.policy_file import dumped_policy
from pyguard.trace.writer import trace_file_name

if TYPE_CHECKING:  # pragma: no cover
    from pyguard.engine import Policy, PolicyConfig
    from pyguard.engine.config import Mode
    from pyguard.jvm.agents import GuardedModel, WrapUpRecord

__all__ = [
    "ActiveRuns",
    "GuardedRun",
    "Reads",
    "RunHost",
    "Verifier",
    "new_run_id",
    "recorded_task",
]

Verifier = Callable[[str], bool]

Reads = Literal["bridge", "value"]
"""How :meth:`GuardedRun.drive` reads the agent's end: a pyguard-built agent's ``BridgeResult``, or a value/exception."""

OnStop = Literal["answer", "raise"]
"""What a guarded run does when it is stopped: ``answer`` (one last model call with no tools, :data:`WRAP_UP`, so the
agent still returns an answer; the outcome still says ``stalled``/``expired``) or ``raise`` (the agent's call raises
the Java ``GuardStopException``)."""

WRAP_UP = (
    "Stop here: {reason}. Do not call any tool. Give your best final answer to the user's request now, from what you"
    " have found so far, and say plainly what you could not find out."
)
"""The wrap-up instruction (``{reason}``: why the run was stopped), sent as a user message with no tools offered."""


class ActiveRuns:
    """The runs of one guard started and not yet finished (thread-safe)."""

    def __init__(self) -> None:
        self._runs: set[GuardedRun] = set()
        self._lock = threading.Lock()

    def add(self, run: GuardedRun) -> None:
        with self._lock:
            self._runs.add(run)

    def discard(self, run: GuardedRun) -> None:
        with self._lock:
            self._runs.discard(run)

    def snapshot(self) -> list[GuardedRun]:
        with self._lock:
            return list(self._runs)


class RunHost(Protocol):
    """What a run needs of its guard (:class:`pyguard.guard.Guard` is one)."""

    policy: Policy
    config: PolicyConfig
    trace_dir: Path | None
    trace_file_mode: int
    fail_safe_calls: int
    callback_timeout_ms: int
    verifier: Verifier | None
    telemetry: Any
    active: ActiveRuns
    on_stop: OnStop


class GuardedRun:
    """One run under the guard: its engine session, its Java guarded model, its trace."""

    wraps_up = True
    """With the guard's ``on_stop="answer"``, a stop of this run is answered by a wrap-up (run trees: no)."""

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
            from pyguard.errors import TraceFormatError
            from pyguard.trace.writer import open_run_trace

            self.trace_path = guard.trace_dir / trace_file_name(run_id)
            try:  # a tolerant writer: once started, a record it cannot write degrades the trace, never the run
                self._writer = open_run_trace(self.trace_path, self.start, file_mode=guard.trace_file_mode)
            except TraceFormatError as exc:
                raise RunError(f"run {run_id!r} cannot start: {exc}") from None
        guard.active.add(self)
        self._spans = None
        if guard.telemetry is not None:  # started on the caller's thread: a Java span current here is the parent
            from pyguard.jvm.otel_context import java_traceparent

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

    def _trace_iterations(self) -> None:
        """Hand the trace this run's iterations it does not hold yet (under ``_lock``; a no-op without a trace)."""
        if self._writer is not None:
            self._writer.catch_up(self.run_id, self.events)

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
        from pyguard.jvm import guard_model

        return self._guard_once(guard_model, model)

    def guarded_streaming_model(self, model: Any) -> GuardedModel:
        """The :class:`pyguard.jvm.GuardedModel` of this run around a Java ``StreamingChatModel`` (made once): its
        ``.java`` is a ``GuardedStreamingChatModel``."""
        from pyguard.jvm.streaming import guard_streaming_model

        return self._guard_once(guard_streaming_model, model)

    def fail_safe_calls(self) -> int:
        """The Java fail-safe cap of this run's guarded model (:mod:`pyguard.limits`): the guard's ``fail_safe_calls``."""
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
            if self.wraps_up:  # the agent's own cap, when known, ends the turn as the guard's stop too (raise)
                answer = self.guard.on_stop == "answer"
                self._guarded.answer_on_stop(WRAP_UP if answer else None, self.agent_round_trips)
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
        """The one lifecycle of a guarded run, every entry point's (:meth:`Guard.run <pyguard.guard.Guard.run>`,
        conversations and escalation's resume, :meth:`Guard.agent <pyguard.guard.Guard.agent>`, run trees,
        :meth:`call`): ``build()`` the agent (the run is abandoned if that fails: no run is left open), run
        ``execute(agent)`` interruptibly (Ctrl-C cancels the run, :meth:`interruptible`), then end the run once from
        how the agent ended: a pyguard-built agent's :class:`pyguard.jvm.BridgeResult` (``reads="bridge"``), or a
        returned value or raised exception (``reads="value"``: your agent's ``chat()``). Returns the run's result;
        an exception other than the agent's own ends the run and goes on to the caller."""
        from pyguard.jvm.ending import ending_of_exception, ending_of_result, ending_of_value

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
        """Run your agent (``fn``) and end this run from what happened (:meth:`drive`); returns ``fn``'s value, or,
        when the guard stopped the run, the wrap-up's answer (``on_stop="answer"``) or None (read :attr:`result`).
        Java exceptions other than a guard stop end the run ``failed``."""
        returned: list[Any] = []

        def execute(_: Any) -> Any:
            returned.append(fn())
            return returned[0]

        result = self.drive(execute, reads="value")
        if returned:
            return returned[0]
        return result.answer if result.end.answer_source == "wrap_up" else None

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
        :func:`pyguard.interrupts.run_interruptibly`. On Ctrl-C the run ends ``cancelled`` (footer written), then the
        ``KeyboardInterrupt`` goes on to the caller."""
        from pyguard.interrupts import run_interruptibly

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

    # -- ending ----------------------------------------------------------------------------------------------------

    def abandon(self) -> None:
        """End a run whose agent could not be built (or whose model could not be guarded): ``failed``."""
        if self._result is None:
            self._finish(Causes(failed="the run failed: the agent could not be built"))

    def end(self, ending: RunEnding, *, wrap_up: bool = True) -> RunResult:
        """End this run from how its agent ended (:mod:`pyguard.jvm.ending`), through
        :func:`pyguard.ending.finish_arguments`; the engine's ``RunSession.finish`` then settles the outcome (a STOP it
        decided keeps its own). A wrap-up (the answer after a stop, ``on_stop="answer"``) makes the ending the stop it
        answered, with its answer; ``wrap_up=False`` makes none now (the agent's caller has had its reply already)."""
        ending = self._with_wrap_up(ending, now=wrap_up)
        self._answered = ending.ending is Ending.ANSWERED

        if ending.guard_failures:
            self._java_note = ending.guard_failures
        if ending.ending is Ending.STOPPED:
            stopped = False  # by the engine's own decision? (not when its decision was discarded, or it is stuck)
            if self._abandoned_at is None and self._engine_lock.acquire(timeout=self._engine_wait_s()):
                try:
                    stopped = self.session.stopped is not None and self.observed_stop is None
                finally:
                    self._engine_lock.release()
            if stopped:
                return self._finish(Causes(answer=ending.last_text))
            if self._cancelled is not None:
                return self._finish(Causes(cancelled=True, answer=ending.last_text))
        return self._finish(finish_arguments(ending, self.start.agent_style))

    def _with_wrap_up(self, ending: RunEnding, *, now: bool) -> RunEnding:
        """The ending as the wrap-up makes it: the one made during the run (the agent returned its answer), or one
        made now for a loop that ended on its own cap or on a stop it raised."""
        guarded = self._guarded
        if guarded is None or self.guard.on_stop != "answer" or not self.wraps_up:
            return ending
        wrap = guarded.wrap_up()
        cancelled = ending.ending is Ending.STOPPED and ending.stop_outcome not in (Outcome.STALLED, Outcome.EXPIRED)
        if wrap is None and now and not cancelled and ending.ending in (Ending.EXHAUSTED, Ending.STOPPED):
            wrap = guarded.wrap_up_after(
                WRAP_UP,
                (ending.stop_outcome or Outcome.EXPIRED).value,
                ending.reason or "the agent's own cap ended the run without an answer",
                "agent_cap",
            )
        if wrap is None:
            return ending
        self._wrap_up = wrap  # recorded however it went (the footer's evidence["wrap_up"])
        return ending_of_wrap_up(wrap, ending)

    def _finish(self, causes: Causes) -> RunResult:
        """End this run from its causes (the verifier's judgement of an answer added here): the engine settles them,
        or, when it cannot (it missed its deadline, or a stop it did not see ended the run), the footer is built from
        the events, noting how the engine failed."""
        # Wait for an engine decision in progress at most the callback deadline (Java has given up on it by then), and
        # not at all once Java gave up on one: one deadline per run.
        engine = self._engine_lock.acquire(timeout=self._engine_wait_s())
        ended = False
        try:
            with self._lock:
                if self._result is not None:
                    return self._result
                ended = True
                verified = None
                if causes.answer is not None and causes.failed is None and causes.expired is None:
                    verifier = self.guard.verifier
                    verified = None if verifier is None else bool(verifier(causes.answer))
                causes = causes.model_copy(update={"verified": verified})
                notes = self._notes(causes)
                if engine and self._abandoned_at is None and self.observed_stop is None:
                    end = self.session.finish(causes, notes=notes)
                else:
                    gave_up = None if self.observed_stop is not None else self._guard_failure()
                    causes = causes.model_copy(update={"engine_gave_up": gave_up})
                    end = end_from_events(self.run_id, self.events, causes, notes=notes)
                self._result = self._result_from(end)
                if self._guarded is not None:
                    self._guarded.release()  # free the run's state now: Java -> callback -> this run is a cycle
                return self._result
        finally:
            if engine:
                self._engine_lock.release()
            self.guard.active.discard(self)
            if ended and self._result is not None and self.on_end is not None:
                self.on_end(self._result)

    def _guard_failure(self) -> str:
        """Why the engine could not finish the run: its decision missed the deadline, or it is still busy."""
        missed = self._missed_deadline_at()
        late = (
            f"the engine's decision about model call {missed} missed the callback deadline of"
            f" {self.guard.callback_timeout_ms} ms and was discarded"
            if missed
            else f"the engine was still deciding {self.guard.callback_timeout_ms} ms after the run ended"
        )
        return late + (f"; Java saw {self._java_note}" if self._java_note else "")

    def _missed_deadline_at(self) -> int:
        """The model call whose decision missed the callback deadline (Python saw it late, or Java gave up), or 0."""
        if self._abandoned_at is not None:
            return self._abandoned_at
        return self._guarded.missed_deadline_at() if self._guarded is not None and self._deadline_s() > 0 else 0

    def _engine_wait_s(self) -> float:
        """How long ending the run may wait for an engine decision in progress: the callback deadline (-1: no
        deadline, wait), and not at all once a decision missed it, so the caller waits out one deadline per run."""
        return 0 if self._missed_deadline_at() else self._deadline_s()

    def _deadline_s(self) -> float:
        ms = self.guard.callback_timeout_ms
        return ms / 1000.0 if ms > 0 else -1

    def _result_from(self, end: RunEnd) -> RunResult:
        if self._writer is not None:
            self._trace_iterations()
            end = self._writer.end(end)  # with evidence["trace_error"] when the trace lost records
            self._writer.close()
        if self._spans is not None:
            self._spans.end(end)
        record = RunRecord(start=self.start, events=list(self.events), end=end)
        return RunResult(
            record=record,
            decisions=tuple(self.decisions),
            gains=tuple(self.session.gains),
            trace_path=None if self.trace_path is None else str(self.trace_path),
            trace_error=None if self._writer is None else self._writer.error,
        )

    def _notes(self, causes: Causes) -> EndNotes:
        """What this run knows of its end beside the causes, for its one footer (:class:`pyguard.ending.EndNotes`):
        its events' tokens, where the answer came from, the wrap-up's tokens, the tools that ran, an observed stop."""
        wrap = self._wrap_up
        source: Literal["model", "wrap_up", "salvaged"] = "model" if self._answered else "salvaged"
        if wrap is not None and causes.answer is not None and causes.answer == wrap.text:
            source = "salvaged" if wrap.salvaged else "wrap_up"
        executed = None
        if self.counts_executions and self._guarded is not None:
            executed = self._guarded.stats().tool_executions
        evidence = self._observed()
        if self._cancelled is not None and self.session.stopped is not None and self.observed_stop is None:
            # cancelled after the engine's stop (a Ctrl-C during the wrap-up): the stop stays the outcome, said here
            evidence["cancelled_after_stop"] = self._cancelled
            if wrap is None and self.guard.on_stop == "answer" and self.wraps_up:
                evidence["wrap_up"] = {"status": "interrupted", "error_kind": None, "error": self._cancelled}
        tokens, wrap_tokens = billed_tokens(token_totals(self.events), wrap, evidence)
        return EndNotes(
            tokens=tokens,
            answer_source=source,
            wrap_up_tokens=wrap_tokens,
            tool_calls_executed=executed,
            evidence=evidence,
        )

    def _observed(self) -> dict[str, Any]:
        """In observe or reflect mode: the footer's ``evidence["observed_stop"]``, the stop the guard did not act on
        (``pyguard check`` counts the run as that stop; the outcome says how the run really ended)."""
        stop = self.observed_stop
        if stop is None:
            return {}
        observed = {
            "mode": self.mode,
            "iteration": stop.iteration,
            "outcome": None if stop.outcome is None else stop.outcome.value,
            "rule": stop.rule,
            "reason": stop.reason,
        }
        return {"observed_stop": observed}

    def last_text(self) -> str | None:
        for event in reversed(self.events):
            if event.text:
                return event.text
        return None


def recorded_task(task: str | Sequence[str]) -> str | None:
    """The task a trace records: the message itself, or a conversation's first user message (the others arrive as
    user observations of the events)."""
    if isinstance(task, str):
        return task
    return next(iter(task), None)


def new_run_id() -> str:
    """A fresh run id: 12 random hexadecimal characters."""
    return uuid.uuid4().hex[:12]
