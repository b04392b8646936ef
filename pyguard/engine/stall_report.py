"""What the stall detector reports of one iteration (:class:`StallReport`), and the hit of a stall rule about one
action (:func:`action_hit`). A stall rule's finding is a ``stalled`` :class:`~pyguard.engine.conditions.StopHit`
with its :class:`~pyguard.engine.conditions.StallSubject`: the one hit type every stop condition returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyguard.base.decisions import Action
from pyguard.base.events import Outcome
from pyguard.engine.conditions import StallSubject, StopHit
from pyguard.engine.config_tables import StallConfig
from pyguard.engine.fingerprint import ActionFingerprint
from pyguard.engine.steps import ActionResult

__all__: list[str] = []


def stall_hit(
    rule: str, message: str, evidence: dict[str, Any], subject: StallSubject, action: Action = Action.STOP
) -> StopHit:
    """A stall rule's hit: outcome ``stalled``, ``message`` one sentence for people and for the reflection;
    ``action`` ``reflect`` for a finding that earns a reflection but never stops a run by itself."""
    return StopHit(rule, Outcome.STALLED, message, evidence, stall=subject, action=action)


def action_hit(
    rule: str,
    iteration: int,
    r: ActionResult,
    message: str,
    evidence: dict[str, Any],
    *,
    action: Action = Action.STOP,
) -> StopHit:
    """A stall rule's hit about the one action that produced result ``r`` (its tool, fingerprints and last result)."""
    a = r.action
    assert a is not None
    subject = StallSubject(iteration, a.tool, (a.short(),), (a.exact_id, a.norm_id), r.text)
    return stall_hit(rule, message, evidence, subject, action)


def attempts_hit(iteration: int, r: ActionResult, attempts: int, *, futility_stops: bool) -> StopHit:
    """``fruitless_attempts``: ``attempts`` changes in a row left the result of ``r``'s check as it was (futility:
    it earns a reflection, and stops only with ``futility_stops``)."""
    a = r.action
    assert a is not None
    return action_hit(
        "fruitless_attempts",
        iteration,
        r,
        f"{attempts} changes in a row left the result of {a.short(80)} exactly as it was: "
        "the attempts are not reaching the problem.",
        {"attempts": attempts},
        action=Action.STOP if futility_stops else Action.REFLECT,
    )


def polling_hit(iteration: int, r: ActionResult, polls: int, chars: int, config: StallConfig) -> StopHit:
    """``polling_limit``: ``r``'s action polled past its allowance (polls, or characters of results)."""
    a = r.action
    assert a is not None
    return action_hit(
        "polling_limit",
        iteration,
        r,
        f"{a.short(80)} was polled {polls} time{'s' if polls > 1 else ''} and its result changed only in "
        f"timestamps and ids (allowance {config.polling_allowance} polls, "
        f"{config.polling_allowance_chars:,} characters of results).",
        {"polls": polls, "allowance": config.polling_allowance, "chars": chars},
    )


@dataclass(slots=True)  # not frozen: one per result and step; a frozen __init__ costs twice as much
class StallReport:
    gain: float
    stalls: tuple[StopHit, ...] = ()
    """The stall rules' hits of this iteration, in the detector's order."""
    result_gains: tuple[float, ...] = ()
    new_writes: int = 0
    """Results of writes with new content in this step (attempts: progress, whatever they returned)."""
    polls: int = 0
    """Results of polls within their allowance in this step (a read repeated whose result changed only in
    volatile fields)."""
    only_polls: bool = False
    """Every result of this step was such a poll: the iteration waited, it did not stall."""
    acted: bool = False
    """Some result of this step answers an action (a tool result paired with a call)."""


def repeat_hit(
    iteration: int,
    r: ActionResult,
    seen: tuple[int, int, set[str]],
    how: str,
    between: int,
    cycle: list[ActionFingerprint] | None,
) -> StopHit:
    """The hit of an action repeated with the same result (``seen``: its results so far, the unchanged ones in a
    row, its argument variants; ``how``: exact or normalised; ``between``: the other actions since its last call):
    ``cycle`` when the actions in between (``cycle``, its other members) were themselves repeats within the cycle
    period, else ``repeat_no_gain``."""
    a = r.action
    assert a is not None
    count, unchanged, canonical = seen
    variants = sorted(canonical)
    shown = ", ".join(v if len(v) <= 80 else v[:77] + "..." for v in variants[:3])
    evidence: dict[str, Any] = {
        "times": count,
        "unchanged": unchanged,
        "variants": variants[:5],
        "normalised": a.normalised,
    }
    ids = {a.exact_id, a.norm_id}
    if cycle is not None:
        rule = "cycle"
        names = [a.short(80)] + [m.short(80) for m in cycle]
        evidence["cycle"] = names
        message = (
            f"The actions {' -> '.join(names)} are going round in a cycle: {a.tool} returned the same result "
            f"as before ({count} calls so far), and nothing new came in between."
        )
        for m in cycle:
            ids.update((m.exact_id, m.norm_id))
    else:
        rule = "repeat_no_gain"
        if between:
            how += f" after {between} other action{'s' if between > 1 else ''}"
        message = (
            f"{a.tool} was called again with {how} ({shown}) and returned the same result as before: "
            f"{count} calls, {unchanged + 1} identical results in a row."
        )
    variants5 = tuple(v if len(v) <= 120 else v[:117] + "..." for v in variants[:5])
    return stall_hit(rule, message, evidence, StallSubject(iteration, a.tool, variants5, tuple(sorted(ids)), r.text))
