"""The held-out estimate of ``pyguard tune``: k folds grouped by task, each fitted without its fold and replayed on
it; where a task type's held-out false-stop rate exceeds the bound, its fit aims lower and the folds run again
(:data:`TARGET_SHARES`). Also what the tuner and its cross-validation share: the labelled runs as the fit sees them
(:class:`Tuning`) and the probe pass of each stall setting, made once (:class:`ProbeTables`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pyguard.base.events import RunRecord
from pyguard.engine import PolicyConfig
from pyguard.tune.models import TuneOptions
from pyguard.tune.probe import RunPool, probe_config
from pyguard.tune.search import Fitter
from pyguard.tune.simulate import ProbeTable, RunSet
from pyguard.tune.space import build_policy, stall_key

__all__: list[str] = []

TARGET_SHARES: tuple[float, ...] = (1.0, 0.5, 0.25, 0.0)
"""The fit's own false-stop target, as shares of the bound, tried in turn: a policy fitted right at the bound
overfits it (it is the best of thousands on the same runs), so when the cross-validated rate of some task type
exceeds the bound, the fit aims lower and the cross-validation is run again."""

Progress = Callable[[int, int], None]
"""``progress(advance, add_total)``: runs replayed since the last call, and runs added to the planned work."""


def shown(name: str | None) -> str:
    """A task type as a warning names it."""
    return "runs with no task type" if name is None else f"task type {name!r}"


@dataclass
class Tuning:
    """The labelled runs as the fit sees them (task types coded, tasks as the folds' groups), which task types are
    tuned, and what the result will say about them (notes per type, warnings)."""

    options: TuneOptions
    labelled: list[RunRecord]
    runset: RunSet
    names: list[str | None]
    """Each run's task type (None for all with ``--by none``)."""
    type_names: list[str | None]
    type_of: np.ndarray
    """Each run's index in :attr:`type_names`."""
    tasks: list[str]
    groups: np.ndarray
    """Each run's task, coded."""
    n_groups: int
    warnings: list[str]
    tuned: set[str | None] = field(default_factory=set)
    notes: dict[str | None, str] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.labelled)

    @property
    def everyone(self) -> np.ndarray:
        return np.arange(self.n)

    def note(self, name: str | None, text: str) -> None:
        """Say ``text`` about task type ``name``: its note in the result, and a warning."""
        self.notes[name] = text
        self.warnings.append(f"{shown(name)}: {text}")


class ProbeTables:
    """The probe pass of each stall setting over all runs (:class:`ProbeTable`), made once in the worker pool and
    kept; ``tables(stall)`` is what :class:`Fitter` asks for."""

    def __init__(self, pool: RunPool, base: PolicyConfig, everyone: np.ndarray, planned: int, report: Progress) -> None:
        self.pool, self.base, self.everyone = pool, base, everyone
        self.planned, self.report = planned, report
        self.cache: dict[tuple, ProbeTable] = {}

    def __call__(self, stall: dict[str, Any]) -> ProbeTable:
        key = stall_key(stall)
        if key not in self.cache:
            if len(self.cache) >= self.planned:
                self.report(0, len(self.everyone))
            self.cache[key] = ProbeTable(
                self.everyone, self.pool.probes(probe_config(self.base, stall), list(self.everyone))
            )
        return self.cache[key]

    def screen(self, screening: Sequence[dict[str, Any]]) -> None:
        """The passes of every stall setting of ``screening``, in one go."""
        found = self.pool.probes_many([probe_config(self.base, stall) for stall in screening], list(self.everyone))
        for stall, probes in zip(screening, found, strict=False):
            self.cache[stall_key(stall)] = ProbeTable(self.everyone, probes)

    def of(self, stall: dict[str, Any]) -> ProbeTable:
        """The pass already made of ``stall``."""
        return self.cache[stall_key(stall)]


@dataclass
class HeldOut:
    """One round of the cross-validation: where each run stopped under the policy fitted without its fold, each
    fold's stall settings, the runs where the simulation and the replay disagree, and the targets it aimed at."""

    targets: dict[str | None, float]
    bound: float
    stops: np.ndarray
    fold_stall: list[dict[str, Any]] = field(default_factory=list)
    fold_type_stall: list[dict[str, dict[str, Any]]] = field(default_factory=list)
    mismatches: int = 0
    over: list[str | None] = field(default_factory=list)
    """Tuned task types whose held-out false-stop rate exceeds the bound."""

    @property
    def lowered(self) -> dict[str | None, float]:
        return {name: t for name, t in self.targets.items() if t < self.bound}

    @property
    def target(self) -> float:
        return min(self.targets.values(), default=self.bound)

    def warn(self, tn: Tuning) -> None:
        """Say where the fit aimed below the bound, and where even the lowest target did not hold."""
        if self.lowered:
            which = ", ".join(
                f"{'runs with no task type' if t is None else repr(t)} {v:g}" for t, v in self.lowered.items()
            )
            tn.warnings.append(
                f"fitted at the bound, some task type's held-out false-stop rate exceeded {self.bound:g},"
                f" so the fit aimed lower for it: {which}; this target was"
                " chosen on the same folds, so the held-out figures may be slightly optimistic"
            )
        if self.over:
            tn.warnings.append(
                f"held-out false-stop rate above the bound even at the lowest fit target: {', '.join(map(repr, self.over))}"
            )


def _held_out_round(
    tn: Tuning,
    cv: Fitter,
    folds: np.ndarray,
    k: int,
    targets: dict[str | None, float],
    pool: RunPool,
    tables: ProbeTables,
) -> HeldOut:
    """Each fold fitted without it at ``targets`` and replayed on it; the simulation checked against the replay."""
    o = tn.options
    held = HeldOut(targets, o.max_false_stop_rate, np.zeros(tn.n, dtype=np.int64))
    for fold in range(k):
        train, test = np.flatnonzero(folds != fold), np.flatnonzero(folds == fold)
        fit = cv.fit(train, target=targets)
        held.fold_stall.append(fit.stall)
        held.fold_type_stall.append({str(t): v for t, v in fit.type_stall.items()})
        config = build_policy(o.base, fit.stall, fit.budgets, fit.type_stall)
        held.stops[test] = pool.replay_stops(config, list(test))
        in_test = np.zeros(tn.n, dtype=bool)
        in_test[test] = True
        for code, name in enumerate(tn.type_names):
            sub = tables(fit.stall_of(name)).subset(in_test & (tn.type_of == code))
            if len(sub.runs):
                budget = fit.budgets.get(name, cv.defaults[name])
                held.mismatches += int((sub.stops(budget) != held.stops[sub.runs]).sum())
    held.over = [
        name
        for code, name in enumerate(tn.type_names)
        if name in tn.tuned
        and tn.runset.counts(
            np.flatnonzero(tn.type_of == code), held.stops[tn.type_of == code], o.artifact
        ).false_stop_rate
        > o.max_false_stop_rate
    ]
    return held


def cross_validate(
    tn: Tuning, cv: Fitter, folds: np.ndarray, k: int, pool: RunPool, tables: ProbeTables, report: Progress
) -> HeldOut:
    """The held-out round at the bound, then, for each tuned type over the bound, its own target lowered by a step of
    :data:`TARGET_SHARES` and the round run again (only that type's: lowering every type's for one type over the
    bound takes the others' per-type choices away); the last round is the estimate."""
    level = dict.fromkeys(tn.type_names, 0)
    bound = tn.options.max_false_stop_rate
    held: HeldOut | None = None
    for _round in range(len(TARGET_SHARES)):
        targets = {name: bound * TARGET_SHARES[level[name]] for name in tn.type_names}
        held = _held_out_round(tn, cv, folds, k, targets, pool, tables)
        lower = [name for name in held.over if level[name] < len(TARGET_SHARES) - 1]
        if not lower:
            break
        for name in lower:
            level[name] += 1
        report(0, tn.n)
    assert held is not None  # TARGET_SHARES is not empty
    return held
