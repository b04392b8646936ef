"""The calibration's configuration and results (pydantic, ``extra="forbid"``; the JSON output is a dump)."""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from pyguard.errors import InputError

__all__ = [
    "make_config",
    "CalibrationConfig", "TokenBudget", "PolicyProposal", "TaskTypeCalibration", "CalibrationReport",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CalibrationConfig(_Model):
    """What a calibration needs besides the runs."""

    failure_cost: float
    """d: the cost of a run that has not succeeded within the cap (a human picking it up, a lost sale), in the
    price's currency, or in tokens when there is no price."""
    price_per_1k_tokens: float | None = None
    """Price of 1,000 tokens; None means a token is the unit of cost."""
    bootstrap: int = Field(default=1000, ge=20, le=100_000)
    """Bootstrap resamples for the confidence interval of N* and the band of c(n)."""
    seed: int = 0
    """Seed of the bootstrap: the same runs and seed give the same report."""
    confidence: float = Field(default=0.95, gt=0.5, lt=1.0)
    """Level of the interval of N* and of the pointwise band of c(n)."""
    hard_cap_share: float = Field(default=0.99, gt=0.5, le=1.0)
    """The proposed hard cap keeps at least this share of the successes seen in the data."""
    min_runs: int = Field(default=2, ge=2)
    """Fewer runs than this in a task type is an input error."""
    min_support: int = Field(default=5, ge=1)
    """Calls reached by fewer runs than this take their token count from the fitted line."""
    max_token_grid: int = Field(default=1000, ge=10)
    """At most this many budgets are tried on the token axis (quantiles of the run totals)."""

    @field_validator("failure_cost")
    @classmethod
    def _check_failure_cost(cls, value: float) -> float:
        if not math.isfinite(value) or value <= 0:
            raise InputError(
                f"failure cost must be a positive finite number, got {value!r}: pass --failure-cost D with D the "
                "cost of a run that did not succeed (same unit as the token price, or tokens when there is no price)"
            )
        return value

    @field_validator("price_per_1k_tokens")
    @classmethod
    def _check_price(cls, value: float | None) -> float | None:
        if value is not None and (not math.isfinite(value) or value <= 0):
            raise InputError(
                f"price per 1k tokens must be a positive finite number, got {value!r}: pass the price of 1,000 "
                "tokens, or leave --price-per-1k-tokens out to count cost in tokens"
            )
        return value


class TokenBudget(_Model):
    """The recommendation on the token axis."""

    recommended_tokens: int
    ci_low: int
    ci_high: int
    expected_cost: float
    """E[cost] at the recommended budget."""
    success_at_budget: float
    """c(T*): probability a run succeeds within the recommended budget."""
    grid_points: int


class PolicyProposal(_Model):
    """Proposed budgets for pyguard's dynamic policy.

    ``base_budget`` is N*: the cap that minimises expected cost if every run were cut there. The dynamic policy
    starts a run with it and extends it only while iterations bring new information, so runs that are still
    making progress are not cut at N*. ``hard_cap`` bounds those extensions: the smallest n that keeps
    ``hard_cap_share`` of the successes seen in the data, and never below the upper end of N*'s interval.
    The token budgets are derived the same way on the token axis."""

    base_budget: int
    hard_cap: int
    base_token_budget: int
    max_total_tokens: int
    rationale: str


class TaskTypeCalibration(_Model):
    """One task type's curves (lists indexed n-1 for n calls) and recommendations."""

    task_type: str
    runs: int
    successes: int
    failures: int
    censored: int
    horizon: int
    """H: the most model calls any run of this type made; the curves stop there (c is flat past it)."""
    c: list[float]
    """c(n), probability of success within n calls (Aalen–Johansen)."""
    c_low: list[float]
    c_high: list[float]
    failure_incidence: list[float]
    at_risk: list[int]
    tokens_per_call: list[float]
    """Mean tokens of call n among runs that made it (fitted where fewer than min_support runs did)."""
    w: list[float]
    """Expected cost of call n per run: P(a run makes call n) * price(tokens_per_call[n-1])."""
    expected_cost: list[float]
    """E[cost](N) = sum_{n<=N} w(n) + (1 - c(N)) * d."""
    recommended_max_iterations: int
    ci_low: int
    ci_high: int
    expected_cost_at_optimum: float
    success_at_optimum: float
    at_horizon: bool
    """True when N* is the horizon while runs were still going there: the optimum may lie beyond the data."""
    token_budget: TokenBudget
    policy: PolicyProposal


class CalibrationReport(_Model):
    config: CalibrationConfig
    cost_unit: str
    """'currency' when a price was given, else 'tokens'."""
    task_types: list[TaskTypeCalibration]
    warnings: list[str] = Field(default_factory=list)


def make_config(**values: object) -> CalibrationConfig:
    """Build a :class:`CalibrationConfig`, raising :class:`InputError` (one message per bad value) instead of
    pydantic's ValidationError."""
    try:
        return CalibrationConfig(**values)
    except ValidationError as exc:
        messages = []
        for err in exc.errors():
            msg = str(err.get("msg", "")).removeprefix("Value error, ")
            field = ".".join(str(p) for p in err.get("loc", ()))
            if field and field not in msg:
                msg = f"{field}={err.get('input')!r}: {msg}"
            messages.append(msg)
        raise InputError("; ".join(messages)) from None
