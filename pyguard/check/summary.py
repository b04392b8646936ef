"""What a set of runs looks like, per task type and overall: the outcome mix, iterations, tokens.

A :class:`RunSetSummary` is both what ``pyguard check`` reports and what ``--write-baseline`` stores. It keeps
*counts* (outcome counts, an iteration histogram, the per-run token totals), not only rates, so that a later
run set can be compared with it by a statistical test rather than a fixed margin.

Percentiles use numpy's ``inverted_cdf`` method: the p95 of iterations is an iteration count that was actually
observed, and at least 95% of the runs used at most that many model calls.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from pyguard.base.events import UNTYPED, Outcome

__all__: list[str] = []

ALL_TASKS = "*"
"""The group key (and ``task_type`` in reports) that stands for all runs together."""


class RunFacts(BaseModel):
    """The three facts the gate needs about one run, however they were obtained (footer or replay)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str
    task_type: str | None = None
    outcome: Outcome
    iterations: int = Field(ge=0)
    """Model calls the run made (or would have made under the replayed policy)."""
    tokens: int | None = Field(default=None, ge=0)
    """Total tokens of the run; None when the provider reported no usage."""
    replayed: bool = False
    """True when the outcome comes from replaying a recording through a policy."""
    observed: bool = False
    """True when the outcome is the stop a guard in observe or reflect mode recorded and did not act on (then
    ``iterations`` is the stop's, ``tokens`` what the run spent, and ``tokens_saved`` what the stop would have saved)."""
    tokens_saved: int | None = Field(default=None, ge=0)
    """For an observed stop: the tokens the run spent after it (what enforcing it would have saved); None otherwise or
    without usage data."""


class TaskTypeFigures(BaseModel):
    """The gate's figures of one task type's runs (or of all runs, ``*``): outcome counts, the iteration histogram,
    tokens. Was ``GroupSummary`` (the name :mod:`pyguard.replay` also uses for its own per-group replay figures)."""

    model_config = ConfigDict(extra="forbid")

    n: int = Field(ge=0)
    """Number of runs."""
    outcomes: dict[Outcome, int] = Field(default_factory=dict)
    """Runs per outcome (every outcome present, zero when none)."""
    iterations: dict[int, int] = Field(default_factory=dict)
    """Histogram: iteration count -> number of runs."""
    tokens: list[int] = Field(default_factory=list)
    """Total tokens of every run that reported usage, sorted: what the runs spent (an observed stop included)."""
    tokens_saved: int = Field(default=0, ge=0)
    """Tokens the observed stops of the group (observe or reflect mode) would have saved had they been enforced:
    spent after the stop, counted in :attr:`tokens` and shown apart."""

    @model_validator(mode="after")
    def _consistent(self) -> TaskTypeFigures:
        self.outcomes = {o: int(self.outcomes.get(o, 0)) for o in Outcome}
        if any(c < 0 for c in self.outcomes.values()) or any(c < 0 for c in self.iterations.values()):
            raise ValueError("counts must be non-negative")
        if any(k < 0 for k in self.iterations):
            raise ValueError(f"iteration counts must be non-negative, got {sorted(self.iterations)}")
        if sum(self.outcomes.values()) != self.n:
            raise ValueError(f"outcome counts add up to {sum(self.outcomes.values())}, not n={self.n}")
        if sum(self.iterations.values()) != self.n:
            raise ValueError(f"iteration histogram adds up to {sum(self.iterations.values())}, not n={self.n}")
        if len(self.tokens) > self.n:
            raise ValueError(f"{len(self.tokens)} token totals for n={self.n} runs")
        if any(t < 0 for t in self.tokens):
            raise ValueError("token totals must be non-negative")
        self.tokens = sorted(self.tokens)
        self.iterations = {k: v for k, v in sorted(self.iterations.items()) if v}
        return self

    @classmethod
    def from_arrays(
        cls,
        outcomes: Iterable[Outcome],
        iterations: Iterable[int],
        tokens: Iterable[int | None],
        tokens_saved: int = 0,
    ) -> TaskTypeFigures:
        """Build from per-run sequences (``tokens`` may hold None for runs without usage)."""
        outs = list(outcomes)
        its = [int(i) for i in iterations]
        if len(outs) != len(its):
            raise ValueError(f"{len(outs)} outcomes but {len(its)} iteration counts")
        return cls(
            n=len(outs),
            outcomes=dict(Counter(Outcome(o) for o in outs)),
            iterations=dict(Counter(its)),
            tokens=[int(t) for t in tokens if t is not None],
            tokens_saved=int(tokens_saved),
        )

    def count(self, outcome: Outcome) -> int:
        return self.outcomes.get(outcome, 0)

    def rate(self, outcome: Outcome) -> float | None:
        """The share of runs with ``outcome``; None for an empty group."""
        return self.count(outcome) / self.n if self.n else None

    def iteration_values(self) -> np.ndarray:
        """One iteration count per run (expanded from the histogram)."""
        if not self.iterations:
            return np.zeros(0, dtype=np.int64)
        keys = np.fromiter(self.iterations.keys(), dtype=np.int64)
        counts = np.fromiter(self.iterations.values(), dtype=np.int64)
        return np.repeat(keys, counts)

    def token_values(self) -> np.ndarray:
        return np.asarray(self.tokens, dtype=np.int64)

    def iterations_quantile(self, q: float) -> float | None:
        values = self.iteration_values()
        return float(np.quantile(values, q, method="inverted_cdf")) if values.size else None

    def tokens_quantile(self, q: float) -> float | None:
        values = self.token_values()
        return float(np.quantile(values, q, method="inverted_cdf")) if values.size else None

    @property
    def iterations_p50(self) -> float | None:
        return self.iterations_quantile(0.5)

    @property
    def iterations_p95(self) -> float | None:
        return self.iterations_quantile(0.95)

    @property
    def iterations_mean(self) -> float | None:
        values = self.iteration_values()
        return float(values.mean()) if values.size else None

    @property
    def tokens_mean(self) -> float | None:
        values = self.token_values()
        return float(values.mean()) if values.size else None

    @property
    def tokens_p95(self) -> float | None:
        return self.tokens_quantile(0.95)

    def figures(self) -> dict:
        """Derived figures for reports (rates, percentiles, means)."""
        return {
            "n": self.n,
            "outcomes": {o.value: self.count(o) for o in Outcome},
            "rates": {o.value: self.rate(o) for o in Outcome},
            "iterations_p50": self.iterations_p50,
            "iterations_p95": self.iterations_p95,
            "iterations_mean": self.iterations_mean,
            "tokens_runs": len(self.tokens),
            "tokens_mean": self.tokens_mean,
            "tokens_p95": self.tokens_p95,
            "tokens_saved": self.tokens_saved,
        }


class RunSetSummary(BaseModel):
    """A set of runs summarised per task type; also the on-disk baseline format (see ``pyguard.check.baseline``)."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["pyguard-check-baseline"] = "pyguard-check-baseline"
    version: Literal[1] = 1
    groups: dict[str, TaskTypeFigures]
    """Task type -> counts; the key ``"*"`` holds all runs, ``"(untyped)"`` runs without a task type."""
    replayed: int = Field(default=0, ge=0)
    """How many runs got their outcome from a policy replay rather than a trace footer."""
    observed: int = Field(default=0, ge=0)
    """How many runs count as the stop their guard recorded in observe or reflect mode (not what really happened)."""

    @model_validator(mode="after")
    def _has_overall(self) -> RunSetSummary:
        if ALL_TASKS not in self.groups:
            raise ValueError(f"the group {ALL_TASKS!r} (all runs) is missing")
        return self

    @property
    def overall(self) -> TaskTypeFigures:
        return self.groups[ALL_TASKS]

    @property
    def task_types(self) -> list[str]:
        """The task-type groups (everything but the overall group), sorted."""
        return sorted(k for k in self.groups if k != ALL_TASKS)


def summarize(facts: Iterable[RunFacts]) -> RunSetSummary:
    """Group runs by task type and count outcomes, iterations and tokens (plus the overall group ``"*"``)."""
    by_type: dict[str, list[RunFacts]] = {}
    everything: list[RunFacts] = []
    for f in facts:
        by_type.setdefault(f.task_type if f.task_type is not None else UNTYPED, []).append(f)
        everything.append(f)

    def group(items: list[RunFacts]) -> TaskTypeFigures:
        return TaskTypeFigures.from_arrays(
            (f.outcome for f in items),
            (f.iterations for f in items),
            (f.tokens for f in items),
            sum(f.tokens_saved or 0 for f in items),
        )

    groups = {ALL_TASKS: group(everything)}
    groups.update({k: group(v) for k, v in sorted(by_type.items())})
    return RunSetSummary(
        groups=groups, replayed=sum(f.replayed for f in everything), observed=sum(f.observed for f in everything)
    )
