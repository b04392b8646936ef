"""Leave-one-source-out (LOSO): choose the default policy on all sources but one, measure it on the one left out.

The candidates are whole policies (:func:`candidates`): the trade-off points of ``benchmarks/real_data/policies``
(cautious to eager; ``2-default`` is the shipped default) and, unless ``quick``, every one-parameter change of the
default's stall and reflection settings that ``pyguard tune`` screens (:func:`pyguard.tune.space.stall_candidates`
over the default :class:`~pyguard.tune.space.SearchSpace`). Each candidate is replayed once over every source and
scored by ``_real_metrics.score``; choosing is then arithmetic on those figures, so a fold costs no further replay.

**The fitting procedure** (:func:`choose`), on a set of sources (the fold):

1. A candidate is *admissible* when its false-stop rate is at most ``bound`` (2%) on every source of the fold that
   has successful runs (the issue's per-source target; the worst in-fold source decides).
2. Among admissible candidates, the one with the highest mean failed-run tool calls saved over the fold's sources
   (each source weighs the same; sources with no failed run are left out of the mean); ties go to the lower mean
   false-stop rate, then to the earlier candidate (policy files first, in their cautious-to-eager order).
3. When no candidate is admissible: the one whose worst in-fold false-stop rate is lowest (ties: the most saving).
   The result says so (``admissible: false``).

**LOSO** (:func:`loso`): for each source s, choose on all sources but s and report the choice's figures on s.
**In-sample**: choose once on all sources and report the choice's figures on each. The gap between the two is how
much a default chosen on known agents overstates what an unseen agent gets.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["BOUND", "FIGURES", "candidates", "choose", "loso", "summary"]

BOUND = 0.02
"""The per-source false-stop bound a default must meet on every source it is chosen on (issue 22's target)."""
FIGURES = ("false_stop_rate", "failed_calls_saved", "capped_stopped")
INTERVALS = {
    "false_stop_rate": "false_stop_interval",
    "failed_calls_saved": "failed_calls_saved_interval",
    "capped_stopped": "capped_stopped_interval",
}
"""Each figure's 95% Wilson interval in the ``_real_metrics.score`` figures."""

Table = Mapping[str, Mapping[str, Mapping[str, Any]]]
"""``table[candidate][source]``: the ``_real_metrics.score`` figures of one candidate on one source."""


def candidates(policies: Path, space: bool, overlay: dict[str, Any] | None = None) -> list[tuple[str, dict]]:
    """``(name, PolicyConfig dump)`` of every candidate, without duplicates (the first name of a config is kept):
    the policy files of ``policies`` in name order, then (``space``) tune's one-parameter stall candidates; each
    with ``overlay``'s top-level settings over it (``real_replay --config X --loso``: X's switches on every one)."""
    from pyguard.engine import PolicyConfig
    from pyguard.tune.space import SearchSpace, apply_engine, stall_candidates

    found: list[tuple[str, dict]] = []
    for path in sorted(policies.glob("*.toml")):
        found.append((path.stem, PolicyConfig.from_toml(path).model_dump()))
    if space:
        base = PolicyConfig()
        for overrides in stall_candidates(base, SearchSpace()):
            name = "tune:" + ",".join(f"{k}={v}" for k, v in sorted(overrides.items())) if overrides else "tune:start"
            found.append((name, PolicyConfig.model_validate(apply_engine(base.model_dump(), overrides)).model_dump()))
    if overlay:
        found = [(name, PolicyConfig.model_validate({**dump, **overlay}).model_dump()) for name, dump in found]
    unique: list[tuple[str, dict]] = []
    for name, dump in found:
        if all(dump != d for _, d in unique):
            unique.append((name, dump))
    return unique


def _mean(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return statistics.fmean(kept) if kept else None


def _worst(table: Table, name: str, sources: Sequence[str]) -> float:
    rates = [table[name][s]["false_stop_rate"] for s in sources]
    return max((r for r in rates if r is not None), default=0.0)


def choose(table: Table, sources: Sequence[str], bound: float = BOUND) -> dict:
    """The candidate the fitting procedure picks on ``sources`` (see the module docstring), with its in-fold
    figures: ``{"candidate", "admissible", "fold_worst_false_stop_rate", "fold_mean_false_stop_rate",
    "fold_mean_failed_calls_saved"}``. ``table``'s candidates are tried in their order (dicts keep it)."""
    if not sources:
        raise ValueError("choose needs at least one source to choose on")
    rows = []
    for order, name in enumerate(table):
        worst = _worst(table, name, sources)
        mean_fs = _mean([table[name][s]["false_stop_rate"] for s in sources]) or 0.0
        saved = _mean([table[name][s]["failed_calls_saved"] for s in sources]) or 0.0
        rows.append((name, order, worst, mean_fs, saved))
    admissible = [r for r in rows if r[2] <= bound + 1e-12]
    if admissible:
        best = min(admissible, key=lambda r: (-r[4], r[3], r[1]))
    else:
        best = min(rows, key=lambda r: (r[2], -r[4], r[1]))
    name, _, worst, mean_fs, saved = best
    return {
        "candidate": name,
        "admissible": bool(admissible),
        "fold_worst_false_stop_rate": worst,
        "fold_mean_false_stop_rate": mean_fs,
        "fold_mean_failed_calls_saved": saved,
    }


def _on(table: Table, name: str, source: str) -> dict:
    fig = table[name][source]
    intervals = {INTERVALS[k]: fig.get(INTERVALS[k]) for k in FIGURES}
    return {"candidate": name, **{k: fig[k] for k in FIGURES}, **intervals, "false_stops": fig["false_stops"]}


def summary(per_source: Mapping[str, Mapping[str, Any]]) -> dict:
    """Mean over sources of each figure (each source weighs the same; None figures left out) and the worst source
    for false stops."""
    mean = {k: _mean([f[k] for f in per_source.values()]) for k in FIGURES}
    rated = [(f["false_stop_rate"], s) for s, f in per_source.items() if f["false_stop_rate"] is not None]
    rate, worst = max(rated) if rated else (None, None)
    return {"mean": mean, "worst_false_stops": {"source": worst, "false_stop_rate": rate}}


def loso(table: Table, sources: Sequence[str], default: str, bound: float = BOUND) -> dict:
    """Per source: the shipped default's figures, the in-sample choice's (chosen on all sources) and the LOSO
    choice's (chosen without it); then the mean and worst of each column."""
    in_sample = choose(table, sources, bound)
    rows: dict[str, dict] = {}
    for s in sources:
        fold = [o for o in sources if o != s]
        chosen = choose(table, fold, bound) if fold else in_sample
        rows[s] = {
            "default": _on(table, default, s),
            "in_sample": _on(table, in_sample["candidate"], s),
            "loso": {**_on(table, chosen["candidate"], s), "fold": chosen},
        }
    return {
        "bound": bound,
        "procedure": (
            f"on the fold's sources: the candidate saving the most failed-run tool calls (mean over sources) among"
            f" those whose false-stop rate is <= {bound:g} on every source; if none is, the lowest worst source"
        ),
        "candidates": list(table),
        "in_sample_choice": in_sample,
        "sources": rows,
        "summary": {
            column: summary({s: r[column] for s, r in rows.items()}) for column in ("default", "in_sample", "loso")
        },
        "tradeoff": {
            name: {s: {k: table[name][s][k] for k in FIGURES} for s in sources} | {"mean": summary(table[name])["mean"]}
            for name in table
        },
    }
