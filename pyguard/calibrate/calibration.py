"""Calibrate maxIterations per task type: c(n), w(n), E[cost](N), N* with a bootstrap interval, the same on a
token budget, and the proposed budgets of pyguard's dynamic policy.

Entry points: :func:`calibrate_runs` (any iterable of RunRecords: a file, or a live runner yielding runs as
they finish) and :func:`calibrate_arrays` (columns, for speed). Per task type everything is array work; the
only Python loops are over task types and over the records during extraction.

The bootstrap resamples runs with replacement. Every statistic here depends on the runs only through the
event counts per (status, position) cell, so drawing a run-level resample is the same as drawing the cell
counts from a multinomial with the observed cell shares: B resamples cost one ``multinomial`` call over
3·H cells, whatever the number of runs. The per-call token means are held at their estimate in the iteration
bootstrap (their sampling error is small next to that of c); the token-axis bootstrap is exact.

Intervals: N*'s is the percentile interval of the bootstrap N*s (widened, if need be, to contain N*); the
band of c(n) is pointwise percentile, except where no success has been seen yet by n (every resample says 0)
where its upper edge is the exact binomial bound for zero events.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from pyguard.calibrate.cost import argmin_first, expected_cost, iteration_token_curve, token_unit_cost
from pyguard.calibrate.incidence import aalen_johansen, event_counts
from pyguard.calibrate.models import (
    CalibrationConfig,
    CalibrationReport,
    PolicyProposal,
    TaskTypeCalibration,
    TokenBudget,
)
from pyguard.calibrate.runs import RunArrays, RunStatus, extract_runs
from pyguard.calibrate.tokens import run_token_totals, token_axis, token_expected_cost
from pyguard.errors import InputError
from pyguard.events import RunRecord

__all__ = ["calibrate_runs", "calibrate_arrays", "calibrate_task_type", "check_task_type"]


def calibrate_runs(records: Iterable[RunRecord], config: CalibrationConfig) -> CalibrationReport:
    """Calibrate from RunRecords (consumed once; a generator is fine)."""
    return calibrate_arrays(extract_runs(records), config)


def calibrate_arrays(arrays: RunArrays, config: CalibrationConfig) -> CalibrationReport:
    """Calibrate every task type in ``arrays``. Raises :class:`InputError` listing every unusable task type."""
    if arrays.runs == 0:
        raise InputError("no runs to calibrate from: pass a trace file or folder holding recorded runs")
    order = sorted(range(len(arrays.task_types)), key=lambda k: arrays.task_types[k])
    per_type = [arrays.select(k) for k in order if np.any(arrays.type_code == k)]
    problems = [p for one in per_type for p in check_task_type(one, config)]
    if len(problems) == 1:
        raise InputError(problems[0])
    if problems:
        raise InputError(f"{len(problems)} problems with the runs:\n  - " + "\n  - ".join(problems))
    warnings: list[str] = []
    results = []
    for index, one in enumerate(per_type):
        rng = np.random.default_rng([config.seed, index])
        result, notes = calibrate_task_type(one, config, rng)
        results.append(result)
        warnings.extend(notes)
    return CalibrationReport(
        config=config,
        cost_unit="tokens" if config.price_per_1k_tokens is None else "currency",
        task_types=results,
        warnings=warnings,
    )


def check_task_type(one: RunArrays, config: CalibrationConfig) -> list[str]:
    """What makes one task type's runs unusable (empty when they are fine)."""
    name = one.task_types[0]
    problems = []
    if one.runs < config.min_runs:
        problems.append(
            f"task type {name!r} has {one.runs} run(s); calibration needs at least {config.min_runs} "
            "(100 or more for a useful interval): record more runs of this type"
        )
    successes = int(np.sum(one.status == RunStatus.SUCCESS))
    if successes == 0:
        failures = int(np.sum(one.status == RunStatus.FAILURE))
        problems.append(
            f"task type {name!r} has no successful run among its {one.runs} ({failures} failed, "
            f"{one.runs - failures} censored): c(n) is 0 for every n and no cap can be recommended; check its "
            "success labels (RunEnd.success_label / outcome) or record its runs with a higher cap"
        )
    if len(one.token_value) == 0:
        problems.append(
            f"task type {name!r}: none of its {one.runs} runs has token counts, so an iteration's cost is unknown; "
            "record token usage per model call (input/output/total tokens)"
        )
    return problems


def _quantile_pair(samples: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    alpha = (1.0 - confidence) / 2.0
    low = np.quantile(samples, alpha, axis=0, method="inverted_cdf")
    high = np.quantile(samples, 1.0 - alpha, axis=0, method="inverted_cdf")
    return low, high


def _resample(counts: np.ndarray, b: int, rng: np.random.Generator) -> np.ndarray:
    total = int(counts.sum())
    draws = rng.multinomial(total, counts.ravel() / total, size=b)
    return draws.reshape((b, *counts.shape))


def _share_index(curve: np.ndarray, share: float) -> int:
    """Smallest index where ``curve`` reaches ``share`` of its last value."""
    return int(np.argmax(curve >= share * curve[-1] - 1e-12))


def calibrate_task_type(
    one: RunArrays, config: CalibrationConfig, rng: np.random.Generator
) -> tuple[TaskTypeCalibration, list[str]]:
    """Calibrate one task type (``one`` holds a single type). Returns the result and warnings."""
    name = one.task_types[0]
    d = config.failure_cost
    unit = token_unit_cost(config.price_per_1k_tokens)
    notes: list[str] = []
    horizon = int(one.iterations.max())

    counts = event_counts(one.iterations, one.status, horizon)
    point = aalen_johansen(counts)
    curve = iteration_token_curve(one.token_iter, one.token_value, horizon, min_support=config.min_support)
    step_cost = curve.tokens * unit
    cost = expected_cost(point.reach, point.success, step_cost, d)
    n_star = int(argmin_first(cost)) + 1

    boot = aalen_johansen(_resample(counts, config.bootstrap, rng))
    boot_cost = expected_cost(boot.reach, boot.success, step_cost, d)
    boot_n = argmin_first(boot_cost) + 1
    c_low, c_high = _quantile_pair(boot.success, config.confidence)
    # No success seen by n: every resample says 0 and the percentile band collapses. Use the exact binomial
    # bound for zero events among the runs instead (about 3.7/runs at 95%).
    zero_bound = 1.0 - ((1.0 - config.confidence) / 2.0) ** (1.0 / one.runs)
    c_high = np.where(point.success <= 0.0, np.maximum(c_high, zero_bound), c_high)
    n_low, n_high = (int(v) for v in _quantile_pair(boot_n, config.confidence))

    still_going = float(point.survival[-1])
    at_horizon = n_star == horizon and still_going > 0
    if at_horizon:
        notes.append(
            f"task type {name!r}: N*={n_star} is the longest run recorded and {still_going:.0%} of runs were still "
            "going there, so the optimum may lie beyond the data: record runs with a higher cap"
        )
    tokenless = one.runs - len(np.unique(one.token_run))
    if tokenless:
        notes.append(
            f"task type {name!r}: {tokenless} of {one.runs} runs have no token counts; their calls were costed at "
            "the mean of the runs that have them"
        )

    totals = run_token_totals(one.runs, one.iterations, one.token_run, one.token_iter, one.token_value, curve.tokens)
    axis = token_axis(totals, one.status, max_grid=config.max_token_grid)
    tok_point = aalen_johansen(axis.counts)
    tok_cost = token_expected_cost(axis, tok_point, unit, d)
    t_index = int(argmin_first(tok_cost))
    tok_boot = aalen_johansen(_resample(axis.counts, config.bootstrap, rng))
    t_boot = axis.grid[argmin_first(token_expected_cost(axis, tok_boot, unit, d))]
    t_low, t_high = _quantile_pair(t_boot, config.confidence)

    keep_n = _share_index(point.success, config.hard_cap_share) + 1
    keep_t = axis.grid[_share_index(tok_point.success, config.hard_cap_share)]
    hard_cap = max(n_star, n_high, keep_n)
    max_tokens = int(np.ceil(max(axis.grid[t_index], t_high, keep_t)))
    rationale = (
        f"base budget = N* = {n_star} (minimum expected cost at d={d:g}); hard cap = max(N*, upper end of its "
        f"{config.confidence:.0%} interval = {n_high}, calls needed for {config.hard_cap_share:.0%} of the successes "
        f"seen = {keep_n}) = {hard_cap}; token budgets the same way on the token axis"
    )
    result = TaskTypeCalibration(
        task_type=name,
        runs=one.runs,
        successes=int(np.sum(one.status == RunStatus.SUCCESS)),
        failures=int(np.sum(one.status == RunStatus.FAILURE)),
        censored=int(np.sum(one.status == RunStatus.CENSORED)),
        horizon=horizon,
        c=point.success.tolist(),
        c_low=np.minimum(c_low, point.success).tolist(),
        c_high=np.maximum(c_high, point.success).tolist(),
        failure_incidence=point.failure.tolist(),
        at_risk=point.at_risk.astype(np.int64).tolist(),
        tokens_per_call=curve.tokens.tolist(),
        w=(point.reach * step_cost).tolist(),
        expected_cost=cost.tolist(),
        recommended_max_iterations=n_star,
        ci_low=min(n_low, n_star),
        ci_high=max(n_high, n_star),
        expected_cost_at_optimum=float(cost[n_star - 1]),
        success_at_optimum=float(point.success[n_star - 1]),
        at_horizon=at_horizon,
        token_budget=TokenBudget(
            recommended_tokens=int(np.ceil(axis.grid[t_index])),
            ci_low=int(np.floor(min(t_low, axis.grid[t_index]))),
            ci_high=int(np.ceil(max(t_high, axis.grid[t_index]))),
            expected_cost=float(tok_cost[t_index]),
            success_at_budget=float(tok_point.success[t_index]),
            grid_points=len(axis.grid),
        ),
        policy=PolicyProposal(
            base_budget=n_star,
            hard_cap=hard_cap,
            base_token_budget=int(np.ceil(axis.grid[t_index])),
            max_total_tokens=max_tokens,
            rationale=rationale,
        ),
    )
    return result, notes
