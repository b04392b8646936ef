"""``tune(records, options)``: fit the policy to labelled runs and estimate it honestly by cross-validation.

1. Check the input (labels, successes per type, the bound), name what is wrong and what to do.
2. Fit on all labelled runs (:class:`pyguard.tune.search.Fitter`): the policy that is written.
3. k-fold cross-validation grouped by task (all runs of one task in one fold; folds stratified by task type): fit on
   k-1 folds, score the fitted policy on the held-out fold with :func:`pyguard.replay.replay_run`
   (:mod:`pyguard.tune.held_out`). The held-out figures pool the k folds; intervals: Wilson for the false-stop rate, a
   bootstrap over tasks for the savings.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from pyguard.base.errors import InputError
from pyguard.base.events import RunRecord
from pyguard.engine import PolicyConfig
from pyguard.replay import recorded_success
from pyguard.tune.figures import figures, scipy_stats, task_folds
from pyguard.tune.held_out import HeldOut, ProbeTables, Progress, Tuning, cross_validate, shown
from pyguard.tune.models import Figures, TuneOptions, TuneResult, TypeResult
from pyguard.tune.probe import RunPool
from pyguard.tune.search import Fit, Fitter, min_successes_to_fit
from pyguard.tune.simulate import RunSet
from pyguard.tune.space import build_policy, stall_candidates

__all__: list[str] = []

SEARCH = (
    "stall settings screened one at a time around the start (one engine pass each, shared by all"
    " folds) plus their combination, shared, and per task type where certified on its runs; budgets per task"
    " type by coordinate descent on an exact"
    " simulation of each pass"
)
"""How the fit searches, as ``TuneResult.search`` says it."""


def _task(record: RunRecord) -> str:
    return record.start.task if record.start.task else f"run:{record.run_id}"


def _refuse_per_type_stall(base: PolicyConfig) -> None:
    own = sorted(
        name
        for name, t in base.task_types.items()
        if t.stall is not None or t.max_reflections is not None or t.stop_on_fruitless_retry is not None
    )
    if own:
        raise InputError(
            f"the starting policy sets stall or reflection settings per task type ({', '.join(own)}); tune starts"
            " from one shared [stall] and fits the per-type tables itself: remove [task_types.X.stall],"
            " max_reflections and stop_on_fruitless_retry from those task types"
        )


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


def _tuning(records: Sequence[RunRecord], o: TuneOptions, last_change: Callable[[RunRecord], int] | None) -> Tuning:
    """The labelled runs grouped as the fit needs them: task types (coded), tasks (the folds' groups)."""
    labelled, warnings = _check_input(records, o)
    runset = RunSet(labelled, o.base.tools.write_tools, o.base.tools.read_tools, last_change)
    names = [r.task_type if o.by == "task_type" else None for r in labelled]
    type_names: list[str | None] = sorted(set(names), key=lambda t: (t is not None, t or ""))
    tasks = [_task(r) for r in labelled]
    group_codes = {g: i for i, g in enumerate(sorted(set(tasks)))}
    if all(not r.start.task for r in labelled):
        warnings.append(
            "no run names its task: folds group runs one by one (repeated runs of a task may leak"
            " between folds; record the task text in each run's header)"
        )
    return Tuning(
        options=o,
        labelled=labelled,
        runset=runset,
        names=names,
        type_names=type_names,
        type_of=np.asarray([type_names.index(t) for t in names], dtype=np.int64),
        tasks=tasks,
        groups=np.asarray([group_codes[g] for g in tasks], dtype=np.int64),
        n_groups=len(group_codes),
        warnings=warnings,
    )


def _choose_tuned_types(tn: Tuning) -> None:
    """Which task types have the runs to be tuned (:attr:`Tuning.tuned`); the others keep the starting budget, with
    a note saying why."""
    o = tn.options
    for code, name in enumerate(tn.type_names):
        mask = tn.type_of == code
        succ, fail = int((tn.runset.success[mask] == 1).sum()), int((tn.runset.success[mask] == 0).sum())
        if succ == 0:  # every policy meets the bound on it (nothing to stop falsely): tune answers, untuned for it
            tn.note(
                name,
                f"{int(mask.sum())} labelled run(s) and no successful one: its false-stop rate cannot be measured;"
                " kept the starting policy's budget (add successful runs of it, fix its labels, or pass --by none to"
                " fit one policy for all)",
            )
        elif int(mask.sum()) < o.min_runs or succ < o.min_successes:
            tn.note(
                name,
                f"too few runs to tune ({int(mask.sum())} labelled, {succ} successful; needs"
                f" {o.min_runs} and {o.min_successes}): kept the starting policy's budget",
            )
        elif fail == 0:
            tn.note(name, "no failed runs: nothing to save, kept the starting policy's budget")
        else:
            tn.tuned.add(name)


def _fold_count(tn: Tuning) -> int:
    o = tn.options
    if tn.n_groups < 2:
        raise InputError("all labelled runs belong to one task: cross-validation needs runs of at least 2 tasks")
    k = min(o.folds, tn.n_groups)
    if k < o.folds:
        tn.warnings.append(f"only {tn.n_groups} tasks: {k} folds instead of {o.folds}")
    return k


def _fold_successes(tn: Tuning, folds: np.ndarray, k: int) -> dict[str | None, int]:
    """Per task type, the successful runs of its smallest training fold: a type's budget is fitted in every fit or
    in none (see :class:`Fitter`); a tuned type with too few to certify the bound keeps its starting budget."""
    o, success = tn.options, tn.runset.success
    fold_successes = {
        name: min(int(((success == 1) & (tn.type_of == code) & (folds != fold)).sum()) for fold in range(k))
        for code, name in enumerate(tn.type_names)
    }
    need = min_successes_to_fit(o.max_false_stop_rate)
    for name in tn.type_names:
        if name in tn.tuned and (need is None or fold_successes[name] < need):
            tn.note(
                name,
                f"{fold_successes[name]} successful runs in the smallest training fold: a budget fitted to n"
                " successes stops a new one with chance 1/(n+1), so certifying a false-stop rate of"
                f" {o.max_false_stop_rate:g} needs {'more' if need is None else f'at least {need}'} in every fit;"
                " kept the starting budget numbers (the most lenient ones if those break the bound), only the"
                " shared stall settings tuned",
            )
    return fold_successes


def _warn_of_the_full_fit(tn: Tuning, full: Fit) -> None:
    """What the fit on all runs could not do: task types left reflect-only, or with no policy within the bound."""
    bound = tn.options.max_false_stop_rate
    for name in tn.tuned:
        f = full.types[name]
        if f.reflect_only:
            tn.note(
                name,
                f"no stall setting in the search space keeps its false-stop rate within {bound:g}"
                f" (the lowest is {f.unmet_rate:.4g}): reflect-only, its stalls reflect and never stop it, the"
                f" hard cap of {f.budget.hard_cap} model calls per turn alone does",
            )
        if not f.feasible:
            tn.warnings.append(
                f"{shown(name)}: even reflect-only (the hard caps alone) stops {f.counts.false_stops} of"
                f" {f.counts.successes} successful runs ({f.counts.false_stop_rate:.4g} >"
                f" {bound:g}): no policy in the search space meets the bound on it; the most"
                " lenient one is written; check its labels or raise --max-false-stop-rate"
            )
    for name, f in full.types.items():
        if name not in tn.tuned and not f.feasible:
            tn.warnings.append(
                f"task type {name!r} (kept the starting budget): its false-stop rate"
                f" {f.counts.false_stop_rate:.3g} exceeds the bound"
            )


def _start_meets_bound(tn: Tuning, default_stops: np.ndarray) -> dict[str | None, bool]:
    """The starting policy's own rate, per type (not fitted: its figures on all runs are out of sample); where it
    breaks the bound, its savings are no like-for-like baseline for the tuned policy's, which must stop fewer."""
    bound = tn.options.max_false_stop_rate
    default_ok: dict[str | None, bool] = {}
    for code, name in enumerate(tn.type_names):
        mask = tn.type_of == code
        c = tn.runset.counts(np.flatnonzero(mask), default_stops[mask], tn.options.artifact)
        default_ok[name] = c.false_stops <= bound * c.successes + 1e-9
        if not default_ok[name] and name in tn.tuned:
            tn.warnings.append(
                f"{shown(name)}: the starting (default) policy breaks the bound on these runs itself ({c.false_stops}"
                f" of {c.successes} successful runs stopped, {c.false_stop_rate:.2%} > {bound:g}): its"
                " savings are not a like-for-like baseline (the tuned policy must stop fewer successful runs);"
                " compare the held-out false-stop rates side by side"
            )
    return default_ok


def _keep_start_if_no_worse(
    tn: Tuning, full: Fit, defaults: dict, stops: dict[str, np.ndarray], default_ok: dict[str | None, bool]
) -> bool:
    """Never worse than the start: an unfitted starting policy that meets the bound on every task type and saves at
    least as much as the tuned one does held out is kept (its figures on all runs are themselves out of sample).
    Then ``full`` becomes the starting policy and ``stops`` (``held``, ``full``, ``default``) its stops."""
    if not tn.tuned:
        return False

    def saved(stops: np.ndarray) -> float:
        c = tn.runset.counts(tn.everyone, stops, tn.options.artifact)
        return c.calls_saved + (c.tokens_saved or 0.0)

    start_ok = all(default_ok[name] for name in tn.type_names if name in tn.tuned)
    if not (start_ok and saved(stops["default"]) >= saved(stops["held"])):
        return False
    tn.warnings.append(
        "the starting policy meets the bound on every task type and saves at least as much as"
        " the tuned one did on held-out runs: kept the starting policy (its figures on all runs"
        " are given as held-out: it was not fitted to them)"
    )
    full.stall = {}
    full.type_stall = {}
    for name in tn.type_names:
        full.types[name].budget = defaults[name]
    stops["held"] = stops["full"] = stops["default"]
    return True


def _type_results(
    tn: Tuning, full: Fit, stops: dict[str, np.ndarray], default_ok: dict, kept_start: bool, figs: Callable
) -> list[TypeResult]:
    types: list[TypeResult] = []
    runset = tn.runset
    for code, name in enumerate(tn.type_names):
        runs = np.flatnonzero(tn.type_of == code)
        tuned = name in tn.tuned
        types.append(
            TypeResult(
                task_type=name,
                runs=len(runs),
                successful=int((runset.success[runs] == 1).sum()),
                failed=int((runset.success[runs] == 0).sum()),
                tasks=len(set(tn.groups[runs].tolist())),
                tuned=tuned,
                budget_fitted=tuned and full.types[name].budget_fitted and not kept_start,
                reflect_only=tuned and full.types[name].reflect_only and not kept_start,
                note=tn.notes.get(name),
                default_meets_bound=default_ok[name],
                budget=full.types[name].budget.model_dump(),
                held_out=figs(runs, stops["held"]) if tuned else None,
                in_sample=figs(runs, stops["full"]),
                default=figs(runs, stops["default"]),
            )
        )
    return types


def _fit_and_cross_validate(
    tn: Tuning, k: int, pool: RunPool, tables: ProbeTables, report: Progress
) -> tuple[Fit, Fitter, HeldOut]:
    """The fit on all runs (the policy written, refitted at the lowered targets if the cross-validation lowered
    any), the fitter of the folds, and the held-out estimate."""
    o = tn.options
    folds = task_folds(tn.tasks, tn.names, k, o.seed)
    fold_successes = _fold_successes(tn, folds, k)

    def fitter(points: bool) -> Fitter:
        return Fitter(
            tn.runset,
            tn.type_of,
            tn.type_names,
            tn.tuned,
            o.base,
            o.space,
            o.max_false_stop_rate,
            o.artifact,
            tables,
            keep_points=points,
            fit_successes=fold_successes,
        )

    tables.screen(stall_candidates(o.base, o.space) if tn.tuned else [{}])
    full = fitter(True).fit(tn.everyone)
    _warn_of_the_full_fit(tn, full)
    cv = fitter(False)
    held = cross_validate(tn, cv, folds, k, pool, tables, report)
    if held.lowered:
        full = fitter(True).fit(tn.everyone, target=held.targets)
    held.warn(tn)
    return full, cv, held


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
    _refuse_per_type_stall(o.base)
    report = progress or (lambda advance, add: None)
    tn = _tuning(records, o, last_change)
    _choose_tuned_types(tn)
    k = _fold_count(tn)
    planned = len(stall_candidates(o.base, o.space)) if tn.tuned else 1
    report(0, planned * tn.n + tn.n)
    rng = np.random.default_rng(o.seed)
    with RunPool(tn.labelled, o.workers, progress=lambda m: report(m, 0)) as pool:
        tables = ProbeTables(pool, o.base, tn.everyone, planned, report)
        full, cv, held = _fit_and_cross_validate(tn, k, pool, tables, report)
    stops = _stops(tn, tables, full, cv.defaults, held)
    default_ok = _start_meets_bound(tn, stops["default"])
    kept_start = _keep_start_if_no_worse(tn, full, cv.defaults, stops, default_ok)

    def figs(runs: np.ndarray, stops: np.ndarray) -> Figures:
        return figures(tn.runset, runs, stops[runs], tn.groups, o.artifact, rng, o.bootstrap)

    types = _type_results(tn, full, stops, default_ok, kept_start, figs)
    policy = build_policy(o.base, full.stall, full.budgets, full.type_stall)
    return TuneResult(
        runs=len(records),
        labelled_runs=tn.n,
        skipped_unlabelled=len(records) - tn.n,
        tasks=tn.n_groups,
        folds=k,
        seed=o.seed,
        max_false_stop_rate=o.max_false_stop_rate,
        artifact=o.artifact,
        search=SEARCH,
        target_false_stop_rate=held.target,
        kept_start=kept_start,
        default_meets_bound=all(default_ok.values()),
        stall=full.stall,
        type_stall={str(t): v for t, v in full.type_stall.items()},
        types=types,
        held_out=figs(tn.everyone, stops["held"]) if tn.tuned else None,
        in_sample=figs(tn.everyone, stops["full"]),
        default=figs(tn.everyone, stops["default"]),
        fold_stall=held.fold_stall,
        fold_type_stall=held.fold_type_stall,
        verified_runs=tn.n,
        verification_mismatches=held.mismatches,
        warnings=tn.warnings,
        engine_passes=len(tables.cache) + 1,
        elapsed_s=round(time.perf_counter() - t0, 3),
        policy=policy.model_dump(mode="json"),
        points={str(t): full.types[t].points for t in tn.type_names if t in tn.tuned},
    )


def _stops(tn: Tuning, tables: ProbeTables, full: Fit, defaults: dict, held: HeldOut) -> dict[str, np.ndarray]:
    """Where each run stops: ``default`` under the starting policy, ``full`` under the policy fitted on all runs
    (both from the probe passes), ``held`` under the policy fitted without its fold (replayed)."""
    default_stops = np.zeros(tn.n, dtype=np.int64)
    full_stops = np.zeros(tn.n, dtype=np.int64)
    for code, name in enumerate(tn.type_names):
        mask = tn.type_of == code
        default_stops[mask] = tables.of({}).subset(mask).stops(defaults[name])
        full_stops[mask] = tables.of(full.stall_of(name)).subset(mask).stops(full.types[name].budget)
    return {"default": default_stops, "full": full_stops, "held": held.stops}
