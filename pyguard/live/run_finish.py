"""How one guarded run finishes: how its agent ended read into causes (a wrap-up's answer included), the verifier's
judgement, the engine's ``RunSession.finish`` (or the footer from the events when the engine cannot), the trace's
footer, and the :class:`pyguard.result.RunResult`. :class:`RunFinisher` is the half of
:class:`pyguard.live.run.GuardedRun` that ends it; the other half (:mod:`pyguard.live.run`) observes and drives the run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pyguard.base.decisions import Decision
from pyguard.base.ending import (
    Causes,
    Ending,
    EndNotes,
    RunEnding,
    end_from_events,
    finish_arguments,
    stop_outcome,
    token_totals,
)
from pyguard.base.events import IterationEvent, Outcome, RunEnd, RunRecord, RunStart
from pyguard.jvm.ending import billed_tokens, ending_of_wrap_up
from pyguard.live.on_stop import WRAP_UP, stop_message
from pyguard.live.run_host import OnStop, RunHost
from pyguard.result import RunResult

if TYPE_CHECKING:  # pragma: no cover
    from pyguard.engine import RunSession
    from pyguard.engine.config import Mode
    from pyguard.jvm.agents import GuardedModel, WrapUpRecord
    from pyguard.trace.writer import TraceWriter

__all__: list[str] = []


class RunFinisher:
    """The ending half of :class:`pyguard.live.run.GuardedRun`: everything that ends the run once, however it ends. The
    attributes below are set by ``GuardedRun.__init__``."""

    guard: RunHost
    run_id: str
    start: RunStart
    session: RunSession
    events: list[IterationEvent]
    decisions: list[Decision]
    _lock: threading.Lock
    _engine_lock: threading.Lock
    _guarded: GuardedModel | None
    _result: RunResult | None
    _cancelled: str | None
    _abandoned_at: int | None
    _java_note: str | None
    _wrap_up: WrapUpRecord | None
    _answered: bool
    counts_executions: bool
    wraps_up: bool
    on_stop: OnStop
    mode: Mode
    observed_stop: Decision | None
    on_end: Callable[[RunResult], None] | None
    trace_path: Path | None
    _writer: TraceWriter | None
    _spans: Any

    def _trace_iterations(self) -> None:
        """Hand the trace this run's iterations it does not hold yet (under ``_lock``; a no-op without a trace)."""
        if self._writer is not None:
            self._writer.catch_up(self.run_id, self.events)

    def abandon(self) -> None:
        """End a run whose agent could not be built (or whose model could not be guarded): ``failed``."""
        if self._result is None:
            self._finish(Causes(failed="the run failed: the agent could not be built"))

    def end(self, ending: RunEnding, *, wrap_up: bool = True) -> RunResult:
        """End this run from how its agent ended (:mod:`pyguard.jvm.ending`), through
        :func:`pyguard.base.ending.finish_arguments`; the engine's ``RunSession.finish`` then settles the outcome (a STOP it
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
        if guarded is None or not self.wraps_up or self.mode == "observe":
            return ending  # observe never acts: no wrap-up, even at the agent's own cap
        wrap = guarded.wrap_up()
        if wrap is None and self.on_stop == "raise":  # (a tool limit's exit end makes a stop message under any on_stop)
            return ending
        cancelled = ending.ending is Ending.STOPPED and ending.stop_outcome not in (Outcome.STALLED, Outcome.EXPIRED)
        if wrap is None and now and not cancelled and ending.ending in (Ending.EXHAUSTED, Ending.STOPPED):
            wrap = guarded.wrap_up_after(
                WRAP_UP if self.on_stop == "answer" else stop_message(self.guard),
                stop_outcome(ending.stop_outcome).value,
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
        """What this run knows of its end beside the causes, for its one footer (:class:`pyguard.base.ending.EndNotes`):
        its events' tokens, where the answer came from, the wrap-up's tokens, the tools that ran, an observed stop."""
        wrap = self._wrap_up
        source: Literal["model", "wrap_up", "salvaged", "stop_message"] = "model" if self._answered else "salvaged"
        if wrap is not None and causes.answer is not None and causes.answer == wrap.text:
            source = "salvaged" if wrap.salvaged else "stop_message" if wrap.status == "stop_message" else "wrap_up"
        executed = None
        if self.counts_executions and self._guarded is not None:
            executed = self._guarded.stats().tool_executions
        evidence = self._observed()
        if self.guard.config.caps.tool_limits and self._guarded is not None:
            limits = {t: c.limit for t, c in sorted(self.guard.config.caps.tool_limits.items())}
            evidence["tool_limits"] = self._tool_limit_counts(limits)
        if self._cancelled is not None and self.session.stopped is not None and self.observed_stop is None:
            # cancelled after the engine's stop (a Ctrl-C during the wrap-up): the stop stays the outcome, said here
            evidence["cancelled_after_stop"] = self._cancelled
            if wrap is None and self.on_stop != "raise" and self.wraps_up:
                evidence["wrap_up"] = {"status": "interrupted", "error_kind": None, "error": self._cancelled}
        tokens, wrap_tokens = billed_tokens(token_totals(self.events), wrap, evidence)
        return EndNotes(
            tokens=tokens,
            answer_source=source,
            wrap_up_tokens=wrap_tokens,
            tool_calls_executed=executed,
            evidence=evidence,
        )

    def _tool_limit_counts(self, limits: dict[str, int]) -> dict[str, Any]:
        """The footer's ``evidence["tool_limits"]``: the limits and the calls they blocked; in observe mode nothing
        is blocked (the calls ran) and the calls a limit refused are ``would_block``."""
        refused = {} if self._guarded is None else self._guarded.blocked_tools()
        if self.mode == "observe":
            return {"limits": limits, "blocked": {}, "would_block": refused}
        return {"limits": limits, "blocked": refused}

    def _observed(self) -> dict[str, Any]:
        """In observe or reflect mode: the footer's ``evidence["observed_stop"]``, the stop the guard did not act on
        (``pyguard check`` counts the run as that stop; the outcome says how the run really ended): the engine's, or
        a tool limit's with exit ``end``/``error`` (Java's ``ToolLimits``) when that came first."""
        stop = self.observed_stop
        limited = None if self.mode == "enforce" or self._guarded is None else self._guarded.tool_limit_would_stop()
        # a stop with no iteration came before the run's first call (a spent conversation): nothing came before it
        if limited is not None and (stop is None or (stop.iteration or 0) > int(limited["iteration"])):
            return {"observed_stop": {"mode": self.mode, "outcome": Outcome.EXPIRED.value, **limited}}
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
