"""The search: one fit of the policy to a set of labelled runs.

Why this search. What costs time is the engine (pure Python; its cost per iteration: the engine_scaling
benchmark suite); the budget rules cost nothing once an engine pass has recorded each iteration's gain and flags
(:mod:`pyguard.tune.simulate`, exact). So:

1. **Stall settings, screened one at a time.** The starting settings and every one-parameter change of them
   (:func:`pyguard.tune.space.stall_candidates`, ~22 candidates) get one engine pass each over *all* runs. The set is
   fixed in advance, so every cross-validation fold reuses the same passes: k folds cost barely more than one fit.
   The changes that beat the start are then combined into one more candidate (one more pass), kept if it wins.
   That is the shared setting (top-level ``[stall]``); then each named task type may take another of the screened
   candidates as its own (``[task_types.X.stall]`` and the type's ``max_reflections`` / ``stop_on_fruitless_retry``),
   ranked on its own runs from the same passes (no further pass), only when the choice is certified within the
   target with the headroom below (it is a fit to that type's runs).
   A full grid over six stall parameters (~2,000 passes) or a random search with successive halving (still tens of
   passes per fold, none shared between folds) would cost 10-100 times as much for interactions that the
   screening already mostly finds: stall parameters act on different stall rules.
2. **Budget parameters, per task type, by coordinate descent** on the exact simulation (each evaluation a few numpy
   operations over all iterations), from the starting budget and from the most lenient one; the better end point.
   A lower hard cap takes the base budget down with it (base <= cap), so the cap can move below the base budget.

**Reflect-only, when no stall setting fits a type.** A tuned task type that no screened stall setting keeps within
the target (every candidate stops too many of its successful runs, whatever the budget) falls back to reflect-only
(:meth:`Fitter.reflect_only`): its stalls reflect and never stop it, its budget is its hard cap from the first call,
so the hard cap alone stops it (the starting cap, or the space's highest if that one still breaks the bound). The
candidates are then ranked again with that type so, so it no longer pulls the shared setting towards the least bad
one for it. tune answers for every type and says which fell back.

The objective: most failed-run tool calls and tokens saved (each as a share of the fit set's failed-run total,
summed), subject to each task type's false-stop rate <= the bound. Ties keep the earlier point (the start), so
nothing moves without a strict gain.

**Headroom for fitted budgets** (:func:`certified`). A budget fitted to n successful runs sits just above the longest
of them; a new successful run of the same kind outlasts the longest of n exchangeable ones with probability
1/(n+1) (order statistics; the split-conformal argument), and one stopped among n allows (f+1)/(n+1). So a fitted
budget of a type counts as within the bound only if (false stops + 1) <= bound x (successes + 1), not
false stops <= bound x successes; and a type with fewer than 1/bound - 1 successful runs in the fit set
(:func:`min_successes_to_fit`: 99 at 0.01) cannot certify any fitted budget at all: it keeps the starting budget
numbers (or, if those break the bound, the most lenient ones: loosening needs no headroom), and only the shared
stall settings are tuned for it. The starting and the most lenient budget, not fitted to the runs, are judged plainly. Without this, budgets fitted on ~70 successes per type stopped 1.2-1.8% of
held-out successes at a 1% bound (the tune benchmark suite with ``--data``).

**The fit target and the starting policy.** A fit may aim below the bound (``fit(train, target=...)``: the tuner
lowers the target when fitted policies exceeded the bound on held-out runs). The target is for what the search
chose: fitted budgets, and the starting budget numbers under a changed stall setting (one of ~18 settings picked on
the same runs). The starting policy itself (the starting stall settings with a type's starting budget numbers) was
not chosen on these runs, so its in-sample rate is not biased low: it is judged plainly against the *bound*. So a fit
whose starting policy meets the bound on its runs always has it as a candidate and never ends below it (ranks only
move up from the start); before, a lowered target made the start infeasible in the fit and the search ended on a
stricter policy that saved less than the start, which met the bound (the tune benchmark suite, ``--data``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pyguard.engine import PolicyConfig
from pyguard.tune.simulate import Counts, ProbeTable, RunSet
from pyguard.tune.space import BUDGET_KEYS, Budget, SearchSpace, budget_of, reflect_only, stall_candidates

__all__: list[str] = []


def certified(false_stops: int, successes: int, bound: float) -> bool:
    """A fitted budget's false stops within ``bound`` with the order-statistics headroom: (f+1)/(n+1) <= bound."""
    return false_stops + 1 <= bound * (successes + 1) + 1e-9


def min_successes_to_fit(bound: float) -> int | None:
    """The fewest successful runs with which any fitted budget can be certified within ``bound`` (0 false stops:
    1/(n+1) <= bound, so n >= 1/bound - 1); None when none can (a bound of 0)."""
    if bound <= 0:
        return None
    n = max(0, math.ceil(1 / bound - 1 - 1e-9))
    while not certified(0, n, bound):
        n += 1
    return n


@dataclass
class TypeFit:
    name: str | None
    tuned: bool
    budget: Budget
    counts: Counts
    feasible: bool
    points: list[tuple[float, float]] = field(default_factory=list)
    """(false-stop rate, failed-run tool calls saved) of every policy evaluated for this type (for the plot)."""
    budget_fitted: bool = True
    """False when the budget is the starting one: the search kept it, or the type had too few successes to certify
    a fitted budget (:func:`min_successes_to_fit`)."""
    reflect_only: bool = False
    """No stall setting met the target on this type's runs: its stalls only reflect and the hard cap alone stops it
    (:meth:`Fitter.reflect_only`)."""
    unmet_rate: float | None = None
    """With :attr:`reflect_only`: the lowest false-stop rate the stall settings reached on these runs."""


@dataclass
class Fit:
    stall: dict[str, Any]
    """The shared stall settings (top-level ``[stall]``): the candidate best over all types together."""
    types: dict[str | None, TypeFit]
    score: float
    candidates: int
    type_stall: dict[str | None, dict[str, Any]] = field(default_factory=dict)
    """Each tuned named task type's own stall settings, where it ranks another candidate above the shared one
    (written as ``[task_types.X.stall]`` and the type's reflection settings)."""

    def stall_of(self, name: str | None) -> dict[str, Any]:
        """The stall settings the runs of task type ``name`` get."""
        return self.type_stall.get(name, self.stall)

    @property
    def budgets(self) -> dict[str | None, Budget]:
        return {t: f.budget for t, f in self.types.items()}

    def counts(self) -> Counts:
        total = Counts()
        for f in self.types.values():
            total = total + f.counts
        return total


class Fitter:
    """Fits policies on subsets of one :class:`RunSet`; ``tables(stall)`` gives the probe table of all runs under a
    stall setting (computed once, then cached by the caller)."""

    def __init__(
        self,
        runset: RunSet,
        type_of: np.ndarray,
        type_names: list[str | None],
        tuned: set[str | None],
        base: PolicyConfig,
        space: SearchSpace,
        bound: float,
        artifact: bool,
        tables: Callable[[dict[str, Any]], ProbeTable],
        keep_points: bool = False,
        fit_successes: dict[str | None, int] | None = None,
    ) -> None:
        """``fit_successes[type]``: the successful runs a type's budget must be certified with (the fewest in any
        cross-validation training set), so that every fit, the full one included, fits a type's budget or none does
        and the held-out figures measure the policy that is written; without it, each fit set's own count."""
        self.runset, self.type_of, self.type_names = runset, type_of, type_names
        self.tuned, self.base, self.space = tuned, base, space
        self.bound, self.artifact, self.tables = bound, artifact, tables
        self.hopeless: set[str | None] = set()
        """Tuned types that no screened stall setting keeps within the target in the current :meth:`fit`: they fall
        back to reflect-only (:meth:`reflect_only`)."""
        self.type_targets: dict[str | None, float] = {}
        """Per task type, a target other than :attr:`target` (:meth:`fit` given a dict)."""
        self.target = bound
        """The false-stop rate the search's choices must meet (:meth:`fit`'s ``target``); the starting policy is judged
        against ``bound``."""
        self.keep_points = keep_points
        self.fit_successes = fit_successes or {}
        self.defaults = {t: budget_of(base, t) for t in type_names}

    # ---- one type, one stall setting ---------------------------------------------------------------------------

    def _target(self, name: str | None) -> float:
        return self.type_targets.get(name, self.target)

    def _feasible(self, c: Counts, fitted: bool = False, start: bool = False, name: str | None = None) -> bool:
        """Within the target: with the order-statistics headroom for a fitted budget (:func:`certified`); plainly for
        the starting or most lenient budget numbers (not fitted to these runs: their in-sample rate is not biased low).
        ``start``: the starting policy itself (starting stall settings and budget), judged plainly against the bound."""
        if fitted:
            return certified(c.false_stops, c.successes, self._target(name))
        limit = self.bound if start else self._target(name)
        return c.false_stops <= limit * c.successes + 1e-9

    def _score(self, c: Counts, totals: tuple[int, int]) -> float:
        calls, tokens = totals
        return (c.failed_calls_saved / calls if calls else 0.0) + (c.failed_tokens_saved / tokens if tokens else 0.0)

    def _fit_type(
        self, table: ProbeTable, name: str | None, totals: tuple[int, int], start_stall: bool = False
    ) -> TypeFit:
        """``start_stall``: ``table`` is the starting stall settings' pass, so the starting budget there is the
        starting policy (judged against the bound, not the target)."""
        seen: dict[tuple, tuple] = {}
        points: list[tuple[float, float]] = []
        start = self.defaults[name]

        def evaluate(b: Budget, fitted: bool = True) -> tuple:
            key = b.as_tuple()
            if key not in seen:
                c = self.runset.counts(table.runs, table.stops(b), self.artifact)
                ok = self._feasible(c, fitted, start=start_stall and b == start, name=name)
                rank = (ok, self._score(c, totals) if ok else -c.false_stop_rate)
                seen[key] = (rank, c)
                if self.keep_points:
                    points.append((c.false_stop_rate, c.calls_saved))
            return seen[key]

        if name not in self.tuned:
            rank, c = evaluate(start, fitted=False)
            return TypeFit(name, False, start, c, rank[0], points)
        values = {k: self.space.values(k, getattr(start, k)) for k in BUDGET_KEYS}
        lenient = start.model_copy(
            update={
                "hard_cap": max(values["hard_cap"]),
                "base_budget": max(v for v in values["base_budget"] if v <= max(values["hard_cap"])),
            }
        )
        successes = int((self.runset.success[table.runs] == 1).sum())
        successes = min(successes, self.fit_successes.get(name, successes))
        if not certified(0, successes, self._target(name)):  # too few successes to certify any fitted budget
            rank, c = evaluate(start, fitted=False)
            chosen = start
            if not rank[0] and lenient != start:  # loosening needs no headroom: it can only stop fewer
                lrank, lc = evaluate(lenient, fitted=False)
                if lrank > rank:
                    rank, c, chosen = lrank, lc, lenient
            return TypeFit(name, True, chosen, c, rank[0], points, budget_fitted=False)
        # the two corners are not fitted to these runs (the start, and the most lenient budget): judged plainly, so a
        # false stop the stall rules make whatever the budget does not rule them out; every other point with headroom
        evaluate(start, fitted=False)
        evaluate(lenient, fitted=False)
        best: tuple | None = None
        for begin in (start, lenient):
            current, cur_rank = begin, evaluate(begin)[0]
            for _sweep in range(8):
                moved = False
                for key in BUDGET_KEYS:
                    for v in values[key]:
                        update: dict[str, Any] = {key: v}
                        if key == "hard_cap":  # a lower cap takes the base budget down with it
                            update["base_budget"] = min(current.base_budget, v)
                        cand = current.model_copy(update=update)
                        if not cand.valid or cand == current:
                            continue
                        rank = evaluate(cand)[0]
                        if rank > cur_rank:
                            current, cur_rank, moved = cand, rank, True
                if not moved:
                    break
            if best is None or cur_rank > best[0]:
                best = (cur_rank, current)
        assert best is not None
        rank, chosen = best
        return TypeFit(name, True, chosen, seen[chosen.as_tuple()][1], rank[0], points, budget_fitted=chosen != start)

    # ---- all types, one stall setting --------------------------------------------------------------------------

    def _fit_stall(self, stall: dict[str, Any], train: np.ndarray) -> tuple[tuple, dict[str | None, TypeFit]]:
        table = self.tables(stall)
        in_train = np.zeros(len(self.runset), dtype=bool)
        in_train[train] = True
        table = table.subset(in_train[table.runs])
        fail = self.runset.success[table.runs] == 0
        totals = (
            int(self.runset.total_calls[table.runs][fail].sum()),
            int(self.runset.total_tokens[table.runs][fail & self.runset.has_tokens[table.runs]].sum()),
        )
        types: dict[str | None, TypeFit] = {}
        for code, name in enumerate(self.type_names):
            mask = self.type_of[table.runs] == code
            if mask.any():
                types[name] = self._fit_type(table.subset(mask), name, totals, start_stall=not stall)
        # a type that no setting keeps within the target (:meth:`fit`) falls back to reflect-only (its stalls
        # reflect, its hard cap alone stops it) when that stops fewer of its successful runs
        for name, f in list(types.items()):
            if name in self.hopeless and not f.feasible:
                fallback = self.reflect_only(name, train)
                if fallback.feasible or fallback.counts.false_stop_rate < f.counts.false_stop_rate:
                    fallback.points, fallback.unmet_rate = f.points, f.counts.false_stop_rate
                    types[name] = fallback
        infeasible = [f for f in types.values() if not f.feasible]
        excess = sum(f.counts.false_stop_rate - self._target(f.name) for f in infeasible)
        score = sum(self._score(f.counts, totals) for f in types.values())
        return (-len(infeasible), -excess, score), types  # while infeasible: the fewest false stops first

    def _screen(
        self, candidates: list[dict[str, Any]], train: np.ndarray
    ) -> list[tuple[tuple, dict[str, Any], dict[str | None, TypeFit]]]:
        """(rank, stall setting, per-type fits) of every candidate on the runs ``train``."""
        results = []
        for stall in candidates:
            rank, types = self._fit_stall(stall, train)
            results.append((rank, stall, types))
        return results

    def fit(self, train: np.ndarray, target: float | dict[str | None, float] | None = None) -> Fit:
        """The best policy for the runs at indices ``train``. ``target``: the false-stop rate the search's choices
        must meet (default: the bound), or one per task type (types not named: the bound); the starting policy is
        judged against the bound whatever the target."""
        if isinstance(target, dict):
            saved_types, self.type_targets = self.type_targets, target
            try:
                return self.fit(train)
            finally:
                self.type_targets = saved_types
        if target is not None and target != self.target:
            saved, self.target = self.target, target
            try:
                return self.fit(train)
            finally:
                self.target = saved
        candidates = stall_candidates(self.base, self.space) if self.tuned else [{}]
        self.hopeless = set()
        results = self._screen(candidates, train)
        # a tuned type that no screened stall setting keeps within the target falls back to reflect-only: the
        # candidates are ranked again with it so, and its stalls no longer pull the shared choice towards the least
        # bad setting for it
        self.hopeless = {name for name in self.tuned if all(name in o and not o[name].feasible for _, _, o in results)}
        if self.hopeless:
            results = self._screen(candidates, train)
        start_rank = results[0][0]
        best_by_key: dict[str, tuple[tuple, Any]] = {}
        for rank, stall, _ in results[1:]:
            ((key, value),) = stall.items()
            if rank > start_rank and (key not in best_by_key or rank > best_by_key[key][0]):
                best_by_key[key] = (rank, value)
        if len(best_by_key) >= 2:
            combined = {k: v for k, (_, v) in best_by_key.items()}
            rank, types = self._fit_stall(combined, train)
            results.append((rank, combined, types))
        best = results[0]
        for r in results[1:]:
            if r[0] > best[0]:
                best = r
        rank, stall, types = best
        if self.keep_points:  # every candidate's points, for the trade-off plot
            for _, _, other in results:
                for name, f in other.items():
                    if other is not types:
                        types[name].points.extend(f.points)
        # each named task type may take another screened candidate than the shared one, ranked by its own runs on
        # the same passes (no further engine pass); ties keep the shared choice. Picked among ~18 candidates on a
        # type's runs alone, the choice is a fit to them: it counts within the target only with the order-statistics
        # headroom of a fitted budget (:func:`certified`), else a tight bound is broken held out (bfcl, 1%)
        type_stall: dict[str | None, dict[str, Any]] = {}
        for name, shared in list(types.items()):
            if name is None or name not in self.tuned:
                continue
            own_rank, own = self._type_rank(shared), (stall, shared)
            for _, cand, other in results:
                tf = other.get(name)
                if tf is None or tf is shared:
                    continue
                n = min(tf.counts.successes, self.fit_successes.get(name, tf.counts.successes))
                if certified(tf.counts.false_stops, n, self._target(name)) and self._type_rank(tf) > own_rank:
                    own_rank, own = self._type_rank(tf), (cand, tf)
            if own[0] is not stall:
                points = shared.points
                type_stall[name], types[name] = own[0], own[1]
                types[name].points = points
        for name, f in types.items():  # the types that fell back to reflect-only get its settings as their own
            if f.reflect_only:
                type_stall[name] = reflect_only(f.budget.hard_cap)
                rates = [o[name].unmet_rate for _, _, o in results if name in o]
                f.unmet_rate = min((r for r in rates if r is not None), default=f.unmet_rate)
        return Fit(stall=stall, types=types, score=rank[-1], candidates=len(results), type_stall=type_stall)

    def reflect_only(self, name: str | None, train: np.ndarray) -> TypeFit:
        """Type ``name``'s reflect-only policy on the runs ``train``: stalls reflect, never stop
        (:func:`pyguard.tune.space.reflect_only`), and the budget is its hard cap from the first call, so the hard cap
        alone stops a run: the starting hard cap, or the search space's highest when the starting one still stops
        more successful runs than the bound allows. Not fitted (no choice among candidates): judged plainly against
        the bound."""
        start = self.defaults[name]
        in_train = np.zeros(len(self.runset), dtype=bool)
        in_train[train] = True
        best: TypeFit | None = None
        for cap in dict.fromkeys((start.hard_cap, max(self.space.values("hard_cap", start.hard_cap)))):
            table = self.tables(reflect_only(cap))
            table = table.subset(in_train[table.runs] & (self.type_of[table.runs] == self.type_names.index(name)))
            budget = start.model_copy(update={"base_budget": cap, "hard_cap": cap})
            c = self.runset.counts(table.runs, table.stops(budget), self.artifact)
            ok = c.false_stops <= self.bound * c.successes + 1e-9
            best = TypeFit(name, True, budget, c, ok, budget_fitted=False, reflect_only=True)
            if ok:
                break
        assert best is not None
        return best

    def _type_rank(self, f: TypeFit) -> tuple:
        """One type's rank under one candidate: within the target first, then its own savings (calls and tokens, as
        shares of its failed runs' totals), else the fewest false stops."""
        c = f.counts
        return (f.feasible, self._score(c, (c.failed_calls, c.failed_tokens)) if f.feasible else -c.false_stop_rate)
