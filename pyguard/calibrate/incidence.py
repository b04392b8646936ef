"""c(n): the probability that a run has finished successfully within n model calls, under right censoring.

Why not plain Kaplan–Meier on "success": a run that ends with a wrong final answer (a *failure*) will never
succeed later, so treating it as censored (as KM would) over-estimates c(n); treating a censored run as a
failure under-estimates it. Success and failure are *competing* terminal events and censoring is a third,
non-terminal exit. The Aalen–Johansen estimator is the correct generalisation of Kaplan–Meier to that case
(with one event type it reduces exactly to 1 - KM):

    r(n)   = runs still going at call n (no terminal event and not censored before n)
    h_s(n) = successes at n / r(n),   h_f(n) = failures at n / r(n)       (cause-specific hazards)
    S(n)   = prod_{k<=n} (1 - h_s(k) - h_f(k))                             (overall survival: still going)
    c(n)   = sum_{k<=n} S(k-1) * h_s(k)                                    (cumulative incidence of success)

A run censored at n made n calls without a terminal event: it is at risk at n and leaves afterwards.
Assumption: censoring is non-informative (runs were cut off for reasons unrelated to how they would have
ended), which holds for a generous recording cap but not for runs a stall detector stopped.

Everything works on event-count arrays of shape ``(..., 3, H)`` (rows indexed by
:class:`~pyguard.calibrate.runs.RunStatus`), so a bootstrap computes B curves in one call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pyguard.calibrate.runs import RunStatus

__all__: list[str] = []


@dataclass(frozen=True)
class Incidence:
    """Curves indexed by n-1 (last axis), for n = 1..H; leading axes as in the counts given."""

    success: np.ndarray
    """c(n): cumulative incidence of success."""
    failure: np.ndarray
    """Cumulative incidence of failure (a final answer judged wrong)."""
    survival: np.ndarray
    """S(n): probability a run is still going after n calls."""
    reach: np.ndarray
    """S(n-1): probability a run makes its n-th call (what the n-th call's cost is weighted by)."""
    at_risk: np.ndarray
    """r(n): runs still going at call n."""


def event_counts(positions: np.ndarray, status: np.ndarray, horizon: int) -> np.ndarray:
    """Counts ``(3, horizon)``: row ``status``, column ``position - 1`` (positions are 1-based, <= horizon)."""
    flat = np.asarray(status, np.int64) * horizon + (np.asarray(positions, np.int64) - 1)
    return np.bincount(flat, minlength=3 * horizon).reshape(3, horizon)


def aalen_johansen(counts: np.ndarray) -> Incidence:
    """The Aalen–Johansen estimate from counts of shape ``(..., 3, H)``. Where no run is at risk the hazards
    are 0 (curves stay flat), so an empty tail never produces NaN."""
    counts = np.asarray(counts, dtype=np.float64)
    censored = counts[..., RunStatus.CENSORED, :]
    success = counts[..., RunStatus.SUCCESS, :]
    failure = counts[..., RunStatus.FAILURE, :]
    exits = censored + success + failure
    total = exits.sum(axis=-1, keepdims=True)
    left_before = np.cumsum(exits, axis=-1) - exits
    at_risk = total - left_before
    safe = np.where(at_risk > 0, at_risk, 1.0)
    h_s = np.where(at_risk > 0, success / safe, 0.0)
    h_f = np.where(at_risk > 0, failure / safe, 0.0)
    survival = np.cumprod(1.0 - h_s - h_f, axis=-1)
    reach = np.concatenate([np.ones_like(survival[..., :1]), survival[..., :-1]], axis=-1)
    return Incidence(
        success=np.cumsum(reach * h_s, axis=-1),
        failure=np.cumsum(reach * h_f, axis=-1),
        survival=survival,
        reach=reach,
        at_risk=at_risk,
    )
