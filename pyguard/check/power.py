"""What one baseline test of ``pyguard check`` can show at its sample sizes: the smallest change it detects with 80%
power, whether it can detect a change of the size that matters at all, and whether a large observed worsening went
unseen for lack of runs (:func:`power_of`; the tests and the power figures are :mod:`pyguard.check.stats`').

"The size that matters" is :data:`LARGE_RATE_RISE` for a rate and :data:`LARGE_RATIO` for iterations and tokens.
A check that cannot detect it passes with a warning (``detects_large`` false): "no significant worsening" there is
no evidence of no worsening. A check that *observed* a change that large and could not confirm it
(``underpowered``) is refused by the gate unless ``GateConfig.underpowered`` is ``"warn"``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from pyguard.check.stats import MWU_EFFICIENCY, detectable_rate, detectable_ratio, runs_needed, smallest_shift_p

__all__: list[str] = []

LARGE_RATE_RISE = 0.1
"""A rate risen by this much (absolute) is a change of the size that matters."""
LARGE_RATIO = 1.5
"""Iterations or tokens grown by this factor are a change of the size that matters."""


class Power(NamedTuple):
    """What a baseline test can show."""

    detectable: float | None
    """The smallest change detected with 80% power (a rate, or a factor); None when no change could be."""
    detects_large: bool
    """The test detects a change of the size that matters (:data:`LARGE_RATE_RISE`, :data:`LARGE_RATIO`)."""
    underpowered: bool
    """A change that large was observed and is not significant, for lack of runs."""
    says: str
    """The sentence that says all of it."""


def power_of(t: dict, alpha: float, not_significant: bool) -> Power:
    """What test ``t`` (a raw test of :mod:`pyguard.check.gate`) could detect at its sample sizes (80% power at
    ``alpha``), and whether a large observed change went unseen for lack of runs."""
    kind, base = t.get("power", (None, None))
    if kind == "rate":
        return _rate_power(t, float(base), alpha, not_significant)
    if kind == "ratio":
        return _ratio_power(t, np.asarray(base, dtype=float), alpha, not_significant)
    return Power(None, True, False, "")


def _fewest_runs_that_can_reject(alpha: float) -> int:
    """The fewest runs per sample at which the rank test can be significant at ``alpha`` at all."""
    k = 1
    while smallest_shift_p(k, k) > alpha:
        k += 1
    return k


def _rate_power(t: dict, p_base: float, alpha: float, not_significant: bool) -> Power:
    n, nb = t["n"], t["baseline_n"]
    rate_like = t["name"] != "baseline.success_rate"
    reach = detectable_rate(p_base, n, nb, alpha)
    observed = (t["value"] - t["baseline"]) if rate_like else (t["baseline"] - t["value"])
    what = "rate" if rate_like else "failure rate"
    if reach >= 1.0:
        says = f"at {n} vs {nb} runs it cannot detect any rise of the {what} from {p_base:.3f}"
    else:
        says = f"at {n} vs {nb} runs it detects a {what} rising from {p_base:.3f} to {reach:.3f} or more (80% power)"
    detects_large = reach < 1.0 and reach - p_base <= LARGE_RATE_RISE + 1e-12
    large = observed >= LARGE_RATE_RISE - 1e-12 and (reach >= 1.0 or p_base + observed < reach)
    underpowered = large and not_significant
    if underpowered:
        h = 2 * math.asin(math.sqrt(min(1.0, p_base + observed))) - 2 * math.asin(math.sqrt(p_base))
        says += (
            f"; the observed rise of {observed:.3f} is large but not significant for lack of runs: about"
            f" {max(runs_needed(h, alpha), n + 1)} runs per sample would show it"
        )
    elif not detects_large:
        says += f"; it cannot show a rise of {LARGE_RATE_RISE:g}, the size that matters"
    return Power(None if reach >= 1.0 else reach, detects_large, underpowered, says)


def _ratio_power(t: dict, values: np.ndarray, alpha: float, not_significant: bool) -> Power:
    n, nb = t["n"], t["baseline_n"]
    reach = detectable_ratio(values, n, alpha)
    ratio = t["value"] / t["baseline"] if t["baseline"] else math.inf
    if math.isinf(reach):
        varies = np.ptp(values) > 0 if values.size else False
        why = (
            "too few runs for any arrangement of them to be significant"
            if varies
            else "the baseline values do not vary"
        )
        says = f"at {n} vs {nb} runs it cannot detect any shift ({why})"
    else:
        says = f"at {n} vs {nb} runs it detects a {reach:.2f}x shift or more (80% power)"
    detects_large = reach <= LARGE_RATIO
    underpowered = ratio >= LARGE_RATIO and ratio < reach and not_significant
    if underpowered:
        logs = np.log(values[values > 0])
        spread = float(np.std(logs, ddof=1)) if logs.size > 1 else 0.0
        need = runs_needed(math.log(ratio) / spread * math.sqrt(MWU_EFFICIENCY), alpha) if spread else None
        says += f"; the observed {ratio:.2f}x is large but not significant for lack of runs" + (
            f": about {max(need, _fewest_runs_that_can_reject(alpha), n + 1)} runs per sample would show it"
            if need
            else ""
        )
    elif not detects_large:
        says += f"; it cannot show a {LARGE_RATIO:g}x shift, the size that matters"
    return Power(None if math.isinf(reach) else reach, detects_large, underpowered, says)
