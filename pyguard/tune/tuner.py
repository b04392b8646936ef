"""``tune(records, options)``: fit the policy to labelled runs and estimate it honestly by cross-validation.

1. Check the input (labels, successes per type, the bound), name what is wrong and what to do.
2. Fit on all labelled runs (:class:`pyguard.tune.search.Fitter`): the policy that is written.
3. k-fold cross-validation grouped by task (all runs of one task in one fold; folds stratified by task type): fit on
   k-1 folds, score the fitted policy on the held-out fold with :func:`pyguard.replay.replay_run`. The held-out
   figures pool the k folds; intervals: Wilson for the false-stop rate, a bootstrap over tasks for the savings.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pyguard.base.errors import InputError
from pyguard.base.events import RunRecord
from pyguard.replay import recorded_success
from pyguard.tune.figures import figures, scipy_stats, task_folds
from pyguard.tune.models import Figures, TuneOptions, TuneResult, TypeResult
from pyguard.tune.probe import RunPool, probe_config
from pyguard.tune.search import Fitter, min_successes_to_fit
from pyguard.tune.simulate import ProbeTable, RunSet
from pyguard.tune.space import build_policy, stall_candidates, stall_key

__all__: list[str] = []

TARGET_SHARES: tuple[float, ...] = (1.0, 0.5, 0.25, 0.0)
"""The fit's own false-stop target, as shares of the bound, tried in turn: a policy fitted right at the bound
overfits it (it is the best of thousands on the same runs), so when the cross-validated rate of some task type
exceeds the bound, the fit aims lower and the cross-validation is run again."""

Progress = Callable[[int, int], None]
"""``progress(advance, add_total)``: runs replayed since the last call, and runs added to the planned work."""


def _task(record: RunRecord) -> str:
    return record.start.task if record.start.task else f"run:{record.run_id}"


def _check_input(records: Sequence[RunRecord], options: TuneOptions) -> tuple[list[RunRecord], list[str]]:
    warnings: list[str] = []
    labelled = [r for r in records if recorded_success(r) is not None]
    if not records:
        raise InputError("no runs to tune on; pass a trace file or a directory of labelled recordings")
    if not labelled:
        raise InputError(
            f"none of the {len(records)} runs has an outcome label (success/reward/resolved, or a live trace's"
            " outcome): tune needs to know which runs succeeded; add labels to the recordings"
        )
    if len(labelled) < len(records):
        warnings.append(f"{len(records) - len(labelled)} unlabelled run(s) skipped (no success label)")
    return labelled, warnings


def tune(
    records: Sequence[RunRecord],
    options: TuneOptions | None = None,
    progress: Progress | None = None,
    last_change: Callable[[RunRecord], int] | None = None,
) -> TuneResult:
    """Fit the policy to ``records`` (labelled runs) and cross-validate it. Raises InputError for bad input.
    ``last_change(record)`` (with ``options.artifact``): the last iteration that changed the artifact, when the
    default (the last iteration requesting a write) is not the definition wanted."""
    t0 = time.perf_counter()
    scipy_stats()  # a missing extra is said before the work, not after it
    o = options or TuneOptions()
    own = sorted(
        name
        for name, t in o.base.task_types.items()
        if t.stall is not None or t.max_reflections is not None or t.stop_on_fruitless_retry is not None
    )
    if own:
        raise InputError(
            f"the starting policy sets stall or reflection settings per task type ({', '.join(own)}); tune starts"
            " from one shared [stall] and fits the per-type tables itself: remove [task_types.X.stall],"
            " max_reflections and stop_on_fruitless_retry from those task types"
        )
    report = progress or (lambda advance, add: None)
    labelled, warnings = _check_input(records, o)
    runset = RunSet(labelled, o.base.tools.write_tools, o.base.tools.read_tools, last_change)
    n = len(labelled)
    names = [r.task_type if o.by == "task_type" else None for r in labelled]
    type_names: list[str | None] = sorted(set(names), key=lambda t: (t is not None, t or ""))
    type_of = np.asarray([type_names.index(t) for t in names], dtype=np.int64)
    groups_s = [_task(r) for r in labelled]
    group_codes = {g: i for i, g in enumerate(sorted(set(groups_s)))}
    groups = np.asarray([group_codes[g] for g in groups_s], dtype=np.int64)
    if all(not r.start.task for r in labelled):
        warnings.append(
            "no run names its task: folds group runs one by one (repeated runs of a task may leak"
            " between folds; record the task text in each run's header)"
        )
    tuned: set[str | None] = set()
    notes: dict[str | None, str] = {}
    for code, name in enumerate(type_names):
        mask = type_of == code
        succ, fail = int((runset.success[mask] == 1).sum()), int((runset.success[mask] == 0).sum())
        shown = "runs with no task type" if name is None else f"task type {name!r}"
        if succ == 0:  # every policy meets the bound on it (nothing to stop falsely): tune answers, untuned for it
            notes[name] = (
                f"{int(mask.sum())} labelled run(s) and no successful one: its false-stop rate cannot be measured;"
                " kept the starting policy's budget (add successful runs of it, fix its labels, or pass --by none to"
                " fit one policy for all)"
            )
            warnings.append(f"{shown}: {notes[name]}")
        elif int(mask.sum()) < o.min_runs or succ < o.min_successes:
            notes[name] = (
                f"too few runs to tune ({int(mask.sum())} labelled, {succ} successful; needs"
                f" {o.min_runs} and {o.min_successes}): kept the starting policy's budget"
            )
            warnings.append(f"{shown}: {notes[name]}")
        elif fail == 0:
            notes[name] = "no failed runs: nothing to save, kept the starting policy's budget"
            warnings.append(f"{shown}: {notes[name]}")
        else:
            tuned.add(name)
    n_groups = len(group_codes)
    if n_groups < 2:
        raise InputError("all labelled runs belong to one task: cross-validation needs runs of at least 2 tasks")
    k = min(o.folds, n_groups)
    if k < o.folds:
        warnings.append(f"only {n_groups} tasks: {k} folds instead of {o.folds}")

    planned = len(stall_candidates(o.base, o.space)) if tuned else 1
    report(0, planned * n + n)
    cache: dict[tuple, ProbeTable] = {}
    everyone = np.arange(n)
    rng = np.random.default_rng(o.seed)

    with RunPool(labelled, o.workers, progress=lambda m: report(m, 0)) as pool:

        def tables(stall: dict[str, Any]) -> ProbeTable:
            key = stall_key(stall)
            if key not in cache:
                if len(cache) >= planned:
                    report(0, n)
                cache[key] = ProbeTable(everyone, pool.probes(probe_config(o.base, stall), list(everyone)))
            return cache[key]

        folds = task_folds(groups_s, names, k, o.seed)
        fold_successes = {  # a type's budget is fitted in every fit or in none: see Fitter
            name: min(int(((runset.success == 1) & (type_of == code) & (folds != fold)).sum()) for fold in range(k))
            for code, name in enumerate(type_names)
        }
        need = min_successes_to_fit(o.max_false_stop_rate)
        for name in type_names:
            if name in tuned and (need is None or fold_successes[name] < need):
                shown = "runs with no task type" if name is None else f"task type {name!r}"
                notes[name] = (
                    f"{fold_successes[name]} successful runs in the smallest training fold: a budget fitted to n"
                    " successes stops a new one with chance 1/(n+1), so certifying a false-stop rate of"
                    f" {o.max_false_stop_rate:g} needs {'more' if need is None else f'at least {need}'} in every fit;"
                    " kept the starting budget numbers (the most lenient ones if those break the bound), only the"
                    " shared stall settings tuned"
                )
                warnings.append(f"{shown}: {notes[name]}")

        def fitter(points: bool) -> Fitter:
            return Fitter(
                runset,
                type_of,
                type_names,
                tuned,
                o.base,
                o.space,
                o.max_false_stop_rate,
                o.artifact,
                tables,
                keep_points=points,
                fit_successes=fold_successes,
            )

        screening = stall_candidates(o.base, o.space) if tuned else [{}]
        found = pool.probes_many([probe_config(o.base, stall) for stall in screening], list(everyone))
        for stall, probes in zip(screening, found, strict=False):
            cache[stall_key(stall)] = ProbeTable(everyone, probes)
        full = fitter(True).fit(everyone)
        for name in tuned:
            f = full.types[name]
            shown = "runs with no task type" if name is None else f"task type {name!r}"
            if f.reflect_only:
                notes[name] = (
                    f"no stall setting in the search space keeps its false-stop rate within {o.max_false_stop_rate:g}"
                    f" (the lowest is {f.unmet_rate:.4g}): reflect-only, its stalls reflect and never stop it, the"
                    f" hard cap of {f.budget.hard_cap} model calls per turn alone does"
                )
                warnings.append(f"{shown}: {notes[name]}")
            if not f.feasible:
                warnings.append(
                    f"{shown}: even reflect-only (the hard caps alone) stops {f.counts.false_stops} of"
                    f" {f.counts.successes} successful runs ({f.counts.false_stop_rate:.4g} >"
                    f" {o.max_false_stop_rate:g}): no policy in the search space meets the bound on it; the most"
                    " lenient one is written; check its labels or raise --max-false-stop-rate"
                )
        for name, f in full.types.items():
            if name not in tuned and not f.feasible:
                warnings.append(
                    f"task type {name!r} (kept the starting budget): its false-stop rate"
                    f" {f.counts.false_stop_rate:.3g} exceeds the bound"
                )

        cv = fitter(False)
        held_stops = np.zeros(n, dtype=np.int64)
        # the fit's own target per task type: the bound, lowered for a type while its held-out runs exceed it (only
        # that type's: lowering every type's for one type over the bound takes the others' per-type choices away)
        level = dict.fromkeys(type_names, 0)
        targets: dict[str | None, float] = {}
        for _round in range(len(TARGET_SHARES)):
            targets = {name: o.max_false_stop_rate * TARGET_SHARES[level[name]] for name in type_names}
            held_stops = np.zeros(n, dtype=np.int64)
            fold_stall: list[dict[str, Any]] = []
            fold_type_stall: list[dict[str, dict[str, Any]]] = []
            mismatches = 0
            for fold in range(k):
                train, test = np.flatnonzero(folds != fold), np.flatnonzero(folds == fold)
                fit = cv.fit(train, target=targets)
                fold_stall.append(fit.stall)
                fold_type_stall.append({str(t): v for t, v in fit.type_stall.items()})
                config = build_policy(o.base, fit.stall, fit.budgets, fit.type_stall)
                held_stops[test] = pool.replay_stops(config, list(test))
                in_test = np.zeros(n, dtype=bool)
                in_test[test] = True
                for code, name in enumerate(type_names):
                    table = tables(fit.stall_of(name))
                    sub = table.subset(in_test & (type_of == code))
                    if len(sub.runs):
                        budget = fit.budgets.get(name, cv.defaults[name])
                        mismatches += int((sub.stops(budget) != held_stops[sub.runs]).sum())
            over = [
                name
                for code, name in enumerate(type_names)
                if name in tuned
                and runset.counts(
                    np.flatnonzero(type_of == code), held_stops[type_of == code], o.artifact
                ).false_stop_rate
                > o.max_false_stop_rate
            ]
            lower = [name for name in over if level[name] < len(TARGET_SHARES) - 1]
            if not lower:
                break
            for name in lower:
                level[name] += 1
            report(0, n)
        lowered = {name: t for name, t in targets.items() if t < o.max_false_stop_rate}
        target = min(targets.values(), default=o.max_false_stop_rate)
        if lowered:
            shown = ", ".join(f"{'runs with no task type' if t is None else repr(t)} {v:g}" for t, v in lowered.items())
            warnings.append(
                f"fitted at the bound, some task type's held-out false-stop rate exceeded {o.max_false_stop_rate:g},"
                f" so the fit aimed lower for it: {shown}; this target was"
                " chosen on the same folds, so the held-out figures may be slightly optimistic"
            )
            full = fitter(True).fit(everyone, target=targets)
        if over:
            warnings.append(
                f"held-out false-stop rate above the bound even at the lowest fit target: {', '.join(map(repr, over))}"
            )

    start_table = cache[stall_key({})]
    default_stops = np.zeros(n, dtype=np.int64)
    full_stops = np.zeros(n, dtype=np.int64)
    for code, name in enumerate(type_names):
        mask = type_of == code
        default_stops[mask] = start_table.subset(mask).stops(cv.defaults[name])
        full_stops[mask] = cache[stall_key(full.stall_of(name))].subset(mask).stops(full.types[name].budget)

    # the starting policy's own rate, per type (not fitted: its figures on all runs are out of sample); where it breaks
    # the bound, its savings are no like-for-like baseline for the tuned policy's, which must stop fewer
    default_ok: dict[str | None, bool] = {}
    for code, name in enumerate(type_names):
        mask = type_of == code
        c = runset.counts(np.flatnonzero(mask), default_stops[mask], o.artifact)
        default_ok[name] = c.false_stops <= o.max_false_stop_rate * c.successes + 1e-9
        if not default_ok[name] and name in tuned:
            shown = "runs with no task type" if name is None else f"task type {name!r}"
            warnings.append(
                f"{shown}: the starting (default) policy breaks the bound on these runs itself ({c.false_stops} of"
                f" {c.successes} successful runs stopped, {c.false_stop_rate:.2%} > {o.max_false_stop_rate:g}): its"
                " savings are not a like-for-like baseline (the tuned policy must stop fewer successful runs);"
                " compare the held-out false-stop rates side by side"
            )

    # never worse than the start: an unfitted starting policy that meets the bound on every task type and saves at
    # least as much as the tuned one does held out is kept (its figures on all runs are themselves out of sample)
    kept_start = False
    if tuned:

        def saved(stops: np.ndarray) -> float:
            c = runset.counts(everyone, stops, o.artifact)
            return c.calls_saved + (c.tokens_saved or 0.0)

        start_ok = all(default_ok[name] for name in type_names if name in tuned)
        if start_ok and saved(default_stops) >= saved(held_stops):
            kept_start = True
            warnings.append(
                "the starting policy meets the bound on every task type and saves at least as much as"
                " the tuned one did on held-out runs: kept the starting policy (its figures on all runs"
                " are given as held-out: it was not fitted to them)"
            )
            full.stall = {}
            full.type_stall = {}
            for name in type_names:
                full.types[name].budget = cv.defaults[name]
            held_stops = full_stops = default_stops

    def figs(runs: np.ndarray, stops: np.ndarray) -> Figures:
        return figures(runset, runs, stops[runs], groups, o.artifact, rng, o.bootstrap)

    types: list[TypeResult] = []
    for code, name in enumerate(type_names):
        runs = np.flatnonzero(type_of == code)
        types.append(
            TypeResult(
                task_type=name,
                runs=len(runs),
                successful=int((runset.success[runs] == 1).sum()),
                failed=int((runset.success[runs] == 0).sum()),
                tasks=len(set(groups[runs].tolist())),
                tuned=name in tuned,
                budget_fitted=name in tuned and full.types[name].budget_fitted and not kept_start,
                reflect_only=name in tuned and full.types[name].reflect_only and not kept_start,
                note=notes.get(name),
                default_meets_bound=default_ok[name],
                budget=full.types[name].budget.model_dump(),
                held_out=figs(runs, held_stops) if name in tuned else None,
                in_sample=figs(runs, full_stops),
                default=figs(runs, default_stops),
            )
        )
    policy = build_policy(o.base, full.stall, full.budgets, full.type_stall)
    return TuneResult(
        runs=len(records),
        labelled_runs=n,
        skipped_unlabelled=len(records) - n,
        tasks=n_groups,
        folds=k,
        seed=o.seed,
        max_false_stop_rate=o.max_false_stop_rate,
        artifact=o.artifact,
        search=(
            "stall settings screened one at a time around the start (one engine pass each, shared by all"
            " folds) plus their combination, shared, and per task type where certified on its runs; budgets per task"
            " type by coordinate descent on an exact"
            " simulation of each pass"
        ),
        target_false_stop_rate=target,
        kept_start=kept_start,
        default_meets_bound=all(default_ok.values()),
        stall=full.stall,
        type_stall={str(t): v for t, v in full.type_stall.items()},
        types=types,
        held_out=figs(everyone, held_stops) if tuned else None,
        in_sample=figs(everyone, full_stops),
        default=figs(everyone, default_stops),
        fold_stall=fold_stall,
        fold_type_stall=fold_type_stall,
        verified_runs=n,
        verification_mismatches=mismatches,
        warnings=warnings,
        engine_passes=len(cache) + 1,
        elapsed_s=round(time.perf_counter() - t0, 3),
        policy=policy.model_dump(mode="json"),
        points={str(t): full.types[t].points for t in type_names if t in tuned},
    )
