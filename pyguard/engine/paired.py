"""Judging a call's tool results when they exist: before the next model call is sent, not with it.

The guarded model holds the request of call ``i + 1``, which carries call ``i``'s tool results; replay has them in
the next recorded call's request. :func:`observe_results` judges them there, so a stop replaces call
``i + 1`` (the wrap-up answers it) instead of following it, and a reflection goes into that same request. The next
call's :meth:`~pyguard.engine.session.RunSession.observe` then judges only what its response asks for
(:func:`judge_response`: caps, and a model that, right after a reflection, asks again only for actions
found fruitless). What stops and what reflects: :mod:`pyguard.engine.answered` (a reflection answers one stall), and
:mod:`pyguard.engine.run_shape` (an agent that revisits states as a matter of course is reflected on only; its caps
stop it). A session whose results never come apart is judged as before, one call later.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyguard.base.decisions import Action, Decision
from pyguard.base.errors import BudgetError
from pyguard.base.events import IterationEvent, Observation
from pyguard.engine import verdicts
from pyguard.engine.answered import MAX_REFLECTIONS, may_reflect, persisting
from pyguard.engine.conditions import RunState, StopHit
from pyguard.engine.fingerprint import ActionFingerprint
from pyguard.engine.reflected import fruitless_retry
from pyguard.engine.stall_report import StallReport
from pyguard.engine.steps import Step

RunSession = Any
"""A :class:`pyguard.engine.session.RunSession` (whose module imports this one: named here, not imported)."""

__all__: list[str] = []


def judged_before_next(event: IterationEvent, observations: Sequence[Observation]) -> bool:
    """True when the guard judges ``event``'s tool results before the next call is sent: the call asked for tools
    (it did not answer) and the next request carries a tool result among ``observations`` (its new messages), as
    the guarded model sees it. Replay and a resumption rebuild the same moments from the recorded events."""
    return not event.is_final and any(o.kind == "tool" for o in observations)


def observe_results(session: RunSession, index: int, observations: Sequence[Observation]) -> Decision:
    """Judge the tool results of model call ``index`` (the last one observed) before the next call is sent. A
    STOP means the run ends after call ``index`` (the next call is replaced by the wrap-up, or never made); a
    REFLECT goes into the next call's request."""
    last = session._last_event
    if session._end is not None or session._stop is not None:
        raise BudgetError(f"run {session.run_id!r} has ended or was stopped: no results to judge")
    if index != session._iterations or last is None or last.is_final or session._judged == index:
        why = "it answered" if last is not None and last.is_final else "judged already"
        raise BudgetError(
            f"run {session.run_id!r}: the results of call {index} cannot be judged now (the last call is "
            f"{session._iterations}{'' if index != session._iterations else ': ' + why})"
        )
    session._judged = index
    session._judged_results = tuple(observations)
    pending = session._pending
    actions = tuple(p[1] for p in pending)
    results = session._reader.read_observations(pending, observations)
    report = session._detector.observe(Step(index, results, actions, tuple(p[1] for p in pending if p[3]), True))
    if session.stall_config.read_run_shape:
        session._shape.observe(actions, [r.result_key for r in results if r.action is not None])
    session.gains.append(report.gain)
    decision = _judge_results(session, index, report)
    session.decisions.append(decision)
    if decision.action is Action.STOP:
        session._stop = decision
    return decision


def _judge_results(session: RunSession, i: int, report: StallReport) -> Decision:
    """Call ``i``'s results judged: the stall the last reflection answered, persisting in its window, stops; a
    new stall is reflected on (a bounded number per turn; none while the model still answers the last one);
    then the caps and the budget, through the run's one stop condition."""
    found = list(report.stalls)
    session.stalls.extend(found)
    reflected = session._reflected
    revisits = session._shape.revisits_expected
    persists = session.settings.stop_on_repeated_evidence  # off: a reflected stall never stops (reflect-only)
    stoppers = persisting(reflected.at, reflected.findings, i, found, revisits=revisits) if persists else []
    limit = MAX_REFLECTIONS if session.settings.max_reflections else 0
    if not limit and not revisits:  # no reflections at all: a finding that may stop stops at once
        stoppers = [h for h in found if h.action is Action.STOP]
    if stoppers:
        stalls, reflecting = stoppers, False
    elif found and may_reflect(reflected.count, reflected.at, i, limit, found, reflected.rules):
        stalls, reflecting = found, True
    else:
        stalls, reflecting = [], False
    s = session.settings
    neutral = report.only_polls or revisits  # revisits expected: the budget does not bind, the caps do
    budget = session.budget
    if reflecting:
        budget = min(budget + s.extension, session._hard_cap)
    elif report.gain >= s.earn_threshold or neutral:
        budget = min(budget + max(s.earn_per_iteration, int(neutral)), session._hard_cap)
    # a stop is the verdict when the turn's reflections count as used up, a reflection while one is left
    state = _paired_state(session, i, budget, report.gain, tuple(stalls), used_up=not reflecting)
    return verdicts.decide(session, state, session._condition(state), ())


def judge_response(
    session: RunSession, i: int, event: IterationEvent, actions: tuple[ActionFingerprint, ...]
) -> Decision:
    """Call ``i``'s response, its request's results judged already: the model asking again, right after a
    reflection and before trying anything new, only for actions found fruitless stops before they run; then
    the caps (this call's tokens, cost, calls) and the budget, which is spent where a call's event is judged
    without results (the results of call ``i`` earn it, at :func:`observe_results`, before call ``i + 1``)."""
    if event.is_final:
        return Decision(
            action=Action.CONTINUE, reason="the model answered", iteration=i, turn=session.turn, budget=session.budget
        )
    reflected = session._reflected
    at = reflected.at
    fruitless = at is not None and 0 < i - at <= 2 and session._detector.all_fruitless(actions)
    if at is not None and i > at and not fruitless:
        reflected.tried_new = True  # something new since the reflection: its results will tell
    stalls: tuple[StopHit, ...] = ()
    if (
        session.settings.stop_on_fruitless_retry
        and fruitless
        and not reflected.tried_new
        and not session._shape.revisits_expected
        and not any(p[3] for p in session._pending)
    ):
        stalls = (fruitless_retry(i, actions),)
        session.stalls.extend(stalls)
    state = _paired_state(session, i, session.budget, 0.0, stalls, used_up=True)
    return verdicts.decide(session, state, session._condition(state), actions)


def _paired_state(
    session: RunSession, i: int, budget: int, gain: float, stalls: tuple[StopHit, ...], *, used_up: bool
) -> RunState:
    count = session._reflected.count
    return session._run_state(i, budget, gain, stalls, count if used_up else count + 1)
