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
    SkippedType,
    TaskTypeCalibration,
    TokenBudget,
)
from pyguard.calibrate.runs import RunArrays, RunStatus, extract_runs
from pyguard.calibrate.tokens import run_token_totals, token_axis, token_expected_cost
from pyguard.errors import InputError
from pyguard.events import RunRecord

__all__ = ["calibrate_runs", "calibrate_arrays", "calibrate_task_type"]


def calibrate_runs(records: Iterable[RunRecord], config: CalibrationConfig) -> CalibrationReport:
    """Calibrate from RunRecords (consumed once; a generator is fine)."""
    arrays = extract_runs(
        records, estimate_tokens=config.estimate_tokens_from_text, chars_per_token=config.chars_per_token
    )
    return calibrate_arrays(arrays, config)


def _fallback_tokens(per_type: list[RunArrays]) -> float | None:
    """Mean recorded tokens per call over every type that has usage (the cost of a call for types without)."""
    values = [one.token_value for one in per_type if len(one.token_value)]
    return float(np.mean(np.concatenate(values))) if values else None


def calibrate_arrays(arrays: RunArrays, config: CalibrationConfig) -> CalibrationReport:
    """Calibrate every task type in ``arrays``. A type that cannot be calibrated is skipped with its reason
    (``report.skipped``); raises :class:`InputError` only when no type can be."""
    if arrays.runs == 0:
        raise InputError("no runs to calibrate from: pass a trace file or folder holding recorded runs")
    order = sorted(range(len(arrays.task_types)), key=lambda k: arrays.task_types[k])
    per_type = [arrays.select(k) for k in order if np.any(arrays.type_code == k)]
    fallback = _fallback_tokens(per_type)
    warnings: list[str] = []
    results: list[TaskTypeCalibration] = []
    skipped: list[SkippedType] = []
    for index, one in enumerate(per_type):
        problems = check_task_type(one, config, fallback_tokens=fallback)
        if problems:
            skipped.append(SkippedType(task_type=one.task_types[0], runs=one.run_count, reason="; ".join(problems)))
            continue
        rng = np.random.default_rng([config.seed, index])
        result, notes = calibrate_task_type(one, config, rng, fallback_tokens=fallback)
        results.append(result)
        warnings.extend(notes)
    if not results:
        reasons = [f"{s.task_type!r}: {s.reason}" for s in skipped]
        if len(reasons) == 1:
            raise InputError(f"task type {reasons[0]}")
        raise InputError(f"no task type could be calibrated ({len(reasons)}):\n  - " + "\n  - ".join(reasons))
    return CalibrationReport(
        config=config,
        cost_unit="tokens" if config.price_per_1k_tokens is None else "currency",
        task_types=results,
        skipped=skipped,
        warnings=warnings,
    )


def check_task_type(one: RunArrays, config: CalibrationConfig, *, fallback_tokens: float | None = None) -> list[str]:
    """What makes one task type's runs unusable (empty when they are fine). A type without any success is
    usable: its report says that no cap pays off."""
    name = one.task_types[0]
    problems = []
    if one.runs < config.min_runs:
        problems.append(
            f"task type {name!r} has {one.runs} run(s); calibration needs at least {config.min_runs} "
            "(100 or more for a useful interval): record more runs of this type"
        )
    if len(one.token_value) == 0 and config.cost_per_call is None and fallback_tokens is None:
        problems.append(
            f"task type {name!r}: none of its {one.run_count} runs has token counts, so a call's cost is unknown; "
            "pass --cost-per-call C (the cost of one model call, in the failure cost's unit) to calibrate it in "
            "model calls, or --estimate-tokens-from-text, or record token usage per model call"
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


def _cost_basis(
    one: RunArrays, config: CalibrationConfig, fallback: float | None, unit: float
) -> tuple[str, float | None]:
    """How a call's cost is known, and the constant cost per call (cost units) when there are no tokens."""
    if len(one.token_value):
        estimated = int(one.token_estimated.sum()) if one.token_estimated is not None else 0
        if estimated == 0:
            return "recorded tokens", None
        if estimated == len(one.token_value):
            return f"tokens estimated from text length ({config.chars_per_token:g} characters per token)", None
        return (
            f"recorded tokens; {estimated} of {len(one.token_value)} calls estimated from text length "
            f"({config.chars_per_token:g} characters per token)"
        ), None
    if config.cost_per_call is not None:
        return (
            f"model calls at the stated cost of {config.cost_per_call:g} per call (no token usage)",
            config.cost_per_call,
        )
    assert fallback is not None
    return (
        f"model calls at {fallback:,.0f} tokens per call, the mean of the task types with usage (an assumption: "
        "this type reports none; pass --cost-per-call to state its cost)"
    ), fallback * unit


def _no_cap(
    name: str, d: float, successes: int, cost: np.ndarray, c: np.ndarray, w: np.ndarray, unit_name: str
) -> tuple[str | None, float | None]:
    """The statement when no cap pays off (every cap costs at least d, what not running the agent costs)."""
    spent = np.cumsum(w)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(c > 0, spent / np.where(c > 0, c, 1.0), np.inf)
    break_even = float(ratio.min()) if np.isfinite(ratio.min()) else None
    if successes == 0:
        return (
            f"no cap pays off: no {unit_name.split(' per ')[-1]} of {name!r} succeeded, so c(n) = 0 at every n and "
            "running the agent only adds cost; check the success labels, or record runs with a higher cap"
        ), None
    if float(cost.min()) < d or break_even is None:
        return None, break_even
    n_be = int(np.argmin(ratio)) + 1
    return (
        f"no cap pays off at failure cost d = {d:g}: every cap N costs at least d in expectation (the cost of "
        f"not running the agent); a cap starts to pay off above d = {break_even:,.4g} (then N = {n_be}), or "
        f"with calls below {d / break_even:.2f}x their cost, or a higher success rate"
    ), break_even


def calibrate_task_type(
    one: RunArrays, config: CalibrationConfig, rng: np.random.Generator, *, fallback_tokens: float | None = None
) -> tuple[TaskTypeCalibration, list[str]]:
    """Calibrate one task type (``one`` holds a single type). Returns the result and warnings."""
    name = one.task_types[0]
    d = config.failure_cost
    unit = token_unit_cost(config.price_per_1k_tokens)
    per_turn = name in one.multi_turn
    unit_name = "model calls per user turn" if per_turn else "model calls per run"
    what = "turns" if per_turn else "runs"
    notes: list[str] = []
    horizon = int(one.iterations.max())
    successes = int(np.sum(one.status == RunStatus.SUCCESS))

    counts = event_counts(one.iterations, one.status, horizon)
    point = aalen_johansen(counts)
    basis, per_call = _cost_basis(one, config, fallback_tokens, unit)
    if per_call is None:
        curve = iteration_token_curve(one.token_iter, one.token_value, horizon, min_support=config.min_support)
        tokens_per_call = curve.tokens
        step_cost = curve.tokens * unit
    else:
        tokens_per_call = np.full(horizon, per_call / unit if config.cost_per_call is None else per_call)
        step_cost = np.full(horizon, per_call)
        notes.append(f"task type {name!r}: no token usage; costed as {basis}")
    cost = expected_cost(point.reach, point.success, step_cost, d)
    n_star = int(argmin_first(cost)) + 1

    boot = aalen_johansen(_resample(counts, config.bootstrap, rng))
    boot_cost = expected_cost(boot.reach, boot.success, step_cost, d)
    cost_low, cost_high = _quantile_pair(boot_cost, config.confidence)
    boot_n = argmin_first(boot_cost) + 1
    c_low, c_high = _quantile_pair(boot.success, config.confidence)
    # No success seen by n: every resample says 0 and the percentile band collapses. Use the exact binomial
    # bound for zero events among the units instead (about 3.7/units at 95%).
    zero_bound = 1.0 - ((1.0 - config.confidence) / 2.0) ** (1.0 / one.runs)
    c_high = np.where(point.success <= 0.0, np.maximum(c_high, zero_bound), c_high)
    n_low, n_high = (int(v) for v in _quantile_pair(boot_n, config.confidence))
    first_success = int(np.argmax(point.success > 0)) + 1 if successes else None

    cut_at_end = int(counts[RunStatus.CENSORED, horizon - 1])
    recording_cap = horizon if cut_at_end >= 2 else None
    if recording_cap is not None:
        notes.append(
            f"task type {name!r}: {cut_at_end} {what} were cut off at {horizon} calls while still calling tools: "
            f"the recording's own cap. c(n) past n = {horizon} is unknown (not flat)"
        )
    w = point.reach * step_cost
    no_cap, break_even = _no_cap(name, d, successes, cost, point.success, w, unit_name)
    still_going = float(point.survival[-1])
    at_horizon = no_cap is None and n_star == horizon and still_going > 0
    if at_horizon:
        notes.append(
            f"task type {name!r}: N*={n_star} is the longest {what[:-1]} recorded and {still_going:.0%} were still "
            "going there, so the optimum may lie beyond the data: record runs with a higher cap"
        )
    if no_cap is not None:
        notes.append(f"task type {name!r}: {no_cap}")
    tokenless = one.runs - len(np.unique(one.token_run))
    if tokenless and per_call is None:
        notes.append(
            f"task type {name!r}: {tokenless} of {one.runs} {what} have no token counts; their calls were costed at "
            f"the mean of the {what} that have them"
        )

    token_budget = None
    t_star = t_cap = None
    if per_call is None:
        totals = run_token_totals(
            one.runs, one.iterations, one.token_run, one.token_iter, one.token_value, curve.tokens
        )
        axis = token_axis(totals, one.status, max_grid=config.max_token_grid)
        tok_point = aalen_johansen(axis.counts)
        tok_cost = token_expected_cost(axis, tok_point, unit, d)
        t_index = int(argmin_first(tok_cost))
        tok_boot = aalen_johansen(_resample(axis.counts, config.bootstrap, rng))
        t_boot = axis.grid[argmin_first(token_expected_cost(axis, tok_boot, unit, d))]
        t_low, t_high = _quantile_pair(t_boot, config.confidence)
        t_star = int(np.ceil(axis.grid[t_index]))
        keep_t = axis.grid[_share_index(tok_point.success, config.hard_cap_share)] if successes else axis.grid[-1]
        t_cap = int(np.ceil(max(axis.grid[t_index], t_high, keep_t, config.headroom * axis.grid[t_index])))
        if no_cap is None:
            token_budget = TokenBudget(
                recommended_tokens=t_star,
                ci_low=int(np.floor(min(t_low, axis.grid[t_index]))),
                ci_high=int(np.ceil(max(t_high, axis.grid[t_index]))),
                expected_cost=float(tok_cost[t_index]),
                success_at_budget=float(tok_point.success[t_index]),
                grid_points=len(axis.grid),
            )

    policy = None
    if no_cap is None:
        keep_n = _share_index(point.success, config.hard_cap_share) + 1
        room = max(int(np.ceil(config.headroom * n_star)), n_star + 1)
        hard_cap = max(n_high, keep_n, room)
        rationale = (
            f"base budget = N* = {n_star} {unit_name} (minimum expected cost at d={d:g}); hard cap = max(upper end "
            f"of N*'s {config.confidence:.0%} interval = {n_high}, calls needed for {config.hard_cap_share:.0%} of "
            f"the successes seen = {keep_n}, {config.headroom:g} x the base budget = {room}) = {hard_cap}, so a run "
            f"that keeps learning can earn calls past the base budget (hard cap = base budget would make the "
            f"dynamic policy a static cap)"
            + (f"; past n = {horizon} the data says nothing" if hard_cap > horizon else "")
            + ("; token budgets the same way on the token axis" if t_star is not None else "")
        )
        policy = PolicyProposal(
            base_budget=n_star, hard_cap=hard_cap, base_token_budget=t_star, max_total_tokens=t_cap, rationale=rationale
        )

    result = TaskTypeCalibration(
        task_type=name,
        runs=one.run_count,
        units=one.runs,
        per_turn=per_turn,
        unit=unit_name,
        successes=successes,
        failures=int(np.sum(one.status == RunStatus.FAILURE)),
        censored=int(np.sum(one.status == RunStatus.CENSORED)),
        horizon=horizon,
        recording_cap=recording_cap,
        cost_basis=basis,
        cost_per_call=per_call,
        c=point.success.tolist(),
        c_low=np.minimum(c_low, point.success).tolist(),
        c_high=np.maximum(c_high, point.success).tolist(),
        first_success=first_success,
        failure_incidence=point.failure.tolist(),
        at_risk=point.at_risk.astype(np.int64).tolist(),
        tokens_per_call=np.asarray(tokens_per_call, dtype=np.float64).tolist(),
        w=w.tolist(),
        expected_cost=cost.tolist(),
        expected_cost_low=np.minimum(cost_low, cost).tolist(),
        expected_cost_high=np.maximum(cost_high, cost).tolist(),
        recommended_max_iterations=n_star if no_cap is None else None,
        ci_low=min(n_low, n_star) if no_cap is None else None,
        ci_high=max(n_high, n_star) if no_cap is None else None,
        expected_cost_at_optimum=float(cost[n_star - 1]),
        success_at_optimum=float(point.success[n_star - 1]),
        at_horizon=at_horizon,
        no_cap=no_cap,
        break_even_failure_cost=break_even,
        token_budget=token_budget,
        policy=policy,
    )
    return result, notes
