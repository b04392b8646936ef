"""The held-out and in-sample figures of ``pyguard tune`` (Wilson intervals for the false-stop rate, a bootstrap over
tasks for the savings) and the folds of its cross-validation, grouped by task."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from pyguard.base._extras import require
from pyguard.tune.models import Figures, Interval
from pyguard.tune.simulate import Counts, RunSet

__all__: list[str] = []


def task_folds(groups: Sequence[str], strata: Sequence[Any], k: int, seed: int) -> np.ndarray:
    """Fold of each run: all runs of one group (task) in the same fold, groups dealt in turn to the folds within
    each stratum (task type), in an order shuffled by ``seed``."""
    order = sorted(set(groups))
    random.Random(seed).shuffle(order)
    stratum_of: dict[str, Any] = {}
    for g, s in zip(groups, strata, strict=False):
        stratum_of.setdefault(g, s)
    fold_of: dict[str, int] = {}
    dealt: Counter = Counter()
    for g in sorted(order, key=lambda g: str(stratum_of[g])):  # stable: shuffled order within each stratum
        s = stratum_of[g]
        fold_of[g] = dealt[s] % k
        dealt[s] += 1
    return np.asarray([fold_of[g] for g in groups], dtype=np.int64)


def scipy_stats() -> Any:
    """``scipy.stats`` (the ``stats`` extra), for the Wilson intervals of the held-out figures."""
    return require("scipy.stats", extra="stats", feature="pyguard tune's intervals")


def _wilson(k: int, n: int) -> Interval:
    if n == 0:
        return Interval(value=None, low=None, high=None)
    ci = scipy_stats().binomtest(k, n).proportion_ci(0.95, method="wilson")
    return Interval(value=k / n, low=float(ci.low), high=float(ci.high))


def _bootstrap(num: np.ndarray, den: np.ndarray, group: np.ndarray, rng: np.random.Generator, b: int) -> Interval:
    """Ratio of sums with a percentile interval from resampling groups (tasks) with replacement."""
    total = den.sum()
    if total <= 0:
        return Interval(value=None, low=None, high=None)
    codes, g = np.unique(group, return_inverse=True)
    gn = np.bincount(g, weights=num, minlength=len(codes))
    gd = np.bincount(g, weights=den, minlength=len(codes))
    ratios = []
    for start in range(0, b, 100):
        idx = rng.integers(0, len(codes), size=(min(100, b - start), len(codes)))
        n_, d_ = gn[idx].sum(axis=1), gd[idx].sum(axis=1)
        ratios.append(np.divide(n_, d_, out=np.full_like(n_, np.nan), where=d_ > 0))
    r = np.concatenate(ratios)
    r = r[~np.isnan(r)]  # a resample with no failed run has no ratio: left out, not counted as 0
    return Interval(
        value=float(num.sum() / total), low=float(np.percentile(r, 2.5)), high=float(np.percentile(r, 97.5))
    )


def figures(
    runset: RunSet,
    runs: np.ndarray,
    stops: np.ndarray,
    groups: np.ndarray,
    artifact: bool,
    rng: np.random.Generator,
    b: int,
) -> Figures:
    c: Counts = runset.counts(runs, stops, artifact)
    n = runset.n_iter[runs]
    fail = (runset.success[runs] == 0).astype(float)
    early = ((stops > 0) & (stops < n)).astype(float)
    at = runset.offset[runs] + np.where(stops > 0, stops, n)
    calls = runset.total_calls[runs].astype(float)
    saved = (calls - runset.calls_cum[at]) * fail
    tok_ok = fail * runset.has_tokens[runs]
    tokens = runset.total_tokens[runs].astype(float) * tok_ok
    tsaved = (runset.total_tokens[runs] - runset.tokens_cum[at]) * tok_ok
    g = groups[runs]
    return Figures(
        successful_runs=c.successes,
        false_stops=c.false_stops,
        false_stop_rate=_wilson(c.false_stops, c.successes),
        failed_runs=c.failed,
        failed_tool_calls_saved=_bootstrap(saved, calls * fail, g, rng, b),
        failed_tokens_saved=_bootstrap(tsaved, tokens, g, rng, b),
        caught_failed_share=_bootstrap(early * fail, fail, g, rng, b),
    )
