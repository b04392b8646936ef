"""``pyguard tune``: does it recover a known best policy, and how long does it take on 10,000 runs?

``python benchmarks/run.py tune`` (20 seeds; 10,000 runs timed) or ``--quick`` (2 seeds; 300 runs timed).
``python benchmarks/run.py tune --data DIR``: tune on each real source of DIR instead (the ``real_replay`` layout:
``<source>/source.toml``, loaded as ``real_replay`` loads it; artifact sources judged with its
``last_artifact_change``), bound 0.01, 5 folds by task, seed 0: the held-out figures against the default policy's.
Variants for diagnosis, by environment variable: ``PYGUARD_TUNE_SOURCES=a,b`` (only these sources),
``PYGUARD_TUNE_BY=none`` (one policy per source instead of one per task type), ``PYGUARD_TUNE_BUDGET=fixed`` (the
budget numbers held at the default policy's; stall settings and reflections still tuned), ``PYGUARD_TUNE_BOUND=0.02``
(the false-stop bound per task type instead of 0.01; e.g. issue 10's per-source bound, at which the default policy
itself meets the bound on every source, for a like-for-like comparison of the savings).

- recovery: for each seed, tune on :func:`pyguard.tune.synthetic.known_best_runs` (1,000 runs, 3 task types, the
  quick search space, bound 0.01, 5 folds); then score the tuned policy and the known best one
  (:func:`pyguard.tune.synthetic.known_best_cap`) on 3,000 fresh runs. Recovered: the tuned policy's false-stop
  rate there is within the bound and its failed-run tool calls saved are at least the best's less 0.5 points.
- timing: the whole ``tune`` (default search space, 5-fold cross-validation, 2 worker processes) on 10,000
  :func:`pyguard.tune.synthetic.tune_runs` runs (three task types, eleven kinds of run, legitimate and loops).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from pyguard.base.errors import InputError
from pyguard.engine import PolicyConfig
from pyguard.tune import SearchSpace, TuneOptions, tune
from pyguard.tune.probe import probe_config, probe_run
from pyguard.tune.simulate import ProbeTable, RunSet
from pyguard.tune.space import BUDGET_KEYS, TOP_KEYS, Budget, budget_of
from pyguard.tune.synthetic import KNOWN_LONGEST, known_best_cap, known_best_runs, tune_runs

SEEDS = 20
TRAIN = 1000
"""~200 successful runs per type, ~160 per training fold: a fitted budget needs 99 in every fit at a 1% bound
(:func:`pyguard.tune.search.min_successes_to_fit`); with 600 (~96 per fold) every type keeps the starting budget."""
TEST = 3000
TIMED = 10_000
BOUND = 0.01


def _score(records, config: PolicyConfig, runset: RunSet, probes: dict) -> tuple[float, float]:
    """(false-stop rate, failed-run tool calls saved) of ``config`` on ``records`` (exact budget simulation)."""
    start = PolicyConfig()
    stall = {k: v for k, v in config.stall.model_dump().items() if v != getattr(start.stall, k)}
    stall.update({k: getattr(config, k) for k in TOP_KEYS if getattr(config, k) != getattr(start, k)})
    key = tuple(sorted(stall.items()))
    if key not in probes:
        pc = probe_config(PolicyConfig(), stall)
        probes[key] = ProbeTable(np.arange(len(records)), [probe_run(r, pc) for r in records])
    table = probes[key]
    types = np.asarray([r.task_type for r in records])
    stops = np.zeros(len(records), dtype=np.int64)
    for t in set(types.tolist()):
        mask = types == t
        stops[mask] = table.subset(mask).stops(budget_of(config, t))
    c = runset.counts(np.arange(len(records)), stops)
    return c.false_stop_rate, c.calls_saved


def _best_policy(space: SearchSpace) -> PolicyConfig:
    base = PolicyConfig()
    caps = space.values("hard_cap", base.hard_cap)
    types = {}
    for t in KNOWN_LONGEST:
        cap = known_best_cap(t, caps)
        types[t] = Budget(
            **{**budget_of(base, t).model_dump(), "hard_cap": cap, "base_budget": min(base.base_budget, cap)}
        ).model_dump()
    return PolicyConfig.model_validate({**base.model_dump(), "task_types": types})


def _bound() -> float:
    """The bound of the real-source runs: ``PYGUARD_TUNE_BOUND`` or 0.01; a bad value is said, not guessed."""
    raw = os.environ.get("PYGUARD_TUNE_BOUND", "").strip()
    if not raw:
        return BOUND
    try:
        value = float(raw)
    except ValueError:
        raise SystemExit(f"PYGUARD_TUNE_BOUND={raw!r} is not a number; give a share such as 0.02") from None
    if not 0 <= value < 1:
        raise SystemExit(f"PYGUARD_TUNE_BOUND={raw!r} is outside [0, 1); give a share such as 0.02")
    return value


def _real(data: str, quick: bool) -> dict:
    from suites._real_metrics import last_artifact_change
    from suites._real_sources import load_source, manifests, source_files

    bound = _bound()
    sources = {}
    workers = min(2, os.cpu_count() or 1)
    only = {x for x in os.environ.get("PYGUARD_TUNE_SOURCES", "").split(",") if x}
    by = os.environ.get("PYGUARD_TUNE_BY", "task_type")
    space = SearchSpace.quick() if quick else SearchSpace()
    if os.environ.get("PYGUARD_TUNE_BUDGET") == "fixed":
        start = PolicyConfig()
        space = space.model_copy(update={k: (getattr(start, k),) for k in BUDGET_KEYS})
    for name, folder, spec in manifests(Path(data)):
        if only and name not in only:
            continue
        records = list(load_source(folder, spec, source_files(folder, spec)))
        artifact = spec.get("kind") == "artifact"
        t0 = time.perf_counter()
        try:
            result = tune(
                records,
                TuneOptions(
                    max_false_stop_rate=bound,
                    workers=workers,
                    artifact=artifact,
                    by=by,
                    space=space,
                ),
                last_change=last_artifact_change if artifact else None,
            )
        except InputError as exc:  # bad input (no labels, a type with no success); tune answers at every bound
            sources[name] = {"runs": len(records), "error": str(exc)}
            continue

        def figs(f):
            return (
                None
                if f is None
                else {
                    "false_stops": f"{f.false_stops}/{f.successful_runs}",
                    "false_stop_rate": f.false_stop_rate.model_dump(),
                    "failed_calls_saved": f.failed_tool_calls_saved.model_dump(),
                    "failed_tokens_saved": f.failed_tokens_saved.model_dump(),
                }
            )

        sources[name] = {
            "runs": result.labelled_runs,
            "tasks": result.tasks,
            "artifact": artifact,
            "folds": result.folds,
            "held_out": figs(result.held_out),
            "in_sample": figs(result.in_sample),
            "default": figs(result.default),
            "stall": result.stall,
            "kept_start": result.kept_start,
            "default_meets_bound": result.default_meets_bound,
            "like_for_like": result.default_meets_bound,
            "budgets": {str(t.task_type): t.budget for t in result.types if t.tuned},
            "types": {
                str(t.task_type): {
                    "held_out": figs(t.held_out),
                    "default": figs(t.default),
                    "budget_fitted": t.budget_fitted,
                    "default_meets_bound": t.default_meets_bound,
                }
                for t in result.types
            },
            "not_tuned": {str(t.task_type): t.note for t in result.types if not t.tuned},
            "reflect_only": {str(t.task_type): t.note for t in result.types if t.reflect_only},
            "warnings": result.warnings,
            "verification_mismatches": result.verification_mismatches,
            "seconds": round(time.perf_counter() - t0, 1),
        }
    held = [s["held_out"] for s in sources.values() if s.get("held_out")]
    return {
        "bound": bound,
        "by": by,
        "budget": os.environ.get("PYGUARD_TUNE_BUDGET", "tuned"),
        "sources": sources,
        "mean_held_out_false_stop_rate": float(np.mean([h["false_stop_rate"]["value"] for h in held]))
        if held
        else None,
        "worst_held_out_false_stop_rate": max((h["false_stop_rate"]["value"] for h in held), default=None),
        "mean_held_out_calls_saved": float(np.mean([h["failed_calls_saved"]["value"] for h in held])) if held else None,
        "mean_default_calls_saved": float(
            np.mean([s["default"]["failed_calls_saved"]["value"] for s in sources.values() if "default" in s])
        ),
    }


def run(quick: bool, data: str | None = None) -> dict:
    if data is not None:
        return {"real": _real(data, quick)}
    seeds = 2 if quick else SEEDS
    train, test_n, timed = (150, 300, 300) if quick else (TRAIN, TEST, TIMED)
    space = SearchSpace.quick()
    workers = min(2, os.cpu_count() or 1)
    test = known_best_runs(test_n, seed=10**6)
    runset, probes = RunSet(test), {}
    best = _best_policy(space)
    best_fs, best_saved = _score(test, best, runset, probes)
    rows = []
    for seed in range(seeds):
        t0 = time.perf_counter()
        result = tune(
            known_best_runs(train, seed=seed),
            TuneOptions(max_false_stop_rate=BOUND, seed=seed, space=space, workers=workers, bootstrap=200),
        )
        tuned = PolicyConfig.model_validate(result.policy)
        fs, saved = _score(test, tuned, runset, probes)
        same = all(budget_of(tuned, t).hard_cap == budget_of(best, t).hard_cap for t in KNOWN_LONGEST)
        rows.append(
            {
                "seed": seed,
                "recovered": fs <= BOUND and saved >= best_saved - 0.005,
                "same_caps": same,
                "test_false_stop_rate": fs,
                "test_calls_saved": saved,
                "held_out_false_stop_rate": result.held_out.false_stop_rate.value if result.held_out else None,
                "held_out_calls_saved": result.held_out.failed_tool_calls_saved.value if result.held_out else None,
                "hard_caps": {t: budget_of(tuned, t).hard_cap for t in KNOWN_LONGEST},
                "seconds": round(time.perf_counter() - t0, 2),
            }
        )
    records = tune_runs(timed, seed=0)
    events = sum(len(r.events) for r in records)
    t0 = time.perf_counter()
    result = tune(
        records,
        TuneOptions(max_false_stop_rate=BOUND, workers=workers, space=SearchSpace.quick() if quick else SearchSpace()),
    )
    elapsed = time.perf_counter() - t0
    return {
        "recovery": {
            "seeds": seeds,
            "train_runs": train,
            "test_runs": test_n,
            "bound": BOUND,
            "best_hard_caps": {t: budget_of(best, t).hard_cap for t in KNOWN_LONGEST},
            "best_test_false_stop_rate": best_fs,
            "best_test_calls_saved": best_saved,
            "recovery_rate": sum(r["recovered"] for r in rows) / len(rows),
            "same_caps_rate": sum(r["same_caps"] for r in rows) / len(rows),
            "rows": rows,
        },
        "timing": {
            "runs": timed,
            "iterations": events,
            "workers": workers,
            "space": "quick" if quick else "default",
            "seconds": round(elapsed, 2),
            "engine_passes": result.engine_passes,
            "folds": result.folds,
            "held_out_false_stop_rate": result.held_out.false_stop_rate.value if result.held_out else None,
            "held_out_calls_saved": result.held_out.failed_tool_calls_saved.value if result.held_out else None,
            "default_calls_saved": result.default.failed_tool_calls_saved.value,
            "verification_mismatches": result.verification_mismatches,
        },
    }


def render(result: dict, console) -> None:
    from rich.table import Table

    if "real" in result:
        real = result["real"]
        table = Table(title=f"tune on real sources: held-out (5-fold CV by task) vs default, bound {real['bound']}")
        for col in (
            "source",
            "runs",
            "held-out false stops",
            "held-out calls saved",
            "default false stops",
            "default calls saved",
            "in-sample calls saved",
            "s",
        ):
            table.add_column(col)
        for name, s in real["sources"].items():
            if "error" in s:
                table.add_row(name, str(s["runs"]), s["error"], "", "", "", "", "")
                continue
            h, d, i = s["held_out"], s["default"], s["in_sample"]

            def cell(f, k):
                return (
                    "-"
                    if f is None or f[k]["value"] is None
                    # noqa: E731
                    else (f"{f[k]['value']:.1%} [{f[k]['low']:.1%}, {f[k]['high']:.1%}]")
                )

            table.add_row(
                name,
                str(s["runs"]),
                "-" if h is None else f"{h['false_stops']} {cell(h, 'false_stop_rate')}",
                cell(h, "failed_calls_saved"),
                f"{d['false_stops']} {cell(d, 'false_stop_rate')}"
                + ("" if s.get("default_meets_bound", True) else " (breaks the bound: not like-for-like)"),
                cell(d, "failed_calls_saved"),
                cell(i, "failed_calls_saved"),
                str(s["seconds"]),
            )
        console.print(table)
        return
    rec = result["recovery"]
    table = Table(title=f"tune recovery: {rec['seeds']} seeds, {rec['train_runs']} runs each, bound {rec['bound']}")
    for col in ("seed", "recovered", "same caps", "hard caps", "test false stops", "test calls saved", "s"):
        table.add_column(col)
    for r in rec["rows"]:
        table.add_row(
            str(r["seed"]),
            str(r["recovered"]),
            str(r["same_caps"]),
            str(r["hard_caps"]),
            f"{r['test_false_stop_rate']:.3%}",
            f"{r['test_calls_saved']:.1%}",
            str(r["seconds"]),
        )
    console.print(table)
    console.print(
        f"recovery rate {rec['recovery_rate']:.0%} (best: caps {rec['best_hard_caps']}, calls saved"
        f" {rec['best_test_calls_saved']:.1%}, false stops {rec['best_test_false_stop_rate']:.3%})"
    )
    t = result["timing"]
    console.print(
        f"tune on {t['runs']} runs ({t['iterations']} iterations, {t['space']} space, {t['workers']}"
        f" workers): {t['seconds']} s, {t['engine_passes']} engine passes; held-out calls saved"
        f" {t['held_out_calls_saved']}, default {t['default_calls_saved']}"
    )
