"""What a recommendation costs and saves, per task type: successes kept against no cap, the saving against
LangChain4j's default (100 round trips: up to 101 model calls) and against the 95th percentile of successful runs,
N* at half and double the failure cost, and, when no cap pays off, that not running the agent is cheaper, with the
cheapest cap that runs it. Everything is read off the curves already computed (no new estimate)."""

from __future__ import annotations

import numpy as np

from pyguard.calibrate.cost import argmin_first, expected_cost
from pyguard.calibrate.models import Decision
from pyguard.calibrate.runs import RunStatus
from pyguard.calibrate.units import format_cost

__all__: list[str] = []

LANGCHAIN4J_DEFAULT_ROUND_TRIPS = 100
"""AiServices' default ``maxToolCallingRoundTrips``: a run makes at most 101 model calls under it."""


def n_star_at(reach: np.ndarray, success: np.ndarray, step_cost: np.ndarray, d: float) -> int | None:
    """N* at failure cost ``d`` (1-based), None when no cap costs less than ``d`` (not running is cheaper)."""
    cost = expected_cost(reach, success, step_cost, d)
    return None if float(cost.min()) >= d else int(argmin_first(cost)) + 1


def decide(
    *,
    iterations: np.ndarray,
    status: np.ndarray,
    reach: np.ndarray,
    success: np.ndarray,
    step_cost: np.ndarray,
    cost: np.ndarray,
    d: float,
    unit: str,
    what: str,
) -> Decision:
    """The figures of :class:`Decision` for one task type (``cost``: E[cost](N) at ``d``; ``what``: runs/turns).
    ``cheapest_cap`` is N* when a cap pays off, else the cheapest cap within which some run succeeds."""
    horizon = len(cost)
    not_running = float(cost.min()) >= d
    # the cheapest cap that runs the agent: among the caps within which some run succeeds (a cap below the first
    # success only adds cost to not running it)
    runs_it = np.where(success > 0, cost, np.inf) if np.any(success > 0) else cost
    cheapest = int(argmin_first(runs_it)) + 1
    ok = iterations[status == RunStatus.SUCCESS]
    kept = int(np.sum(ok <= cheapest))
    default = min(LANGCHAIN4J_DEFAULT_ROUND_TRIPS + 1, horizon)
    p95 = int(np.quantile(ok, 0.95, method="inverted_cdf")) if len(ok) else None
    at = float(cost[cheapest - 1])
    decision = Decision(
        successes_uncapped=len(ok),
        successes_kept=kept,
        c_uncapped=float(success[-1]),
        default_calls=default,
        default_beyond_data=horizon < LANGCHAIN4J_DEFAULT_ROUND_TRIPS + 1,
        saving_vs_default=float(cost[default - 1]) - at,
        p95_success_calls=p95,
        saving_vs_p95=None if p95 is None else float(cost[p95 - 1]) - at,
        n_star_half_cost=n_star_at(reach, success, step_cost, d / 2),
        n_star_double_cost=n_star_at(reach, success, step_cost, d * 2),
        cheapest_cap=cheapest,
        cheapest_cost=at,
        not_running_cheaper=not_running,
        statement="",
    )
    decision.statement = _statement(decision, d, unit, what)
    return decision


def _statement(x: Decision, d: float, unit: str, what: str) -> str:
    money = lambda v: format_cost(v, unit)  # noqa: E731
    one = what[:-1]
    if not x.successes_uncapped:
        return (
            f"not running this agent is cheaper at any failure cost: none of its {what} succeeded, so every cap only "
            "adds cost (check the success labels, or record runs with a higher cap)"
        )
    cap = f"N = {x.cheapest_cap}"
    share = f"{x.successes_kept / x.successes_uncapped:.0%}" if x.successes_uncapped else "-"
    lost = x.successes_uncapped - x.successes_kept
    out = [f"{cap} keeps {x.successes_kept} of the {x.successes_uncapped} successful {what} ({share}; {lost} lost)"]
    default = f"LangChain4j's default (100 round trips, {x.default_calls} calls" + (
        ", where the data ends)" if x.default_beyond_data else ")"
    )
    out.append(f"saves {money(x.saving_vs_default)} per {one} against {default}")
    if x.p95_success_calls is not None and x.saving_vs_p95 is not None:
        out.append(
            f"{money(x.saving_vs_p95)} against the 95th percentile of successful {what} ({x.p95_success_calls} calls)"
        )
    half = "no cap" if x.n_star_half_cost is None else f"N* = {x.n_star_half_cost}"
    double = "no cap" if x.n_star_double_cost is None else f"N* = {x.n_star_double_cost}"
    # the failure cost as the user gave it, halved or doubled: never rounded as a token count (half of 1 is 0.5)
    out.append(f"at half the failure cost ({d / 2:,.6g}) {half}, at double ({d * 2:,.6g}) {double}")
    text = "; ".join(out)
    if x.not_running_cheaper:
        text = (
            f"not running this agent is cheaper at this failure cost: every cap costs at least d = {money(d)} per {one} "
            f"in expectation; the cheapest cap that runs it is {cap} ({money(x.cheapest_cost)} per {one}). " + text
        )
    return text
