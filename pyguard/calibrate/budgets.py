"""The budgets a calibration proposes besides N*: the token budget (the same calibration on the token axis) and
pyguard's dynamic policy (base budget and hard cap); and the bootstrap pieces they share with N*'s interval."""

from __future__ import annotations

import numpy as np

from pyguard.calibrate.cost import argmin_first, token_unit_cost
from pyguard.calibrate.incidence import Incidence, aalen_johansen
from pyguard.calibrate.models import CalibrationConfig, PolicyProposal, TokenBudget
from pyguard.calibrate.runs import RunArrays
from pyguard.calibrate.tokens import run_token_totals, token_axis, token_expected_cost

__all__: list[str] = []


def quantile_pair(samples: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    alpha = (1.0 - confidence) / 2.0
    low = np.quantile(samples, alpha, axis=0, method="inverted_cdf")
    high = np.quantile(samples, 1.0 - alpha, axis=0, method="inverted_cdf")
    return low, high


def resample(counts: np.ndarray, b: int, rng: np.random.Generator) -> np.ndarray:
    total = int(counts.sum())
    draws = rng.multinomial(total, counts.ravel() / total, size=b)
    return draws.reshape((b, *counts.shape))


def share_index(curve: np.ndarray, share: float) -> int:
    """Smallest index where ``curve`` reaches ``share`` of its last value."""
    return int(np.argmax(curve >= share * curve[-1] - 1e-12))


def token_budget(
    one: RunArrays, config: CalibrationConfig, rng: np.random.Generator, curve_tokens: np.ndarray, successes: int
) -> tuple[TokenBudget, int, int]:
    """The recommendation on the token axis, its T* and its token hard cap."""
    unit, d = token_unit_cost(config.price_per_1k_tokens), config.failure_cost
    totals = run_token_totals(one.runs, one.iterations, one.token_run, one.token_iter, one.token_value, curve_tokens)
    axis = token_axis(totals, one.status, max_grid=config.max_token_grid)
    tok_point = aalen_johansen(axis.counts)
    tok_cost = token_expected_cost(axis, tok_point, unit, d)
    t_index = int(argmin_first(tok_cost))
    tok_boot = aalen_johansen(resample(axis.counts, config.bootstrap, rng))
    t_boot = axis.grid[argmin_first(token_expected_cost(axis, tok_boot, unit, d))]
    t_low, t_high = quantile_pair(t_boot, config.confidence)
    t_star = int(np.ceil(axis.grid[t_index]))
    keep_t = axis.grid[share_index(tok_point.success, config.hard_cap_share)] if successes else axis.grid[-1]
    t_cap = int(np.ceil(max(axis.grid[t_index], t_high, keep_t, config.headroom * axis.grid[t_index])))
    budget = TokenBudget(
        recommended_tokens=t_star,
        ci_low=int(np.floor(min(t_low, axis.grid[t_index]))),
        ci_high=int(np.ceil(max(t_high, axis.grid[t_index]))),
        expected_cost=float(tok_cost[t_index]),
        success_at_budget=float(tok_point.success[t_index]),
        grid_points=len(axis.grid),
    )
    return budget, t_star, t_cap


def policy(
    point: Incidence,
    config: CalibrationConfig,
    n_star: int,
    n_high: int,
    horizon: int,
    unit_name: str,
    tokens: tuple[int, int] | None,
) -> PolicyProposal:
    keep_n = share_index(point.success, config.hard_cap_share) + 1
    room = max(int(np.ceil(config.headroom * n_star)), n_star + 1)
    hard_cap = max(n_high, keep_n, room)
    rationale = (
        f"base budget = N* = {n_star} {unit_name} (minimum expected cost at d={config.failure_cost:g}); hard cap = "
        f"max(upper end of N*'s {config.confidence:.0%} interval = {n_high}, calls needed for "
        f"{config.hard_cap_share:.0%} of the successes seen = {keep_n}, {config.headroom:g} x the base budget = "
        f"{room}) = {hard_cap}, so a run that keeps learning can earn calls past the base budget (hard cap = base "
        "budget would make the dynamic policy a static cap)"
        + (f"; past n = {horizon} the data says nothing" if hard_cap > horizon else "")
        + ("; token budgets the same way on the token axis" if tokens is not None else "")
    )
    return PolicyProposal(
        base_budget=n_star,
        hard_cap=hard_cap,
        base_token_budget=None if tokens is None else tokens[0],
        max_total_tokens=None if tokens is None else tokens[1],
        rationale=rationale,
    )
