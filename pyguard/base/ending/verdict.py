"""Did a recorded run succeed, and on what evidence: the one reading of a footer (replay, ``pyguard check``,
calibration and the tuner ask :func:`verdict`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pyguard.base.events import Outcome, RunEnd

__all__: list[str] = []


class Evidence(StrEnum):
    """What a verdict rests on."""

    LABEL = "label"
    """An outcome label recorded beside the run (``success``, ``resolved``, ``reward``, a labels file)."""
    FOOTER = "footer"
    """The footer of a live pyguard run: how it ended, as the guard saw it."""
    INFERRED = "inferred"
    """The footer of an imported recording without a label: how it ended is inferred from its last model call."""
    NONE = "none"
    """No footer: the run was cut short."""


_OUTCOME_SUCCESS = {
    Outcome.SUCCEEDED: True,
    Outcome.FAILED: False,
    Outcome.EXPIRED: False,
    Outcome.STALLED: False,
    Outcome.ESCALATED: False,
}
_CUT_OFF = {Outcome.EXPIRED, Outcome.STALLED, Outcome.ESCALATED, Outcome.CANCELLED, Outcome.GUARD_ERROR}


@dataclass(frozen=True, slots=True)
class Verdict:
    """Did a recorded run succeed, and on what evidence: the one reading of a footer every reader shares."""

    success: bool | None
    """True or False when known (a label, or a live run's footer); None when it is not (an unlabelled recording,
    a cancelled run, a guard error, no footer)."""
    evidence: Evidence
    outcome: Outcome | None
    """The outcome as the evidence says: a finished run labelled successful SUCCEEDED (even when its recording ends
    in a final tool call), one labelled failed that the footer calls SUCCEEDED FAILED; else the footer's. None
    without a footer."""
    censored: bool
    """For survival analysis (calibration): the run's end is not an event, success or failure, within its model
    calls (no footer, cut off, stopped by a guard, cancelled) — except a run labelled successful whose recording
    ends in its final tool call."""

    @property
    def event_success(self) -> bool:
        """For survival analysis: a success (not censored, and the label, else the footer's outcome, says so)."""
        if self.censored:
            return False
        return bool(self.success) if self.evidence is Evidence.LABEL else self.outcome is Outcome.SUCCEEDED


def verdict(end: RunEnd | None) -> Verdict:
    """The verdict on a run with footer ``end`` (None: the run was cut short)."""
    if end is None:
        return Verdict(success=None, evidence=Evidence.NONE, outcome=None, censored=True)
    label = end.success_label
    if label is not None:
        success: bool | None = label
        evidence = Evidence.LABEL
    elif end.evidence.get("imported_from") is not None:
        success, evidence = None, Evidence.INFERRED
    else:
        success, evidence = _OUTCOME_SUCCESS.get(end.outcome), Evidence.FOOTER
    finished = end.outcome in (Outcome.SUCCEEDED, Outcome.FAILED) or (end.outcome is Outcome.EXPIRED and end.censored)
    outcome = end.outcome
    if label is True and finished:
        outcome = Outcome.SUCCEEDED
    elif label is False and end.outcome is Outcome.SUCCEEDED:
        outcome = Outcome.FAILED
    if label is True and end.censored:
        censored = False  # the recording ends in its final tool call (finish, submit, purchase)
    else:
        censored = end.censored or end.outcome in _CUT_OFF
    return Verdict(success=success, evidence=evidence, outcome=outcome, censored=censored)
