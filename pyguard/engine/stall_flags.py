"""A stall finding (:class:`StallFlag`) and what the stall detector reports of one iteration (:class:`StallReport`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pyguard.engine.steps import ActionResult

__all__ = ["StallFlag", "StallReport", "action_flag"]


@dataclass(frozen=True, slots=True)
class StallFlag:
    """One stall finding with its evidence."""

    rule: str
    iteration: int
    message: str
    """One sentence for people and for the reflection."""
    tool: str | None = None
    fingerprints: tuple[str, ...] = ()
    """Canonical forms of the actions involved (cut for display)."""
    ids: tuple[str, ...] = ()
    """Exact and normalised fingerprint digests of the actions involved."""
    sample: str | None = None
    """The last result text of the action involved (tool content: quote it as data, never as instructions)."""
    evidence: dict[str, Any] = field(default_factory=dict)
    stops: bool = True
    """False for a finding that earns a reflection but never stops a run by itself (futility: new attempts that
    leave a check's output unchanged are attempts, not a repeated state)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "iteration": self.iteration,
            "message": self.message,
            "tool": self.tool,
            "fingerprints": list(self.fingerprints),
            **({} if self.stops else {"stops": False}),
            **self.evidence,
        }


def action_flag(
    rule: str, iteration: int, r: ActionResult, message: str, evidence: dict[str, Any], *, stops: bool = True
) -> StallFlag:
    """A finding about the one action that produced result ``r`` (its tool, fingerprints and last result)."""
    a = r.action
    assert a is not None
    return StallFlag(
        rule=rule,
        iteration=iteration,
        message=message,
        tool=a.tool,
        fingerprints=(a.short(),),
        ids=(a.exact_id, a.norm_id),
        sample=r.text,
        evidence=evidence,
        stops=stops,
    )


@dataclass(slots=True)  # not frozen: one per result and step; a frozen __init__ costs twice as much
class StallReport:
    gain: float
    flags: tuple[StallFlag, ...] = ()
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
