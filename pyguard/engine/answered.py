"""A reflection answers one stall: which later finding is that stall persisting (a stop) and which is a new one.

When the engine judges each call's tool results before the next call is sent (``RunSession.observe_results``), a
reflection decided on call ``r``'s results goes into call ``r + 1``'s request: the results of call ``r + 1`` onward
answer calls the model made *after* reading it (no grace is owed). A stop needs the stall the reflection answered to
persist there: the same kind of evidence (:data:`FAMILIES`) over the same state (the same actions, or the same tool)
within :data:`WINDOW` calls after the reflection. A stall that comes later, or a different one, is a new first
signal: a new reflection while the turn has reflections left (:data:`MAX_REFLECTIONS`), else the run goes on (its
caps and budget still bound it). A low-information streak (``low_gain_streak``) earns a reflection, never a stop;
futility (``fruitless_attempts``) stops only when it persists right after its reflection.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from pyguard.base.decisions import Action
from pyguard.engine.conditions import StallSubject, StopHit

__all__: list[str] = []

WINDOW = 2
"""Calls after a reflection in which the stall it answered, found again, stops the run: the first call made after
reading it, and one more."""
MAX_REFLECTIONS = 3
"""Reflections per turn, each on a new first signal."""
FAMILIES = {
    "repeat_no_gain": "repeat",
    "cycle": "repeat",
    "fruitless_retry": "repeat",
    "polling_limit": "repeat",
    "same_answer": "same_answer",
    "error_storm": "error",
    "fruitless_attempts": "futility",
    "low_gain_streak": "low_information",
    "nothing_new": "nothing_new",
}
"""The kind of evidence of each stall rule: a finding persists the reflected stall when it is of the same kind."""
NEVER_STOPS = frozenset({"low_information"})

_NO_SUBJECT = StallSubject(0)


def family(rule: str) -> str:
    """The kind of evidence of ``rule`` (a rule of your own is its own kind)."""
    return FAMILIES.get(rule, rule)


def _about(hit: StopHit) -> StallSubject:
    return hit.stall or _NO_SUBJECT


def _same_state(a: StallSubject, b: StallSubject) -> bool:
    return bool(set(a.ids) & set(b.ids)) or (a.tool is not None and a.tool == b.tool)


def persisting(
    at: int | None, answered: Sequence[StopHit], i: int, found: Sequence[StopHit], *, revisits: bool = False
) -> list[StopHit]:
    """The findings of call ``i``'s results that are the stall a reflection after call ``at`` answered (``answered``),
    persisting within its window: each a stop (futility included), marked ``repeated_evidence``. A ``nothing_new``
    finding is a window of its own: it persists any reflection sent inside that window (the model read it, and
    nothing new came since). ``revisits``: the run's shape says states recur (:mod:`pyguard.engine.run_shape`):
    repeats are no evidence there, only ``nothing_new`` may stop."""
    if at is None:
        return []
    out = [
        replace(h, action=Action.STOP, evidence={**h.evidence, "repeated_evidence": True, "reflected_at": at})
        for h in found
        if h.rule == "nothing_new" and at >= h.evidence.get("since", i + 1)
    ]
    if revisits or not 0 < i - at <= WINDOW:
        return out
    for h in found:
        kind = family(h.rule)
        if kind in NEVER_STOPS or h.rule == "nothing_new":  # judged above
            continue
        if any(family(g.rule) == kind and _same_state(_about(h), _about(g)) for g in answered):
            out.append(replace(h, action=Action.STOP, evidence={**h.evidence, "repeated_evidence": True}))
    return out


def may_reflect(
    count: int,
    at: int | None,
    i: int,
    limit: int = MAX_REFLECTIONS,
    found: Sequence[StopHit] = (),
    reflected_rules: Collection[str] = (),
) -> bool:
    """A new first signal at call ``i`` earns a reflection: the turn has reflections left (``count`` sent of
    ``limit``), and the model is not still answering the last one (after call ``at``, within its window). The late
    signal (``nothing_new`` among ``found``) earns one reflection of its own in a turn whose reflections are used
    up (``reflected_rules``: the rules reflected on so far in the turn), so that it can stop if it persists."""
    if at is not None and i - at <= WINDOW:
        return False
    if count < limit:
        return True
    return limit > 0 and "nothing_new" not in reflected_rules and any(h.rule == "nothing_new" for h in found)
