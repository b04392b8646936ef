"""What the stall detector sees of one iteration: its results, each paired with the action that produced it."""

from __future__ import annotations

from dataclasses import dataclass

from pyguard.engine.fingerprint import ActionFingerprint

__all__: list[str] = []


@dataclass(slots=True)  # not frozen: one per result and step; a frozen __init__ costs twice as much
class ActionResult:
    """One observation of an iteration, paired with the action that produced it (``action`` None for user or
    system messages and for tool results that match no requested call)."""

    action: ActionFingerprint | None
    novelty: float
    result_key: str
    """Digest of the prepared result text: equal keys mean an unchanged result."""
    is_error: bool = False
    error_kind: str | None = None
    requested_at: int | None = None
    """Iteration whose response requested the action."""
    text: str = ""
    """The raw result text (quoted, as data, in reflections)."""
    empty: bool = False
    """The result says only "nothing" (:func:`is_empty_result` of its prepared text)."""
    raw_key: str | None = None
    """Digest of the raw result text: a result whose ``result_key`` is unchanged but whose ``raw_key`` changed
    differs only in volatile fields (a poll re-sampling a job's status)."""
    template: str | None = None
    """Digest of the result's template (:mod:`pyguard.engine.templates`), None when nothing in it is tied to the
    request."""
    write: bool = False
    """The action is a write (:mod:`pyguard.engine.actions`): it changes what later reads see."""
    wait: bool = False
    """The action waits (:func:`pyguard.engine.waits.is_wait`: a sleep, a wait, a read told to wait)."""
    pending: bool = False
    """The result reports a state that is not final yet (:func:`pyguard.engine.waits.is_pending_result`)."""


@dataclass(slots=True)  # not frozen: one per result and step; a frozen __init__ costs twice as much
class Step:
    """What the detector sees of one iteration."""

    iteration: int
    results: tuple[ActionResult, ...] = ()
    actions: tuple[ActionFingerprint, ...] = ()
    """The actions requested in this iteration's response: their results come with the next step, or with this one
    when ``paired``."""
    writes: tuple[ActionFingerprint, ...] = ()
    """Those of ``actions`` that are writes (:mod:`pyguard.engine.actions`)."""
    paired: bool = False
    """True when ``results`` are the results of ``actions`` (the engine judges an iteration's tool results before the
    next model call is sent); False when they are the previous iteration's (judged with the next model call)."""
