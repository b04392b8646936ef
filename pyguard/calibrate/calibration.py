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
from dataclasses import dataclass

import numpy as np

from pyguard.base.errors import InputError
from pyguard.base.events import RunRecord
from pyguard.calibrate.budgets import policy as propose_policy
from pyguard.calibrate.budgets import quantile_pair, resample
from pyguard.calibrate.budgets import token_budget as propose_token_budget
from pyguard.calibrate.cost import argmin_first, expected_cost, iteration_token_curve, token_unit_cost
from pyguard.calibrate.decisions import decide
from pyguard.calibrate.evidence import agent_cap_notes, censoring_summary
from pyguard.calibrate.incidence import Incidence, aalen_johansen, event_counts
from pyguard.calibrate.models import (
    CalibrationConfig,
    CalibrationReport,
    Censoring,
    SkippedType,
    TaskTypeCalibration,
    TokenBudget,
)
from pyguard.calibrate.runs import RunArrays, RunStatus, extract_runs
from pyguard.calibrate.units import cost_unit

__all__: list[str] = []


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
    unit = cost_unit(
        config.price_per_1k_tokens,
        config.cost_per_call,
        [one.task_types[0] for one in per_type if len(one.token_value)],
        [one.task_types[0] for one in per_type if not len(one.token_value)],
    )
    warnings: list[str] = []
    results: list[TaskTypeCalibration] = []
    skipped: list[SkippedType] = []
    for index, one in enumerate(per_type):
        problems = check_task_type(one, config, fallback_tokens=fallback)
        if problems:
            skipped.append(SkippedType(task_type=one.task_types[0], runs=one.run_count, reason="; ".join(problems)))
            continue
        rng = np.random.default_rng([config.seed, index])
        result, notes = calibrate_task_type(one, config, rng, fallback_tokens=fallback, cost_unit=unit)
        results.append(result)
        warnings.extend(notes)
    if not results:
        reasons = [f"{s.task_type!r}: {s.reason}" for s in skipped]
        if len(reasons) == 1:
            raise InputError(f"task type {reasons[0]}")
        raise InputError(f"no task type could be calibrated ({len(reasons)}):\n  - " + "\n  - ".join(reasons))
    return CalibrationReport(
        config=config,
        cost_unit=unit,
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
        f"with calls below {d / break_even:.2g}x their cost, or a higher success rate"
    ), break_even


@dataclass(frozen=True)
class _Axis:
    """One type's iteration axis: event counts, the point estimate, the cost of each call and E[cost](N)."""

    counts: np.ndarray
    point: Incidence
    step_cost: np.ndarray
    tokens_per_call: np.ndarray
    curve_tokens: np.ndarray | None
    cost: np.ndarray
    basis: str
    per_call: float | None


def _iteration_axis(one: RunArrays, config: CalibrationConfig, horizon: int, fallback_tokens: float | None) -> _Axis:
    unit = token_unit_cost(config.price_per_1k_tokens)
    counts = event_counts(one.iterations, one.status, horizon)
    point = aalen_johansen(counts)
    basis, per_call = _cost_basis(one, config, fallback_tokens, unit)
    curve_tokens = None
    if per_call is None:
        curve = iteration_token_curve(one.token_iter, one.token_value, horizon, min_support=config.min_support)
        curve_tokens = curve.tokens
        tokens_per_call, step_cost = curve.tokens, curve.tokens * unit
    else:
        tokens_per_call = np.full(horizon, per_call / unit if config.cost_per_call is None else per_call)
        step_cost = np.full(horizon, per_call)
    cost = expected_cost(point.reach, point.success, step_cost, config.failure_cost)
    return _Axis(counts, point, step_cost, tokens_per_call, curve_tokens, cost, basis, per_call)


def _notes(
    one: RunArrays,
    ax: _Axis,
    *,
    what: str,
    n_star: int,
    at_horizon: bool,
    no_cap: str | None,
    censoring: Censoring | None,
) -> list[str]:
    """The warnings of one type: how its runs were read, what its cost rests on, where the data ends."""
    name, horizon = one.task_types[0], len(ax.cost)
    notes: list[str] = []
    if ax.per_call is not None:
        notes.append(f"task type {name!r}: no token usage; costed as {ax.basis}")
    if censoring is not None and (censoring.statement and _censored_any(censoring)):
        notes.append(censoring.statement)
    notes.extend(agent_cap_notes(one))
    cut_at_end = int(ax.counts[RunStatus.CENSORED, horizon - 1])
    if cut_at_end >= 2:
        notes.append(
            f"task type {name!r}: {cut_at_end} {what} were censored at {horizon} calls, the end of the data: c(n) "
            f"past n = {horizon} is unknown (not flat)"
        )
    if at_horizon:
        still_going = float(ax.point.survival[-1])
        notes.append(
            f"task type {name!r}: N*={n_star} is the longest {what[:-1]} recorded and {still_going:.0%} were still "
            "going there, so the optimum may lie beyond the data: record runs with a higher cap"
        )
    if no_cap is not None:
        notes.append(f"task type {name!r}: {no_cap}")
    tokenless = one.runs - len(np.unique(one.token_run))
    if tokenless and ax.per_call is None:
        notes.append(
            f"task type {name!r}: {tokenless} of {one.runs} {what} have no token counts; their calls were costed at "
            f"the mean of the {what} that have them"
        )
    return notes


def _censored_any(c: Censoring) -> bool:
    return bool(
        c.cap_field + c.no_footer + c.stopped + c.tool_call_unlabelled + c.at_longest_run + c.failures_ended_early
    )


@dataclass(frozen=True)
class _Band:
    """The bootstrap's bands: of the success incidence, of E[cost](N), and of N* itself."""

    c_low: np.ndarray
    c_high: np.ndarray
    cost_low: np.ndarray
    cost_high: np.ndarray
    n_low: int
    n_high: int


def _bootstrap(one: RunArrays, ax: _Axis, config: CalibrationConfig, rng: np.random.Generator) -> _Band:
    boot = aalen_johansen(resample(ax.counts, config.bootstrap, rng))
    boot_cost = expected_cost(boot.reach, boot.success, ax.step_cost, config.failure_cost)
    cost_low, cost_high = quantile_pair(boot_cost, config.confidence)
    c_low, c_high = quantile_pair(boot.success, config.confidence)
    # No success seen by n: every resample says 0 and the percentile band collapses. Use the exact binomial
    # bound for zero events among the units instead (about 3.7/units at 95%).
    zero_bound = 1.0 - ((1.0 - config.confidence) / 2.0) ** (1.0 / one.runs)
    c_high = np.where(ax.point.success <= 0.0, np.maximum(c_high, zero_bound), c_high)
    n_low, n_high = (int(v) for v in quantile_pair(argmin_first(boot_cost) + 1, config.confidence))
    return _Band(c_low, c_high, cost_low, cost_high, n_low, n_high)


def _token_budget(
    one: RunArrays,
    config: CalibrationConfig,
    rng: np.random.Generator,
    ax: _Axis,
    successes: int,
    no_cap: str | None,
) -> tuple[TokenBudget | None, tuple[int, int] | None]:
    """The proposed token budget (None when no cap pays off) and its (t*, cap), when the type has a token curve."""
    token_budget, tokens = None, None
    if ax.curve_tokens is not None:
        budget, t_star, t_cap = propose_token_budget(one, config, rng, ax.curve_tokens, successes)
        tokens = (t_star, t_cap)
        token_budget = budget if no_cap is None else None
    return token_budget, tokens


def calibrate_task_type(
    one: RunArrays,
    config: CalibrationConfig,
    rng: np.random.Generator,
    *,
    fallback_tokens: float | None = None,
    cost_unit: str = "tokens",
) -> tuple[TaskTypeCalibration, list[str]]:
    """Calibrate one task type (``one`` holds a single type). Returns the result and warnings."""
    name = one.task_types[0]
    d = config.failure_cost
    per_turn = name in one.multi_turn
    unit_name = "model calls per user turn" if per_turn else "model calls per run"
    what = "turns" if per_turn else "runs"
    horizon = int(one.iterations.max())
    successes = int(np.sum(one.status == RunStatus.SUCCESS))
    ax = _iteration_axis(one, config, horizon, fallback_tokens)
    point, cost = ax.point, ax.cost
    n_star = int(argmin_first(cost)) + 1

    band = _bootstrap(one, ax, config, rng)
    n_low, n_high = band.n_low, band.n_high

    w = point.reach * ax.step_cost
    no_cap, break_even = _no_cap(name, d, successes, cost, point.success, w, unit_name)
    at_horizon = no_cap is None and n_star == horizon and float(point.survival[-1]) > 0
    censoring = censoring_summary(one, what)
    decision = decide(
        iterations=one.iterations,
        status=one.status,
        reach=point.reach,
        success=point.success,
        step_cost=ax.step_cost,
        cost=cost,
        d=d,
        unit=cost_unit,
        what=what,
    )
    notes = _notes(one, ax, what=what, n_star=n_star, at_horizon=at_horizon, no_cap=no_cap, censoring=censoring)
    token_budget, tokens = _token_budget(one, config, rng, ax, successes, no_cap)
    policy = None if no_cap is not None else propose_policy(point, config, n_star, n_high, horizon, unit_name, tokens)
    cut_at_end = int(ax.counts[RunStatus.CENSORED, horizon - 1])
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
        recording_cap=horizon if cut_at_end >= 2 else None,
        cost_basis=ax.basis,
        cost_per_call=ax.per_call,
        c=point.success.tolist(),
        c_low=np.minimum(band.c_low, point.success).tolist(),
        c_high=np.maximum(band.c_high, point.success).tolist(),
        first_success=int(np.argmax(point.success > 0)) + 1 if successes else None,
        failure_incidence=point.failure.tolist(),
        at_risk=point.at_risk.astype(np.int64).tolist(),
        tokens_per_call=np.asarray(ax.tokens_per_call, dtype=np.float64).tolist(),
        w=w.tolist(),
        expected_cost=cost.tolist(),
        expected_cost_low=np.minimum(band.cost_low, cost).tolist(),
        expected_cost_high=np.maximum(band.cost_high, cost).tolist(),
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
        censoring=censoring,
        decision=decision,
    )
    return result, notes
