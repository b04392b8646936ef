"""The statistical tests behind the baseline comparison of ``pyguard check``.

Why these tests, and not a fixed margin: a margin ("fail if the stall rate rose by more than 2 points") is too
strict at a few dozen runs (noise alone moves a rate by several points) and too lax at thousands. A test asks
the right question — could a second sample of the *same* behaviour look this much worse? — at every sample
size, with a false-alarm rate that is stated (``alpha``) rather than guessed.

- **Rates** (stalled, expired, failed, ... and the success rate): a **one-sided two-proportion z-test** with the
  pooled variance, H1 "the current rate is higher than the baseline's" (for the success rate: lower). It is the
  textbook test for this question, exact enough when every expected cell count is at least 5, and not as
  conservative as Fisher's exact test (which, being discrete, alarms well below its nominal alpha). When an
  expected cell is under 5 (a rare outcome, a small task type) the normal approximation is poor and we use
  **Fisher's exact test** (one-sided) instead.
- **Iterations and tokens per run**: a **one-sided Mann–Whitney U test** (H1: current values are stochastically
  larger), with the normal approximation, tie correction and continuity correction from 10 runs per sample; below
  that the normal approximation is wrong (it called one run against ten significant at a 2x shift, where no
  arrangement of eleven values can reach p < 1/11) and the p-value is a **permutation p-value** of the rank sum
  (exact, ties included; :func:`rank_sum_permutation_p`). It makes no assumption about
  the (skewed, heavily tied, long-tailed) distribution of iteration counts and token totals, needs only the
  samples (the baseline stores the iteration histogram and the token totals), and is cheap.
- **Many checks, one gate**: a gate runs several tests per task type; at ``alpha`` each, some test of a run set
  with unchanged behaviour would fail far more often than ``alpha``. The p-values of all baseline tests of one
  gate are therefore adjusted with **Holm's step-down method**, which keeps the probability that the gate fails
  on unchanged behaviour (the family-wise error rate) at most ``alpha`` under any dependence between the tests,
  and is uniformly more powerful than Bonferroni. A test that cannot reject (the outcome never occurred in
  either sample) is left out of the family.
- **What a sample can show**: "no significant worsening" at 10 runs is no evidence of no change. Per test the gate
  states the smallest change it could detect at this n with 80% power (:func:`detectable_rate` for rates,
  :func:`detectable_ratio` for iterations and tokens, at ``alpha`` divided by the family size: Holm's first step).
  At small n both are exact where it matters: the rate from Fisher's test and the binomial, the ratio "none" when
  no arrangement of the runs could be significant (:func:`smallest_shift_p`). The gate (:mod:`pyguard.check.gate`)
  refuses to pass a large observed worsening it cannot tell from noise for lack of runs, and warns on every check
  that cannot detect a change of the size that matters.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from pyguard.base._extras import require

__all__: list[str] = []

MIN_EXPECTED_COUNT = 5
"""Below this expected cell count the z-test gives way to Fisher's exact test."""


def _stats() -> Any:
    """``scipy.stats``, imported on first use: the tests need the ``stats`` extra, a check without a baseline not."""
    return require("scipy.stats", extra="stats", feature="pyguard check's baseline tests")


def proportion_increase_test(x_cur: int, n_cur: int, x_base: int, n_base: int) -> tuple[float, str]:
    """One-sided test of H1 "the current proportion ``x_cur/n_cur`` exceeds the baseline's ``x_base/n_base``".

    Returns ``(p_value, method)`` where method is ``"z-test"`` or ``"fisher"``. Raises ValueError for counts
    that are not ``0 <= x <= n`` with ``n >= 1``.
    """
    for x, n, which in ((x_cur, n_cur, "current"), (x_base, n_base, "baseline")):
        if n < 1 or not 0 <= x <= n:
            raise ValueError(f"{which} counts must satisfy 0 <= x <= n and n >= 1, got x={x}, n={n}")
    pooled = (x_cur + x_base) / (n_cur + n_base)
    if pooled in (0.0, 1.0):
        return 1.0, "z-test"
    expected = min(n * p for n in (n_cur, n_base) for p in (pooled, 1.0 - pooled))
    if expected < MIN_EXPECTED_COUNT:
        table = [[x_cur, n_cur - x_cur], [x_base, n_base - x_base]]
        return float(_stats().fisher_exact(table, alternative="greater").pvalue), "fisher"
    se = math.sqrt(pooled * (1.0 - pooled) * (1.0 / n_cur + 1.0 / n_base))
    z = (x_cur / n_cur - x_base / n_base) / se
    return float(_stats().norm.sf(z)), "z-test"


EXACT_BELOW = 10
"""Below this many runs in either sample, Mann-Whitney's p-value is a permutation p-value (exact when the
rearrangements number at most :data:`PERMUTATIONS`), not the normal approximation, which is wrong at such n."""
PERMUTATIONS = 20_000
"""Rearrangements enumerated (or, when there are more, drawn with a fixed seed) by the permutation test."""


def shift_increase_test(current: Sequence[float] | np.ndarray, baseline: Sequence[float] | np.ndarray) -> float:
    """One-sided Mann–Whitney U p-value for H1 "current values are stochastically larger than the baseline's".

    With fewer than :data:`EXACT_BELOW` runs in either sample the p-value is a permutation p-value of the rank sum
    (:func:`rank_sum_permutation_p`: exact, ties included); else the normal approximation with continuity correction.
    Raises ValueError when either sample is empty. Two samples holding one and the same value give 1.0.
    """
    cur = np.asarray(current, dtype=float)
    base = np.asarray(baseline, dtype=float)
    if cur.size == 0 or base.size == 0:
        raise ValueError(f"both samples need values, got {cur.size} current and {base.size} baseline")
    if np.ptp(np.concatenate([cur, base])) == 0:
        return 1.0
    if min(cur.size, base.size) < EXACT_BELOW:
        return rank_sum_permutation_p(cur, base)
    result = _stats().mannwhitneyu(cur, base, alternative="greater", method="asymptotic", use_continuity=True)
    return float(result.pvalue)


def rank_sum_permutation_p(current: np.ndarray, baseline: np.ndarray) -> float:
    """The one-sided permutation p-value of the current sample's rank sum (mid-ranks for ties): the share of the
    ways to split the pooled values into samples of these sizes whose current rank sum is at least the observed
    one. Every split is enumerated when there are at most :data:`PERMUTATIONS`; else that many are drawn (fixed
    seed: the same runs give the same p-value) and the p-value is ``(hits + 1) / (draws + 1)``."""
    pooled = np.concatenate([current, baseline])
    ranks = _stats().rankdata(pooled)
    k, total = current.size, pooled.size
    observed = ranks[:k].sum()
    tolerance = 1e-9 * max(1.0, observed)
    if math.comb(total, k) <= PERMUTATIONS:  # an exact int: no overflow
        idx = np.array(list(itertools.combinations(range(total), k)), dtype=np.intp)
        sums = ranks[idx].sum(axis=1)
        return float(np.mean(sums >= observed - tolerance))
    rng = np.random.default_rng(0)
    draws = np.argsort(rng.random((PERMUTATIONS, total)), axis=1)[:, :k]
    hits = int(np.sum(ranks[draws].sum(axis=1) >= observed - tolerance))
    return (hits + 1) / (PERMUTATIONS + 1)


def smallest_shift_p(n_cur: int, n_base: int) -> float:
    """The smallest p-value the one-sided rank test can give with ``n_cur`` against ``n_base`` runs (every current
    value above every baseline value, no ties): ``1 / C(n_cur + n_base, n_cur)``. When it is above the alpha the
    test is held to, no shift, however large, can be detected."""
    if n_cur < 1 or n_base < 1:
        return 1.0
    log_ways = math.lgamma(n_cur + n_base + 1) - math.lgamma(n_cur + 1) - math.lgamma(n_base + 1)
    return math.exp(-log_ways)  # 0.0 (underflow) once the ways are astronomically many


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values (reject where adjusted <= alpha keeps the family-wise error <= alpha)."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted_sorted = np.maximum.accumulate(scaled)
    adjusted = np.empty(m)
    adjusted[order] = adjusted_sorted
    return adjusted.tolist()


POWER = 0.8
"""The power at which :func:`detectable_rate` and :func:`detectable_ratio` state the smallest detectable change."""

MWU_EFFICIENCY = 3.0 / math.pi
"""The asymptotic relative efficiency of the Mann-Whitney U test to the t-test under normality (about 0.955)."""


def _z_sum(alpha: float, power: float) -> float:
    stats = _stats()
    return float(stats.norm.isf(alpha) + stats.norm.ppf(power))


EXACT_POWER_BELOW = 100
"""Below this many runs in either sample, :func:`detectable_rate` is computed exactly (Fisher's test against the
baseline's count, binomial current counts), not by the normal approximation."""


def detectable_rate(p_base: float, n_cur: int, n_base: int, alpha: float, power: float = POWER) -> float:
    """The smallest current rate a one-sided test at ``alpha`` tells apart from the baseline rate ``p_base`` with
    probability ``power``, with ``n_cur`` and ``n_base`` runs. 1.0 when no rate up to 1 could be told apart.

    With fewer than :data:`EXACT_POWER_BELOW` runs in either sample it is exact: the smallest current count ``k``
    at which Fisher's one-sided test against the baseline's count rejects, then the rate at which ``k`` or more of
    ``n_cur`` runs occur with probability ``power`` (a binomial tail: a beta quantile). Above that, Cohen's arcsine
    effect size h (the normal approximation)."""
    if n_cur < 1 or n_base < 1:
        return 1.0
    p_base = min(max(p_base, 0.0), 1.0)
    if min(n_cur, n_base) < EXACT_POWER_BELOW:
        return _exact_detectable_rate(p_base, n_cur, n_base, alpha, power)
    h = _z_sum(alpha, power) * math.sqrt(1.0 / n_cur + 1.0 / n_base)
    angle = math.asin(math.sqrt(p_base)) + h / 2.0
    return 1.0 if angle >= math.pi / 2 else math.sin(angle) ** 2


def _exact_detectable_rate(p_base: float, n_cur: int, n_base: int, alpha: float, power: float) -> float:
    stats = _stats()
    x_base = round(p_base * n_base)
    x = np.arange(n_cur + 1)
    # Fisher's one-sided p-value of [[x, n_cur - x], [x_base, n_base - x_base]]: P(X >= x), X hypergeometric
    p = stats.hypergeom.sf(x - 1, n_cur + n_base, x + x_base, n_cur)
    rejecting = np.flatnonzero(p <= alpha)
    if rejecting.size == 0:
        return 1.0
    k = int(rejecting[0])
    if k == 0:
        return 0.0
    # P(Binomial(n_cur, r) >= k) = I_r(k, n_cur - k + 1): at least ``power`` from the rate below on
    return float(stats.beta.ppf(power, k, n_cur - k + 1))


def detectable_ratio(baseline: Sequence[float] | np.ndarray, n_cur: int, alpha: float, power: float = POWER) -> float:
    """The smallest factor by which per-run values (iterations, tokens) must grow for the one-sided Mann-Whitney test
    at ``alpha`` to see it with probability ``power``, with ``n_cur`` current runs against the ``baseline`` sample:
    a shift of the log values by Cohen's d times their spread in the baseline (the test's efficiency 3/pi taken into
    account). ``inf`` when the baseline has no spread to measure it by, or too few runs: in particular when even every
    current value above every baseline value would not be significant (:func:`smallest_shift_p` above ``alpha``)."""
    base = np.asarray(baseline, dtype=float)
    base = base[base > 0]
    if n_cur < 1 or base.size < 2 or smallest_shift_p(n_cur, base.size) > alpha:
        return math.inf
    spread = float(np.std(np.log(base), ddof=1))
    if spread == 0.0:
        return math.inf
    d = _z_sum(alpha, power) * math.sqrt(1.0 / n_cur + 1.0 / base.size) / math.sqrt(MWU_EFFICIENCY)
    return math.exp(d * spread)


def runs_needed(effect: float, alpha: float, power: float = POWER) -> int:
    """Runs per sample (current and baseline alike) at which an effect of ``effect`` standard units (Cohen's h or d)
    is seen with probability ``power`` by a one-sided test at ``alpha``."""
    if effect <= 0:
        return 0
    return math.ceil(2.0 * (_z_sum(alpha, power) / effect) ** 2)
