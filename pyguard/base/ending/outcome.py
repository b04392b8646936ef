"""How a run ended, as causes, and the one outcome they settle to (:func:`settle`).

An agent's loop ends one of four ways (:class:`Ending`: Java's ``AgentRunResult.Ending``), read into a neutral
:class:`RunEnding` (no Java object: :mod:`pyguard.jvm.ending` reads Java's result or exception into it).
:func:`finish_arguments` reads a :class:`RunEnding` as the :class:`~pyguard.base.ending.Causes` :func:`settle` orders;
:func:`settle` is the one outcome precedence every writer of a footer uses (the engine's ``RunSession.finish`` included):

1. a STOP the engine decided keeps its own outcome;
2. the guard failed (``guard_error``);
3. the run was cancelled;
4. a cap outside the engine ran out (``expired``: the agent's own loop cap, the Java fail-safe, a recording cut off);
5. the run failed (``failed``: an exception, a recording labelled failed, an agent span's error);
6. a verifier rejected the answer;
7. the engine gave up (``engine_gave_up``): ``guard_error``, noting whether the model answered unguarded;
8. the model answered (or the run ended on its own): succeeded;
9. else failed, without an answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from pyguard.base.ending.causes import Causes
from pyguard.base.events import Outcome

__all__: list[str] = []


class Ending(StrEnum):
    """How an agent's loop ended: the values of Java's ``AgentRunResult.Ending``."""

    ANSWERED = "answered"
    """The model answered."""
    STOPPED = "stopped"
    """A guard stop ended it: the guard's decision, a cancellation, or the Java fail-safe (``fail_safe``)."""
    FAILED = "failed"
    """An exception other than a guard stop."""
    EXHAUSTED = "exhausted"
    """The loop's own cap (``maxToolCallingRoundTrips``, ``maxIterations``) ended it without an answer."""


@dataclass(frozen=True, slots=True)
class RunEnding:
    """A run's ending, with no Java object in it. ``last_text`` is the last answer-like text the model wrote (a
    salvaged answer for a run that did not answer); ``guard_failures`` says what Java saw of the guard failing
    (callback errors or timeouts), when it did."""

    ending: Ending
    answer: str | None = None
    """For ANSWERED: the answer."""
    stop_outcome: Outcome | None = None
    """For STOPPED: the stop's outcome (the guard's, ``cancelled``, or the fail-safe's ``guard_error``/``expired``)."""
    reason: str | None = None
    """For STOPPED: why; for EXHAUSTED: the loop's own signal, when it gave one."""
    fail_safe: bool = False
    """For STOPPED: the Java fail-safe cap, not the guard's decision, stopped the run."""
    error: str | None = None
    """For FAILED: what went wrong."""
    last_text: str | None = None
    guard_failures: str | None = None


def finish_arguments(ending: RunEnding, agent_style: str | None = None) -> Causes:
    """How an ending reads as the :class:`Causes` :func:`pyguard.base.ending.settle` orders (what the engine's
    ``RunSession.finish`` and :func:`pyguard.base.ending.end_from_events` take): an answer; the agent's own cap
    (``expired``); an error; or a stop the engine did not decide: a cancellation, a guard failure (``guard_error``),
    or the Java fail-safe cap with a healthy guard (``expired``). Every ending but an answer keeps the last text the
    model wrote as the salvaged answer (the outcome still says how the run ended)."""
    salvage = ending.last_text
    if ending.ending is Ending.ANSWERED:
        return Causes(answer=ending.answer)
    if ending.ending is Ending.EXHAUSTED:
        what = ending.reason or agent_style or "its loop cap"
        return Causes(expired=f"the agent's own cap ended the run without an answer ({what})", answer=salvage)
    if ending.ending is Ending.FAILED:
        return Causes(failed=f"the run failed: {ending.error or 'the run failed'}", answer=salvage)
    reason = ending.reason or ""
    if ending.stop_outcome is Outcome.CANCELLED:
        return Causes(cancelled=True, answer=salvage)
    if ending.stop_outcome is None or ending.stop_outcome is Outcome.GUARD_ERROR:
        return Causes(guard_error=reason or "the run was stopped without an outcome", answer=salvage)
    return Causes(expired=reason + (" (Java fail-safe)" if ending.fail_safe else ""), answer=salvage)


def stop_outcome(outcome: Outcome | None) -> Outcome:
    """The outcome of a loop that a stop or a cap ended without an answer: the stop's own, when it names one; else
    ``expired``. The one rule for a stop that names none (the engine, a nested run's tree, a live run's wrap-up
    use it): the engine's STOP decisions always name theirs (:class:`pyguard.engine.conditions.StopHit` requires
    one: a limit's ``expired``, a stall's ``stalled``, either ``escalated``), so the only loop that ends without
    one is the agent's own cap (``Ending.EXHAUSTED``: ``maxToolCallingRoundTrips``, ``maxIterations``), a limit
    that ran out, as :func:`finish_arguments` reads it too: ``expired``. (A stop *Java* reports without an outcome
    is the guard's side broken: :func:`finish_arguments` reads it as ``guard_error``, not through this rule.)"""
    return Outcome.EXPIRED if outcome is None else outcome


class Settled(NamedTuple):
    """A run's one outcome and why."""

    outcome: Outcome
    reason: str


def settle(causes: Causes, *, stop: tuple[Outcome, str] | None = None) -> Settled:
    """The one outcome of a run with ``causes``, in the precedence of the module docstring; ``stop`` is a STOP the
    engine decided (its outcome and reason), which outranks every cause.

    ``failed`` and ``expired`` are the reason as given. ``ended`` (default, when an ``answer`` is given: "the model
    answered") says the run ended on its own and is its success's reason. ``engine_gave_up`` (why) is noted on every
    reason but a stop's."""
    c = causes
    note = f" ({c.engine_gave_up})" if c.engine_gave_up else ""
    ended = c.ended is not None or c.answer is not None
    if stop is not None:
        return Settled(*stop)
    if c.guard_error is not None:
        return Settled(Outcome.GUARD_ERROR, f"the guard failed: {c.guard_error}{note}")
    if c.cancelled:
        return Settled(Outcome.CANCELLED, f"cancelled{note}")
    if c.expired is not None:
        return Settled(Outcome.EXPIRED, f"{c.expired}{note}")
    if c.failed is not None:
        return Settled(Outcome.FAILED, f"{c.failed}{note}")
    if ended and c.verified is False:
        return Settled(Outcome.FAILED, f"the verifier rejected the answer{note}")
    if c.engine_gave_up and ended:
        return Settled(Outcome.GUARD_ERROR, f"the model answered, unguarded after the guard failed: {c.engine_gave_up}")
    if c.engine_gave_up:
        return Settled(Outcome.GUARD_ERROR, f"the guard failed: {c.engine_gave_up}")
    if ended:
        return Settled(
            Outcome.SUCCEEDED,
            c.ended or "the model answered" + (" and the verifier accepted it" if c.verified else ""),
        )
    return Settled(Outcome.FAILED, "the run ended without an answer")
