"""The result of ``pyguard tune``: pydantic models whose JSON form is what ``--json`` prints."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pyguard.engine import PolicyConfig
from pyguard.tune.space import SearchSpace

__all__: list[str] = []


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TuneOptions(_Model):
    """What ``tune`` is asked to do."""

    max_false_stop_rate: float = Field(default=0.01, ge=0, lt=1)
    """Bound on the share of successful runs the policy may stop early, per task type."""
    by: Literal["task_type", "none"] = "task_type"
    """Fit a budget per task type (``[task_types.X]``), or one for all runs (top level)."""
    folds: int = Field(default=5, ge=2)
    seed: int = 0
    artifact: bool = False
    """Artifact-producing agents: a stop after the last file-changing iteration is not a false stop."""
    min_runs: int = Field(default=20, ge=1)
    """A task type with fewer labelled runs keeps the starting policy's budget (with a warning)."""
    min_successes: int = Field(default=5, ge=1)
    """A task type with fewer successful runs keeps the starting policy's budget (with a warning)."""
    workers: int = Field(default=1, ge=1)
    bootstrap: int = Field(default=1000, ge=100)
    """Resamples (of tasks) for the intervals of the savings."""
    space: SearchSpace = Field(default_factory=SearchSpace)
    base: PolicyConfig = Field(default_factory=PolicyConfig)
    """The starting policy: searched around, and kept for task types that cannot be tuned."""


class Interval(_Model):
    value: float | None
    low: float | None
    high: float | None


class Figures(_Model):
    """Figures of one policy on one set of runs (see /work/shared/reference/real-runs-metrics.md)."""

    successful_runs: int
    false_stops: int
    false_stop_rate: Interval
    """Successful runs stopped early, over successful runs (Wilson 95% interval)."""
    failed_runs: int
    failed_tool_calls_saved: Interval
    """Tool calls requested after the stop, over all tool calls of failed runs (task-bootstrap 95% interval)."""
    failed_tokens_saved: Interval
    caught_failed_share: Interval
    """Failed runs stopped early, over failed runs."""


class TypeResult(_Model):
    task_type: str | None
    runs: int
    successful: int
    failed: int
    tasks: int
    tuned: bool
    budget_fitted: bool = False
    """Its budget numbers were fitted to its runs. False: the starting ones (the search kept them, or too few runs or
    successes to certify a fitted budget, :func:`pyguard.tune.search.min_successes_to_fit`), or, when those break the
    bound on such a type, the search space's most lenient ones."""
    reflect_only: bool = False
    """No stall setting in the search space met the bound on this type: its stalls reflect and never stop it, its
    hard cap alone does (``max_reflections`` above the cap, no stop on a fruitless retry, ``base_budget`` = the cap);
    :attr:`note` says the lowest rate the stall settings reached."""
    note: str | None = None
    """Why the type kept the starting policy's budget, or fell back to reflect-only, when it did."""
    budget: dict[str, Any]
    held_out: Figures | None
    """Cross-validated: each run scored by the policy fitted without its task (None when not tuned)."""
    in_sample: Figures
    """The chosen policy on the runs it was fitted to: optimistic, shown only beside the held-out figures."""
    default: Figures
    """The starting policy on all runs (it was not fitted to them)."""
    default_meets_bound: bool = True
    """The starting policy's false-stop rate on this type's runs is within the bound. False: its savings are no
    like-for-like baseline for the tuned policy's (which must stop fewer successful runs)."""


class TuneResult(_Model):
    runs: int
    labelled_runs: int
    skipped_unlabelled: int
    tasks: int
    folds: int
    seed: int
    max_false_stop_rate: float
    artifact: bool
    search: str
    target_false_stop_rate: float
    """The lowest false-stop rate the fit aimed at for a task type: the bound, or lower when a type's held-out runs
    exceeded it at the bound (the target is lowered for those types only)."""
    kept_start: bool = False
    """The starting policy was kept: it meets the bound and saves at least as much as the tuned one held out."""
    default_meets_bound: bool = True
    """The starting policy meets the bound on every task type (see :attr:`TypeResult.default_meets_bound`)."""
    stall: dict[str, Any]
    """The shared stall settings chosen (top-level ``[stall]``), only those that differ from the start."""
    type_stall: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Task types given their own stall settings (``[task_types.X.stall]`` and the type's reflection settings),
    only those that differ from the start; the other types take :attr:`stall`."""
    types: list[TypeResult]
    held_out: Figures | None
    in_sample: Figures
    default: Figures
    fold_stall: list[dict[str, Any]]
    """The shared stall settings each fold chose (stability of the choice)."""
    fold_type_stall: list[dict[str, dict[str, Any]]] = Field(default_factory=list)
    """The per-type stall settings each fold chose."""
    verified_runs: int
    """Held-out runs whose stop was computed both by the search's simulation and by replay_run."""
    verification_mismatches: int
    """Of those, runs where the two disagree (expected 0; the held-out figures always come from replay_run)."""
    warnings: list[str]
    engine_passes: int
    elapsed_s: float
    policy: dict[str, Any] = Field(exclude=True)
    """The fitted PolicyConfig as a dict (written as TOML)."""
    points: dict[str, list[tuple[float, float]]] = Field(default_factory=dict, exclude=True)
    """Per task type, (false-stop rate, calls saved) of every policy evaluated in the full fit (for the plots)."""

    def to_dict(self) -> dict:
        return self.model_dump(mode="json")
