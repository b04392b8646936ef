"""What the stall detector reports of one iteration (:class:`StallReport`), and the hit of a stall rule about one
action (:func:`action_hit`). A stall rule's finding is a ``stalled`` :class:`~pyguard.engine.conditions.StopHit`
with its :class:`~pyguard.engine.conditions.StallSubject`: the one hit type every stop condition returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyguard.decisions import Action
from pyguard.engine.conditions import StallSubject, StopHit
from pyguard.engine.config_tables import StallConfig
from pyguard.engine.steps import ActionResult
from pyguard.events import Outcome

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
