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
  larger), with the normal approximation, tie correction and continuity correction. It makes no assumption about
  the (skewed, heavily tied, long-tailed) distribution of iteration counts and token totals, needs only the
  samples (the baseline stores the iteration histogram and the token totals), and is cheap.
- **Many checks, one gate**: a gate runs several tests per task type; at ``alpha`` each, some test of a run set
  with unchanged behaviour would fail far more often than ``alpha``. The p-values of all baseline tests of one
  gate are therefore adjusted with **Holm's step-down method**, which keeps the probability that the gate fails
  on unchanged behaviour (the family-wise error rate) at most ``alpha`` under any dependence between the tests,
  and is uniformly more powerful than Bonferroni. A test that cannot reject (the outcome never occurred in
  either sample) is left out of the family.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from pyguard._extras import require

__all__ = [
    "MIN_EXPECTED_COUNT",
    "proportion_increase_test",
    "shift_increase_test",
    "holm_adjust",
]

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


def shift_increase_test(current: Sequence[float] | np.ndarray, baseline: Sequence[float] | np.ndarray) -> float:
    """One-sided Mann–Whitney U p-value for H1 "current values are stochastically larger than the baseline's".

    Raises ValueError when either sample is empty. Two samples holding one and the same value give 1.0.
    """
    cur = np.asarray(current, dtype=float)
    base = np.asarray(baseline, dtype=float)
    if cur.size == 0 or base.size == 0:
        raise ValueError(f"both samples need values, got {cur.size} current and {base.size} baseline")
    if np.ptp(np.concatenate([cur, base])) == 0:
        return 1.0
    result = _stats().mannwhitneyu(cur, base, alternative="greater", method="asymptotic", use_continuity=True)
    return float(result.pvalue)


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
