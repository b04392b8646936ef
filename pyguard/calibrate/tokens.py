"""The same calibration with a token budget instead of an iteration count.

The "time" axis is the tokens a run has used so far. Each run contributes its total (the sum of its calls'
tokens; a call without a count is filled with the mean of that call position among the runs that reported
one) and its status. On a grid of budgets ``g_1 < ... < g_G`` (every distinct total, or quantiles of them
when there are many) a run is placed at the first grid point at or above its total, and the Aalen–Johansen
estimator gives ``c(T)`` and the survival ``S(T)``. A budget T stops a run when its tokens reach T, so

    E[cost](T) = unit * E[min(X, T)] + (1 - c(T)) * d,   E[min(X, T)] = integral_0^T S(t) dt,

with ``X`` the tokens a run would use unguarded. The integral is exact for the step function S on the grid
(runs placed at a grid point are counted as still going up to it, which over-states spend by less than one
grid step).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pyguard.calibrate.incidence import Incidence, event_counts

__all__: list[str] = []


@dataclass(frozen=True)
class TokenAxis:
    grid: np.ndarray
    """Budgets g_1..g_G (tokens), increasing."""
    counts: np.ndarray
    """Event counts ``(3, G)`` on that grid."""


def run_token_totals(
    runs: int,
    iterations: np.ndarray,
    token_run: np.ndarray,
    token_iter: np.ndarray,
    token_value: np.ndarray,
    tokens_per_call: np.ndarray,
) -> np.ndarray:
    """Total tokens per run; calls without a count are filled from ``tokens_per_call`` (index n-1)."""
    iterations = np.asarray(iterations, np.int64)
    cum = np.concatenate([[0.0], np.cumsum(tokens_per_call)])
    expected_all = cum[np.minimum(iterations, len(tokens_per_call))]
    recorded = np.bincount(token_run, weights=token_value, minlength=runs)
    recorded_expectation = np.bincount(token_run, weights=tokens_per_call[np.asarray(token_iter) - 1], minlength=runs)
    return recorded + (expected_all - recorded_expectation)


def token_axis(totals: np.ndarray, status: np.ndarray, *, max_grid: int = 1000) -> TokenAxis:
    """The budget grid and the event counts on it."""
    unique = np.unique(totals)
    if len(unique) > max_grid:
        grid = np.unique(np.quantile(totals, np.linspace(0.0, 1.0, max_grid), method="inverted_cdf"))
        grid[-1] = unique[-1]
    else:
        grid = unique
    position = np.searchsorted(grid, totals, side="left") + 1
    return TokenAxis(grid=grid.astype(np.float64), counts=event_counts(position, status, len(grid)))


def token_expected_cost(axis: TokenAxis, incidence: Incidence, unit_cost: float, failure_cost: float) -> np.ndarray:
    """E[cost](T) at every grid budget; curves may carry leading bootstrap axes."""
    widths = np.diff(np.concatenate([[0.0], axis.grid]))
    spend = np.cumsum(incidence.reach * widths, axis=-1)
    return unit_cost * spend + (1.0 - incidence.success) * failure_cost
