"""The stop condition's verdict made a run's decision: none, continue; a reflection, reflect (counted, remembered,
its text built); a stop, stop with the hit's outcome and rule (``[escalation]`` may make it ``escalated``). The one
place a :class:`~pyguard.base.decisions.Decision` is built from a verdict, whether a call's event or its results were
judged (:mod:`pyguard.engine.session`, :mod:`pyguard.engine.paired`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyguard.base.decisions import Action, Decision
from pyguard.base.events import Outcome
from pyguard.engine.conditions import RunState, StopHit
from pyguard.engine.fingerprint import ActionFingerprint
from pyguard.engine.reflection import build_reflection
from pyguard.engine.usage import UsageState

RunSession = Any
"""A :class:`pyguard.engine.session.RunSession` (whose module imports this one: named here, not imported)."""

__all__: list[str] = []


def decide(
    session: RunSession, state: RunState, hit: StopHit | None, actions: tuple[ActionFingerprint, ...]
) -> Decision:
    """The decision the stop condition's verdict ``hit`` is (:meth:`StopCondition.__call__`): none, continue;
    a reflection, reflect; a stop, stop with its outcome and rule. The budget becomes the state's (earned or
    extended) unless a stall or a limit stops the run before it is spent."""
    i, usage = state.iteration, state.usage
    if hit is None or hit.action is Action.REFLECT or hit.budget:
        session.budget = state.budget
    if hit is None:
        return continued(session, i, state.gain)
    leaves = hit.leaves()
    stalls = [h for h in leaves if h.stall is not None]
    limits = [h for h in leaves if h.stall is None and not h.budget]
    if hit.action is Action.REFLECT:
        return _reflect(session, i, hit, stalls, limits, usage, actions)
    if hit.stall is not None:
        again = " again after a reflection" if session.reflections else ""
        stoppers = [h for h in stalls if h.action is Action.STOP]
        reason = f"stalled{again}: {hit.message}"
        signal: dict[str, Any] | None = session._reflected.signal(stoppers)
    else:
        names = ", ".join(h.rule.removeprefix("cap:") for h in limits)
        reason = hit.message if hit.budget else f"hard cap reached ({names}): {hit.message}"
        signal = None
    outcome = hit.outcome
    if outcome in (Outcome.STALLED, Outcome.EXPIRED) and session.escalation.escalates(
        hit.rule, outcome is Outcome.STALLED
    ):
        outcome = Outcome.ESCALATED
    found = evidence(session, stalls, limits, usage)
    return Decision.built(
        Action.STOP,
        reason=reason,
        rule=hit.rule,
        outcome=outcome,
        iteration=i,
        turn=session.turn,
        budget=session.budget,
        evidence=found if signal is None else {**found, "signal": signal},
    )


def _reflect(
    session: RunSession,
    i: int,
    hit: StopHit,
    stalls: list[StopHit],
    limits: list[StopHit],
    usage: UsageState,
    actions: tuple[ActionFingerprint, ...],
) -> Decision:
    """A reflection on ``stalls`` (``hit`` leading): counted, remembered (a second signal is compared with it)
    and sent with the next model call."""
    session._reflected.record(i, stalls, actions, session._detector)
    text = build_reflection(stalls, remaining_calls=session.budget - i, config=session.config.reflection)
    return Decision.built(
        Action.REFLECT,
        reason=hit.message,
        rule=hit.rule,
        reflection=text,
        iteration=i,
        turn=session.turn,
        budget=session.budget,
        evidence=evidence(session, stalls, limits, usage),
    )


def continued(session: RunSession, i: int, gain: float, reason: str = "") -> Decision:
    """Go on after call ``i`` (``reason``: why, when it is not plain)."""
    return Decision.built(
        Action.CONTINUE,
        reason=reason,
        iteration=i,
        turn=session.turn,
        budget=session.budget,
        evidence={"gain": round(gain, 4)},
    )


def evidence(
    session: RunSession, stalls: Sequence[StopHit], hits: Sequence[StopHit], usage: UsageState
) -> dict[str, Any]:
    """A reflection's or a stop's evidence: the stall rules' hits and the limits' behind it, the run's gains,
    budget, reflections and usage."""
    return {
        "flags": [h.as_dict() for h in stalls],
        "caps": [h.as_dict() for h in hits],
        "gains": [round(g, 4) for g in session.gains],
        "budget": session.budget,
        "base_budget": session.settings.base_budget,
        "hard_cap": session.settings.hard_cap,
        "reflections": session.reflections,
        "usage": usage.as_dict(),
    }
