"""An escalated run's guard state rebuilt from its handle (:class:`pyguard.escalation.EscalationHandle`): the engine
replays the handle's events as the live guard judged them, so a resumed run goes on from the same state. Apart from
the handle, which is plain data, so that the handle (and :class:`pyguard.result.RunResult`, which carries it) stands
below the engine's users without the engine."""

from __future__ import annotations

from pyguard.base.decisions import Action, Decision
from pyguard.base.errors import BudgetError, HandleError
from pyguard.base.events import IterationEvent, Outcome
from pyguard.engine import Policy, RunSession
from pyguard.engine.paired import judged_before_next
from pyguard.escalation import EscalationHandle

__all__: list[str] = []


def rebuild(
    handle: EscalationHandle, policy: Policy, run_id: str
) -> tuple[list[IterationEvent], list[Decision], RunSession]:
    """A session of ``policy`` that has seen the handle's run as the live guard did, relabelled ``run_id``: each
    event, each call's tool results before the next call where the policy judges them then (the next event's
    observations; the last call's, :attr:`results`), each earlier resumption. Returns the events, the decisions
    the run recorded (one per call: a decision on a call's results that is not a continue replaces the one on
    its response) and the session, stopped where it stopped. :class:`HandleError` when it does not end in
    the handle's escalation (another policy, or no escalation configured)."""
    session = policy.new_run(run_id, handle.task_type)
    points = {p.after: p for p in handle.resumes}
    events = [e.model_copy(update={"run_id": run_id}) for e in handle.events]
    early = session.config.judge_results_early
    decisions: list[Decision] = []
    mismatch = (
        f"under this guard's policy the run {handle.run_id!r} does not escalate where its handle says (after "
        f"iteration {len(events)}, rule {handle.escalation.rule!r}): resume it with the policy it escalated under "
        "(its trace's run_start records it) and escalation configured"
    )
    try:
        for k, e in enumerate(events):
            decisions.append(session.observe(e))
            point = points.get(e.index)
            if point is not None:
                after = point.results or ()
            else:
                after = events[k + 1].observations if k + 1 < len(events) else handle.results or ()
            if early and not session.ended and judged_before_next(e, after):
                judged = session.observe_results(e.index, after)
                if judged.action is not Action.CONTINUE:  # as the live run records it
                    decisions[-1] = judged
            if point is not None:
                if session.stopped is None or session.stopped.outcome is not Outcome.ESCALATED:
                    raise HandleError(mismatch + f"; the earlier escalation after iteration {e.index} does not recur")
                decisions.append(
                    session.resume(point.budget, reason=f"resumed after escalation: {point.message!r:.80}")
                )
    except BudgetError:
        raise HandleError(mismatch) from None
    last = session.stopped
    if last is None or last.outcome is not Outcome.ESCALATED or last.iteration != len(events):
        got = "no stop" if last is None else f"{last.outcome} after iteration {last.iteration} ({last.rule})"
        raise HandleError(mismatch + f"; replayed: {got}")
    return events, decisions, session
