"""w(n) and E[cost](N): what an iteration costs and what a cap N costs in expectation.

    E[cost](N) = sum_{n<=N} w(n) + (1 - c(N)) * d

``w(n)`` is the *expected* cost of the n-th model call per run started under the cap:
``w(n) = S(n-1) * price(tokens(n))``, where ``tokens(n)`` is the mean token count of the n-th call among runs
that made it (it grows with n: every call re-reads the history) and ``S(n-1)`` the probability a run makes
that call at all (runs that already answered pay nothing more). With that reading the formula is the exact
expected cost of running every task under a cap N and paying ``d`` for every run that has not succeeded by
then. Its marginal form gives the stopping rule: go on to call N+1 while
``h_s(N+1) * d > price(tokens(N+1))``, i.e. while the chance that the next call succeeds pays for it.

Cost unit: with a price per 1k tokens, cost is ``tokens / 1000 * price`` (and ``d`` is in that currency);
without one, a token is the unit of cost (and ``d`` is in tokens).

Past the data, and where fewer than ``min_support`` runs reached a call, ``tokens(n)`` comes from a
straight line fitted (weighted by the number of runs) to the well-supported calls: context grows about
linearly with the number of calls.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pyguard.base.errors import InputError

__all__: list[str] = []


@dataclass(frozen=True)
class TokenCurve:
    """Mean tokens of call n (index n-1), observed where supported, fitted elsewhere."""

    tokens: np.ndarray
    observed: np.ndarray
    """Observed mean (NaN where no run reported tokens for that call)."""
    support: np.ndarray
    """How many runs reported tokens for call n."""
    intercept: float
    slope: float


def token_unit_cost(price_per_1k_tokens: float | None) -> float:
    """Cost of one token: ``price / 1000``, or 1.0 (tokens as the unit) when no price is given."""
    return 1.0 if price_per_1k_tokens is None else price_per_1k_tokens / 1000.0


def iteration_token_curve(
    token_iter: np.ndarray, token_value: np.ndarray, horizon: int, *, min_support: int = 5
) -> TokenCurve:
    """Mean tokens of calls 1..horizon. Raises :class:`InputError` when no call has a token count."""
    if len(token_value) == 0:
        raise InputError(
            "no token counts in these runs: record usage (input/output/total tokens per model call) "
            "so the cost of an iteration is known"
        )
    idx = np.asarray(token_iter, np.int64) - 1
    in_range = idx < horizon
    support = np.bincount(idx[in_range], minlength=horizon).astype(np.int64)
    sums = np.bincount(idx[in_range], weights=np.asarray(token_value)[in_range], minlength=horizon)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = np.where(support > 0, sums / np.maximum(support, 1), np.nan)
    n = np.arange(1, horizon + 1, dtype=np.float64)
    good = support >= min_support
    if good.sum() < 2:
        good = support > 0
    if good.sum() >= 2:
        slope, intercept = np.polyfit(n[good], observed[good], 1, w=np.sqrt(support[good]))
        slope = max(float(slope), 0.0)
        intercept = float(np.average(observed[good] - slope * n[good], weights=support[good]))
    else:
        slope, intercept = 0.0, float(observed[good][0])
    fitted = np.maximum(intercept + slope * n, float(np.nanmin(observed[good])))
    tokens = np.where(support >= min_support, observed, fitted)
    return TokenCurve(tokens=tokens, observed=observed, support=support, intercept=intercept, slope=slope)


def expected_cost(reach: np.ndarray, success: np.ndarray, step_cost: np.ndarray, failure_cost: float) -> np.ndarray:
    """E[cost](N) for N = 1..H from curves of shape ``(..., H)``: ``cumsum(reach * step_cost) + (1 - c) * d``.
    ``step_cost`` is the cost of call n for a run that makes it (broadcast against ``reach``)."""
    return np.cumsum(reach * step_cost, axis=-1) + (1.0 - success) * failure_cost


def argmin_first(values: np.ndarray) -> np.ndarray:
    """Index of the minimum along the last axis, the smallest index on ties (up to 1e-12 relative)."""
    low = values.min(axis=-1, keepdims=True)
    tol = 1e-12 * np.maximum(np.abs(low), 1.0)
    return np.argmax(values <= low + tol, axis=-1)
