"""The calibration's configuration and results (pydantic, ``extra="forbid"``; the JSON output is a dump)."""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from pyguard.base.errors import InputError

__all__: list[str] = []


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CalibrationConfig(_Model):
    """What a calibration needs besides the runs."""

    failure_cost: float
    """d: the cost of a run that has not succeeded within the cap (a human picking it up, a lost sale), in the
    price's currency, or in the unit of ``cost_per_call`` (model calls when it is 1), or in tokens."""
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
    cost_per_call: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """The cost of one model call, in the failure cost's unit, for task types whose runs report no token usage
    (they are then calibrated in model calls at this constant cost per call)."""
    estimate_tokens_from_text: bool = False
    """Give calls without usage a token estimate from text length (``chars_per_token`` characters per token)."""
    chars_per_token: float = Field(default=4.0, gt=0, allow_inf_nan=False)
    headroom: float = Field(default=2.0, ge=1.0, allow_inf_nan=False)
    """The proposed hard cap is at least ``headroom`` x the base budget (rounded up, and always one more than
    it), so a run that keeps learning can earn calls past the base budget."""

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
    ``hard_cap_share`` of the successes seen in the data, never below the upper end of N*'s interval, and never
    below ``headroom`` x the base budget (so ``hard_cap > base_budget``: a static cap would be the same as the
    base budget). The token budgets are derived the same way on the token axis."""

    base_budget: int
    hard_cap: int
    base_token_budget: int | None = None
    max_total_tokens: int | None = None
    """None when the type is costed per call (no token usage): no token budget can be derived."""
    rationale: str


class Censoring(_Model):
    """How many units of a task type were read as censored, on what evidence, and how to change the reading."""

    cap_field: int = 0
    """Reached the cap they ran under, as the recording says (a harness cut, a ``halted``/``truncated`` field) or a
    live run's footer (``expired``: the agent's own cap or pyguard's fail-safe)."""
    no_footer: int = 0
    stopped: int = 0
    """Stopped by a guard, cancelled, or a guard error."""
    tool_call_unlabelled: int = 0
    """The recording ends while the model calls a tool, with no label and nothing saying it ended."""
    at_longest_run: int = 0
    """Labelled failures ending in a tool call at the longest run of their task type and source (``longest_run``)."""
    failures_ended_early: int = 0
    """Labelled failures ending in a tool call below that: read as failures, not censored."""
    longest_run: list[int] = Field(default_factory=list)
    """The longest run of each source of this type, taken as the recording's cap (empty when no run needed it)."""
    statement: str = ""
    """The reading in words, with how to change it."""


class Decision(_Model):
    """What a recommendation costs and saves, in figures a user can weigh (costs in the report's ``cost_unit``)."""

    successes_uncapped: int
    """Units of this type that succeeded in the data (no cap but the recording's)."""
    successes_kept: int
    """Of those, the ones that succeeded within the cap (N*, or the cheapest cap when no cap pays off)."""
    c_uncapped: float
    """c(H): the estimated success share with no cap but the data's end."""
    default_calls: int
    """The model calls LangChain4j's default allows (maxToolCallingRoundTrips 100: 101 calls), capped at the data's
    end; ``default_beyond_data`` when the data ends before."""
    default_beyond_data: bool
    saving_vs_default: float
    """E[cost](default_calls) - E[cost](cap) per unit (positive: the cap is cheaper)."""
    p95_success_calls: int | None
    """The 95th percentile of the model calls of successful units (None without a success)."""
    saving_vs_p95: float | None
    n_star_half_cost: int | None
    """N* at half the failure cost (None: no cap pays off there)."""
    n_star_double_cost: int | None
    cheapest_cap: int
    """The cap with the lowest expected cost (N* when a cap pays off)."""
    cheapest_cost: float
    not_running_cheaper: bool
    """True when every cap costs at least d: not running the agent is cheaper at this failure cost."""
    statement: str


class TaskTypeCalibration(_Model):
    """One task type's curves (lists indexed n-1 for n calls) and recommendations.

    The unit of ``n`` is in ``unit``: model calls per run, or per user turn for conversations (``per_turn``).
    Costs are in the report's ``cost_unit`` (tokens, or the price's currency)."""

    task_type: str
    runs: int
    """Recorded runs (conversations) of this type."""
    units: int
    """What c(n) counts: ``runs``, or the user turns of those runs when ``per_turn``."""
    per_turn: bool = False
    unit: str = "model calls per run"
    successes: int
    failures: int
    censored: int
    horizon: int
    """H: the most model calls any unit of this type made; the curves stop there. c(n) past H is unknown."""
    recording_cap: int | None = None
    """H when two or more units were cut off there while still calling tools: the recording's own cap."""
    cost_basis: str = "recorded tokens"
    """How a call's cost was known: recorded tokens, a text-length estimate, or a stated cost per call."""
    cost_per_call: float | None = None
    """The constant cost of one call when the type is costed per call (no token usage)."""
    c: list[float]
    """c(n), probability of success within n calls (Aalen–Johansen)."""
    c_low: list[float]
    c_high: list[float]
    first_success: int | None = None
    """The first n with c(n) > 0; below it the band's upper edge is the binomial bound for zero successes."""
    failure_incidence: list[float]
    at_risk: list[int]
    tokens_per_call: list[float]
    """Mean tokens of call n among units that made it (fitted where fewer than min_support did; the constant
    cost per call in cost units when ``cost_basis`` is a stated cost per call)."""
    w: list[float]
    """Expected cost of call n per unit: P(a unit makes call n) * cost of call n."""
    expected_cost: list[float]
    """E[cost](N) = sum_{n<=N} w(n) + (1 - c(N)) * d."""
    expected_cost_low: list[float] = Field(default_factory=list)
    expected_cost_high: list[float] = Field(default_factory=list)
    recommended_max_iterations: int | None
    """N*, or None when no cap pays off (``no_cap``)."""
    ci_low: int | None
    ci_high: int | None
    expected_cost_at_optimum: float
    success_at_optimum: float
    at_horizon: bool
    """True when N* is the horizon while runs were still going there: the optimum may lie beyond the data."""
    no_cap: str | None = None
    """Why no cap is recommended: the plain statement and what would change it."""
    break_even_failure_cost: float | None = None
    """The failure cost above which some cap pays off (min over N of W(N)/c(N)); None when no run succeeded."""
    token_budget: TokenBudget | None = None
    policy: PolicyProposal | None = None
    censoring: Censoring | None = None
    decision: Decision | None = None


class SkippedType(_Model):
    """A task type that could not be calibrated, and why (the other types still are)."""

    task_type: str
    runs: int
    reason: str


class CalibrationReport(_Model):
    config: CalibrationConfig
    cost_unit: str
    """The unit of every cost (and of d): 'currency' with a price, or with a cost per call other than 1 for runs
    without token usage; 'calls' with ``cost_per_call=1`` and no price (every call costs one); else 'tokens'."""
    task_types: list[TaskTypeCalibration]
    skipped: list[SkippedType] = Field(default_factory=list)
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
