"""A turn's reflections (:class:`TurnReflections`: how many, the last one's call and findings) and the second signal:
how a stall found after a reflection relates to the findings that reflection answered (the same rule about the same
actions, or new evidence). The policy gives the results of the call after a reflection grace, stops at once on the
reflected evidence repeated (:func:`repeated_evidence`) or on a fruitless retry, and reports which signal every
stall stop was (:func:`signal`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pyguard.base.decisions import Action
from pyguard.engine.conditions import StallSubject, StopHit
from pyguard.engine.config import BudgetSettings
from pyguard.engine.fingerprint import ActionFingerprint
from pyguard.engine.stall import StallDetector
from pyguard.engine.stall_report import stall_hit

__all__: list[str] = []

_NO_SUBJECT = StallSubject(0)


def _about(hit: StopHit) -> StallSubject:
    """What a stall hit is about (a ``stalled`` hit of a condition of your own is given a bare subject)."""
    return hit.stall or _NO_SUBJECT


def repeated_evidence(
    reflected: Sequence[StopHit], writes: bool, found: Sequence[StopHit], actions: Sequence[ActionFingerprint]
) -> StopHit | None:
    """In the call after a reflection: a finding that is the reflected evidence again (the same rule about the
    same actions), when the model, having read the reflection, asks only for those same actions again and for
    no write. Returned as the stop's finding; None when the evidence is new or the model tries something else.
    A reworded request (``same_answer``) is a new action, not the same state: it is judged by its result."""
    if not actions or not reflected:
        return None
    if writes:  # the model's response makes a write: an attempt, judged by its result
        return None
    reflected_ids = {x for g in reflected for x in _about(g).ids}
    for h in found:
        if h.action is not Action.STOP or h.rule == "same_answer" or not any(h.rule == g.rule for g in reflected):
            continue
        if set(_about(h).ids) & reflected_ids and all({a.exact_id, a.norm_id} & reflected_ids for a in actions):
            return replace(
                h,
                message=h.message + " The model, after the reflection, asked for the same again.",
                evidence={**h.evidence, "repeated_evidence": True},
            )
    return None


def signal(reflected_at: int | None, reflected: Sequence[StopHit], stoppers: Sequence[StopHit]) -> dict[str, Any]:
    """Which signal a stall stop is: ``first`` (no reflection before it in this turn) or ``second`` (after one),
    and for a second whether it is the reflected evidence repeated (the same rule about the same actions, a
    fruitless retry, or a stop on repeated evidence) or new evidence; replay reports the split."""
    if reflected_at is None:
        return {"kind": "first"}
    reflected_ids = {x for g in reflected for x in _about(g).ids}
    same = any(
        h.rule == "fruitless_retry"
        or h.evidence.get("repeated_evidence")
        or any(
            g.rule == h.rule and (set(_about(h).ids) & reflected_ids or _about(g).tool == _about(h).tool)
            for g in reflected
        )
        for h in stoppers
    )
    return {
        "kind": "second",
        "reflected_at": reflected_at,
        "reflected_rules": [f.rule for f in reflected],
        "same_evidence": same,
    }


class TurnReflections:
    """The reflections of one turn: how many, after which call the last one was sent, the findings it answered, and
    whether the model has tried something new since (a new turn starts a new one)."""

    def __init__(self) -> None:
        self.count = 0
        self.at: int | None = None
        """The model call after which the last reflection was sent (None before one)."""
        self.findings: list[StopHit] = []
        """The findings of the last reflection (what a second signal is compared with)."""
        self.tried_new = False
        self.rules: set[str] = set()
        """The rules of every finding reflected on in this turn."""

    def judge(
        self,
        i: int,
        found: list[StopHit],
        actions: Sequence[ActionFingerprint],
        *,
        writes: bool,
        detector: StallDetector,
        settings: BudgetSettings,
    ) -> tuple[list[StopHit], list[StopHit]]:
        """The stall findings call ``i`` is judged by, after what the detector ``found``: ``(graced, findings)``.
        In the grace call right after a reflection the results answer calls made before the model read it, so
        the detector's findings are kept on record (``graced``) but not held against it, unless they bring the
        reflected evidence again and the model, having read it (its response makes no write: ``writes``), asks
        for more of the same (``stop_on_repeated_evidence``). From then on, a response asking only for actions
        already found fruitless, before anything new was tried, is a ``fruitless_retry`` finding."""
        graced: list[StopHit] = []
        echo = None
        if self.at is not None and i == self.at + 1:
            if settings.stop_on_repeated_evidence:
                echo = repeated_evidence(self.findings, writes, found, actions)
            graced, found = found, []
            detector.rearm()
        fruitless = False
        if self.at is not None and i > self.at and actions:
            fruitless = detector.all_fruitless(actions)
            if not fruitless:
                self.tried_new = True  # something new since the reflection: the world may have changed
        if settings.stop_on_fruitless_retry and fruitless and not found and not self.tried_new:
            return graced, [fruitless_retry(i, actions)]
        return graced, [echo] if echo is not None else found

    def record(
        self, i: int, stalls: Sequence[StopHit], actions: Sequence[ActionFingerprint], detector: StallDetector
    ) -> None:
        """A reflection on ``stalls`` is sent after call ``i``."""
        self.count += 1
        self.at = i
        self.findings = list(stalls)
        self.rules.update(h.rule for h in stalls)
        # actions requested in this same response came after the fruitless ones: they may change the world
        self.tried_new = bool(actions) and not detector.all_fruitless(actions)
        detector.rearm()

    def signal(self, stoppers: Sequence[StopHit]) -> dict[str, Any]:
        """Which signal a stall stop led by ``stoppers`` is (:func:`signal`)."""
        return signal(self.at, self.findings, stoppers)


def fruitless_retry(i: int, actions: Sequence[ActionFingerprint]) -> StopHit:
    return stall_hit(
        "fruitless_retry",
        "After the reflection the model asked again only for actions already found fruitless: "
        + ", ".join(a.short(80) for a in actions)
        + ".",
        {"actions": [a.canonical for a in actions]},
        StallSubject(i, actions[0].tool, tuple(a.short() for a in actions)),
    )
