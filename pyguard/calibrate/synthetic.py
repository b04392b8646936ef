"""Synthetic runs from a known distribution, with the true curves to check an estimate against.

The model of one task type: a share ``solvable`` of runs would succeed at call ``Ts`` (a discretised
log-normal with the given median and spread); every call independently ends the run with a wrong final answer
with probability ``failure_hazard`` (a success and a failure at the same call count as a success); the
recording stops at ``record_cap`` calls (runs still going are censored there) and a share ``cancel_share``
of runs are cancelled at a uniform call in 1..record_cap (censored there, if they had not ended before).
Call n uses about ``base_tokens + growth_tokens * (n - 1)`` tokens (normal noise, sd ``token_noise``).

Used by the validation tests, the benchmark and the documentation; vectorised (how long 100,000 runs take:
the calibrate_scale benchmark suite).
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from pyguard.base.events import IterationEvent, Outcome, RunEnd, RunRecord, RunStart, ToolCall
from pyguard.calibrate.cost import argmin_first
from pyguard.calibrate.runs import UNTYPED, RunArrays, RunStatus

__all__: list[str] = []


class SyntheticType(BaseModel):
    """A known distribution of runs of one task type."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = UNTYPED
    solvable: float = Field(default=0.85, ge=0.0, le=1.0)
    median_calls: float = Field(default=5.0, gt=0.0)
    spread: float = Field(default=0.45, gt=0.0)
    """sigma of the log-normal."""
    failure_hazard: float = Field(default=0.02, ge=0.0, lt=1.0)
    record_cap: int = Field(default=25, ge=1)
    cancel_share: float = Field(default=0.0, ge=0.0, le=1.0)
    base_tokens: float = Field(default=1500.0, gt=0.0)
    growth_tokens: float = Field(default=700.0, ge=0.0)
    token_noise: float = Field(default=150.0, ge=0.0)


class TrueCurves(BaseModel):
    """The true curves of a :class:`SyntheticType` over n = 1..record_cap (lists indexed n-1)."""

    model_config = ConfigDict(extra="forbid")

    c: list[float]
    reach: list[float]
    tokens_per_call: list[float]
    expected_cost: list[float]
    optimum: int


def _success_pmf(spec: SyntheticType, horizon: int) -> np.ndarray:
    """P(Ts = k) for k = 1..horizon for a solvable run (Ts = ceil of a log-normal variable)."""
    edges = np.arange(0, horizon + 1, dtype=np.float64)
    with np.errstate(divide="ignore"):
        z = (np.log(np.maximum(edges, 1e-300)) - math.log(spec.median_calls)) / (spec.spread * math.sqrt(2.0))
    cdf = np.array([0.5 * (1.0 + math.erf(v)) for v in z])
    cdf[0] = 0.0
    return np.diff(cdf)


def true_curves(spec: SyntheticType, failure_cost: float, price_per_1k_tokens: float | None = None) -> TrueCurves:
    """c(n), P(reach call n), tokens(n), E[cost](N) and the optimal N, from the distribution itself.
    (Cancellation is censoring: it does not change the true curves.)"""
    h = spec.record_cap
    n = np.arange(1, h + 1)
    pmf = _success_pmf(spec, h)
    keep = (1.0 - spec.failure_hazard) ** (n - 1)  # P(no failure before call k)
    c = np.cumsum(spec.solvable * pmf * keep)
    not_solved = spec.solvable * (1.0 - np.cumsum(pmf)) + (1.0 - spec.solvable)
    survival = not_solved * (1.0 - spec.failure_hazard) ** n
    reach = np.concatenate([[1.0], survival[:-1]])
    tokens = spec.base_tokens + spec.growth_tokens * (n - 1)
    unit = 1.0 if price_per_1k_tokens is None else price_per_1k_tokens / 1000.0
    cost = np.cumsum(reach * tokens * unit) + (1.0 - c) * failure_cost
    return TrueCurves(
        c=c.tolist(),
        reach=reach.tolist(),
        tokens_per_call=tokens.tolist(),
        expected_cost=cost.tolist(),
        optimum=int(argmin_first(cost)) + 1,
    )


def sample_runs(
    spec: SyntheticType,
    runs: int,
    rng: np.random.Generator,
    *,
    type_code: int = 0,
    task_types: tuple[str, ...] | None = None,
) -> RunArrays:
    """Draw ``runs`` runs (vectorised)."""
    h = spec.record_cap
    pmf = _success_pmf(spec, h)
    u = rng.random(runs)
    cum = np.cumsum(pmf)
    ts = np.searchsorted(cum, u, side="right") + 1.0  # > h when not solved within the cap
    ts[rng.random(runs) >= spec.solvable] = np.inf
    tf = (
        rng.geometric(spec.failure_hazard, runs).astype(np.float64)
        if spec.failure_hazard > 0
        else np.full(runs, np.inf)
    )
    end = np.minimum(ts, tf)
    status = np.where(ts <= tf, RunStatus.SUCCESS, RunStatus.FAILURE).astype(np.int8)
    cut = np.full(runs, float(h))
    cancelled = rng.random(runs) < spec.cancel_share
    cut[cancelled] = rng.integers(1, h + 1, int(cancelled.sum()))
    censored = end > cut
    status[censored] = RunStatus.CENSORED
    iterations = np.where(censored, cut, end).astype(np.int64)
    calls = np.arange(h)
    tokens = spec.base_tokens + spec.growth_tokens * calls[None, :] + rng.normal(0.0, spec.token_noise, (runs, h))
    tokens = np.maximum(np.round(tokens), 1.0)
    return RunArrays.from_columns(
        iterations,
        status,
        tokens,
        task_types=task_types or (spec.name,),
        type_code=np.full(runs, type_code, np.int64),
    )


def to_records(arrays: RunArrays, *, prefix: str = "run") -> list[RunRecord]:
    """RunRecords equivalent to ``arrays`` (for CLI tests and examples; loops per run)."""
    tokens: dict[tuple[int, int], float] = {
        (int(r), int(i)): float(v)
        for r, i, v in zip(arrays.token_run, arrays.token_iter, arrays.token_value, strict=False)
    }
    records = []
    for i in range(arrays.runs):
        run_id = f"{prefix}-{i}"
        named = arrays.task_types[int(arrays.type_code[i])]
        ttype = None if named == UNTYPED else named  # the group of runs without a task type: runs without one
        n = int(arrays.iterations[i])
        status = RunStatus(int(arrays.status[i]))
        events = []
        for k in range(1, n + 1):
            final = k == n and status is not RunStatus.CENSORED
            tok = tokens.get((i, k))
            events.append(
                IterationEvent(
                    run_id=run_id,
                    index=k,
                    task_type=ttype,
                    total_tokens=None if tok is None else int(tok),
                    tool_calls=() if final else (ToolCall(id=f"c{k}", name="lookup", arguments="{}"),),
                    text="done" if final else None,
                )
            )
        outcome = {
            RunStatus.SUCCESS: Outcome.SUCCEEDED,
            RunStatus.FAILURE: Outcome.FAILED,
            RunStatus.CENSORED: Outcome.EXPIRED,
        }[status]
        end = RunEnd(
            run_id=run_id,
            outcome=outcome,
            iterations=n,
            censored=status is RunStatus.CENSORED,
            success_label=None if status is RunStatus.CENSORED else status is RunStatus.SUCCESS,
        )
        records.append(RunRecord(start=RunStart(run_id=run_id, task_type=ttype), events=events, end=end))
    return records
