"""The checks of ``pyguard check``: fixed thresholds, and a statistical comparison with a stored baseline.

Thresholds (``max_stall_rate``, ``max_expired_rate``, ``max_p95_iterations``) are limits the team chose; they are
compared with the observed figure as it is (no test), per task type and overall. The baseline comparison asks
whether the current runs behave *worse* than the baseline's beyond sampling noise, with the tests and the
multiple-testing control described in :mod:`pyguard.check.stats` (one-sided two-proportion z-test / Fisher's
exact for rates, one-sided Mann–Whitney U for iterations and tokens, Holm across all baseline tests of one gate,
family-wise false-alarm rate at most ``alpha``). Improvements never fail.

Groups checked: every task type of the current runs, plus all runs together (``"*"``) when there are several
task types (with one task type the overall group is the same runs and would only be tested twice). Tokens are
compared like with like: per type over the runs that report usage, and for all runs as each run's tokens relative
to its own type's baseline median (see :func:`_pooled_tokens`); every token figure says how many runs it rests on.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from pyguard.check.stats import (
    MWU_EFFICIENCY,
    detectable_rate,
    detectable_ratio,
    holm_adjust,
    proportion_increase_test,
    runs_needed,
    shift_increase_test,
)
from pyguard.check.summary import ALL_TASKS, GroupSummary, RunSetSummary
from pyguard.events import Outcome

__all__ = ["GateConfig", "CheckResult", "GateReport", "BAD_OUTCOMES", "evaluate"]

BAD_OUTCOMES: tuple[Outcome, ...] = (
    Outcome.STALLED,
    Outcome.EXPIRED,
    Outcome.FAILED,
    Outcome.ESCALATED,
    Outcome.GUARD_ERROR,
)
"""Outcomes whose rate must not rise against the baseline (CANCELLED is the caller's doing, not the agent's)."""
_ALWAYS_REPORTED = (Outcome.STALLED, Outcome.EXPIRED)


class GateConfig(BaseModel):
    """What the gate checks. Every threshold is optional; ``alpha`` governs the baseline comparison."""

    model_config = ConfigDict(extra="forbid")

    max_stall_rate: float | None = Field(default=None, ge=0.0, le=1.0)
    """Fail when the share of STALLED runs of a group is above this."""
    max_expired_rate: float | None = Field(default=None, ge=0.0, le=1.0)
    """Fail when the share of EXPIRED runs of a group is above this."""
    max_p95_iterations: int | None = Field(default=None, ge=1)
    """Fail when the 95th percentile of model calls per run of a group is above this."""
    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    """Family-wise false-alarm rate of the baseline comparison (Holm-adjusted)."""


class CheckResult(BaseModel):
    """One check of one group: the figure, what it was held against, and the verdict with its reason."""

    model_config = ConfigDict(extra="forbid")

    name: str
    """``stall_rate``, ``expired_rate``, ``p95_iterations``, or ``baseline.<metric>``."""
    task_type: str
    """The task type, or ``"*"`` for all runs."""
    kind: Literal["threshold", "baseline"]
    value: float | None
    """The current figure (a rate, a percentile, or a mean for the iteration/token comparisons)."""
    threshold: float | None = None
    baseline: float | None = None
    """The baseline's figure, same unit as ``value``."""
    p_value: float | None = None
    """The raw one-sided p-value (baseline checks)."""
    p_adjusted: float | None = None
    """The Holm-adjusted p-value that is compared with ``alpha`` (None when the check could not be tested)."""
    alpha: float | None = None
    test: str | None = None
    """``z-test``, ``fisher`` or ``mann-whitney`` for baseline checks."""
    n: int
    """The runs the figure rests on (for tokens: the runs that report usage)."""
    baseline_n: int | None = None
    passed: bool
    message: str
    detectable: float | None = None
    """The smallest change this baseline test could detect at these sample sizes with 80% power: a rate for the rate
    checks, a factor of the baseline for iterations and tokens (``inf``: none); None for thresholds."""
    underpowered: bool = False
    """True when the observed change is large but below :attr:`detectable`: "not significant" for lack of runs."""


class GateReport(BaseModel):
    """Everything the gate found: the checks, the summary they were computed from, and notes."""

    model_config = ConfigDict(extra="forbid")

    checks: list[CheckResult]
    summary: RunSetSummary
    baseline: RunSetSummary | None = None
    config: GateConfig
    notes: list[str] = Field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failures(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.passed]

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1


def _fmt_p(p: float | None) -> str:
    if p is None:
        return "n/a"
    return f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}"


def _threshold_checks(group: str, g: GroupSummary, cfg: GateConfig) -> list[CheckResult]:
    out: list[CheckResult] = []
    for name, outcome, limit in (
        ("stall_rate", Outcome.STALLED, cfg.max_stall_rate),
        ("expired_rate", Outcome.EXPIRED, cfg.max_expired_rate),
    ):
        if limit is None or g.n == 0:
            continue
        rate = g.rate(outcome)
        if rate is None:  # an empty group (skipped above)
            continue
        ok = rate <= limit
        label = name.replace("_", " ")
        msg = f"{label} {rate:.3f} ({g.count(outcome)}/{g.n}) is " + (
            f"within the threshold {limit:g}" if ok else f"above the threshold {limit:g}"
        )
        out.append(
            CheckResult(
                name=name, task_type=group, kind="threshold", value=rate, threshold=limit, n=g.n, passed=ok, message=msg
            )
        )
    p95 = g.iterations_p95 if g.n else None
    if cfg.max_p95_iterations is not None and p95 is not None:
        ok = p95 <= cfg.max_p95_iterations
        msg = (
            f"p95 iterations {p95:g} (p50 {g.iterations_p50:g}, n={g.n}) is "
            + ("within" if ok else "above")
            + f" the threshold {cfg.max_p95_iterations}"
        )
        out.append(
            CheckResult(
                name="p95_iterations",
                task_type=group,
                kind="threshold",
                value=p95,
                threshold=float(cfg.max_p95_iterations),
                n=g.n,
                passed=ok,
                message=msg,
            )
        )
    return out


def _baseline_tests(group: str, cur: GroupSummary, base: GroupSummary, pooled: list[dict] | None = None) -> list[dict]:
    """Raw tests for one group: dicts with the CheckResult fields except the verdict (p_value None = untested).
    ``pooled``: the token test to use instead of comparing the group's raw token totals (all runs)."""
    tests: list[dict] = []
    for outcome in BAD_OUTCOMES:
        x, xb = cur.count(outcome), base.count(outcome)
        if x == 0 and xb == 0 and outcome not in _ALWAYS_REPORTED:
            continue
        p, method = proportion_increase_test(x, cur.n, xb, base.n)
        tests.append(
            dict(
                name=f"baseline.{outcome.value}_rate",
                value=x / cur.n,
                baseline=xb / base.n,
                p_value=p,
                test=method,
                tested=(x + xb) > 0,
                power=("rate", xb / base.n),
                detail=(
                    f"{outcome.value} rate {x / cur.n:.3f} ({x}/{cur.n}) vs baseline {xb / base.n:.3f} ({xb}/{base.n})"
                ),
            )
        )
    s, sb = cur.count(Outcome.SUCCEEDED), base.count(Outcome.SUCCEEDED)
    p, method = proportion_increase_test(cur.n - s, cur.n, base.n - sb, base.n)
    tests.append(
        dict(
            name="baseline.success_rate",
            value=s / cur.n,
            baseline=sb / base.n,
            p_value=p,
            test=method,
            tested=(cur.n - s + base.n - sb) > 0,
            power=("rate", (base.n - sb) / base.n),
            detail=(f"success rate {s / cur.n:.3f} ({s}/{cur.n}) vs baseline {sb / base.n:.3f} ({sb}/{base.n})"),
        )
    )
    it, itb = cur.iteration_values(), base.iteration_values()
    tests.append(
        dict(
            name="baseline.iterations",
            value=float(it.mean()),
            baseline=float(itb.mean()),
            p_value=shift_increase_test(it, itb),
            test="mann-whitney",
            tested=True,
            power=("ratio", itb),
            detail=(
                f"iterations mean {it.mean():.2f} (p50 {cur.iterations_p50:g}, p95 "
                f"{cur.iterations_p95:g}) vs baseline mean {itb.mean():.2f} (p50 "
                f"{base.iterations_p50:g}, p95 {base.iterations_p95:g})"
            ),
        )
    )
    for t in tests:
        t.update(task_type=group, n=cur.n, baseline_n=base.n)
    if pooled is not None:
        tests.extend(pooled)
    elif cur.tokens and base.tokens:
        tk, tkb = cur.token_values(), base.token_values()
        detail = (
            f"tokens per run mean {tk.mean():,.0f} over the {len(tk)} of {cur.n} runs with "
            f"usage (p95 {cur.tokens_p95:,.0f}) vs baseline mean {tkb.mean():,.0f} over "
            f"{len(tkb)} of {base.n} (p95 {base.tokens_p95:,.0f})"
        )
        tests.append(_tokens_test(group, tk, tkb, detail))
    return tests


def _tokens_test(group: str, tk: np.ndarray, tkb: np.ndarray, detail: str) -> dict:
    """The baseline test of tokens per run: did they shift up (one-sided Mann-Whitney)?"""
    return dict(
        name="baseline.tokens",
        value=float(tk.mean()),
        baseline=float(tkb.mean()),
        p_value=shift_increase_test(tk, tkb),
        test="mann-whitney",
        tested=True,
        power=("ratio", tkb),
        task_type=group,
        n=len(tk),
        baseline_n=len(tkb),
        detail=detail,
    )


def _pooled_tokens(summary: RunSetSummary, baseline: RunSetSummary) -> list[dict]:
    """The all-runs token comparison, like with like: each run's tokens divided by the baseline median of its
    own task type, pooled over the types that have usage in both. A raw pooled mean would compare different
    mixes of runs (the runs that report usage can come from other types in the two samples) and could call a
    change worse while every type's tokens fell."""
    cur_rel: list[np.ndarray] = []
    base_rel: list[np.ndarray] = []
    used: list[str] = []
    for key in summary.task_types:
        cur, base = summary.groups[key], baseline.groups.get(key)
        if base is None or not cur.tokens or not base.tokens:
            continue
        median = float(np.median(base.token_values()))
        if median <= 0:
            continue
        cur_rel.append(cur.token_values() / median)
        base_rel.append(base.token_values() / median)
        used.append(key)
    if not used:
        return []
    tk, tkb = np.concatenate(cur_rel), np.concatenate(base_rel)
    detail = (
        f"tokens per run relative to their task type's baseline median (1.0 = that median), over the "
        f"{len(used)} type(s) with usage in both ({', '.join(used)}): mean {tk.mean():.3f} over {len(tk)} "
        f"runs vs baseline {tkb.mean():.3f} over {len(tkb)} runs"
    )
    return [_tokens_test(ALL_TASKS, tk, tkb, detail)]


LARGE_RATE_RISE = 0.1
"""A rate risen by this much (absolute) is a large change (the underpowered warning)."""
LARGE_RATIO = 1.5
"""Iterations or tokens grown by this factor are a large change (the underpowered warning)."""


def _power(t: dict, alpha: float, not_significant: bool) -> tuple[float | None, bool, str]:
    """What test ``t`` could detect at its sample sizes (80% power at ``alpha``), whether a large observed change
    went unseen for lack of runs, and the sentence that says so."""
    kind, base = t.get("power", (None, None))
    n, nb = t["n"], t["baseline_n"]
    rate_like = t["name"] != "baseline.success_rate"
    if kind == "rate":
        p_base = float(base)
        reach = detectable_rate(p_base, n, nb, alpha)
        observed = (t["value"] - t["baseline"]) if rate_like else (t["baseline"] - t["value"])
        what = "rate" if rate_like else "failure rate"
        says = f"at {n} vs {nb} runs it detects a {what} rising from {p_base:.3f} to {reach:.3f} or more (80% power)"
        large = observed >= LARGE_RATE_RISE and p_base + observed < reach
        if large and not_significant:
            h = 2 * math.asin(math.sqrt(min(1.0, p_base + observed))) - 2 * math.asin(math.sqrt(p_base))
            says += (
                f"; the observed rise of {observed:.3f} is large but not significant for lack of runs: about"
                f" {runs_needed(h, alpha)} runs per sample would show it"
            )
        return reach, large and not_significant, says
    if kind == "ratio":
        values = np.asarray(base, dtype=float)
        reach = detectable_ratio(values, n, alpha)
        ratio = t["value"] / t["baseline"] if t["baseline"] else math.inf
        shown = "no shift (the baseline values do not vary)" if math.isinf(reach) else f"a {reach:.2f}x shift or more"
        says = f"at {n} vs {nb} runs it detects {shown} (80% power)"
        large = ratio >= LARGE_RATIO and ratio < reach
        if large and not_significant:
            logs = np.log(values[values > 0])
            spread = float(np.std(logs, ddof=1)) if logs.size > 1 else 0.0
            need = runs_needed(math.log(ratio) / spread * math.sqrt(MWU_EFFICIENCY), alpha) if spread else None
            says += f"; the observed {ratio:.2f}x is large but not significant for lack of runs" + (
                f": about {need} runs per sample would show it" if need else ""
            )
        return (None if math.isinf(reach) else reach), large and not_significant, says
    return None, False, ""


def evaluate(summary: RunSetSummary, config: GateConfig, baseline: RunSetSummary | None = None) -> GateReport:
    """Run every configured check of ``summary`` (thresholds, and the baseline comparison when given)."""
    groups = [g for g in summary.task_types if summary.groups[g].n]
    if len(groups) > 1:
        groups.append(ALL_TASKS)
    checks: list[CheckResult] = []
    notes: list[str] = []
    for group in groups:
        checks.extend(_threshold_checks(group, summary.groups[group], config))
    if baseline is not None:
        raw: list[dict] = []
        for group in groups:
            base = baseline.groups.get(group)
            if base is None or base.n == 0:
                notes.append(f"task type {group!r} has no runs in the baseline: not compared")
                continue
            pooled = _pooled_tokens(summary, baseline) if group == ALL_TASKS else None
            raw.extend(_baseline_tests(group, summary.groups[group], base, pooled))
        for group in baseline.task_types:
            if baseline.groups[group].n and group not in summary.groups:
                notes.append(f"task type {group!r} of the baseline has no runs now: not compared")
        family = [i for i, t in enumerate(raw) if t["tested"]]
        adjusted = dict(zip(family, holm_adjust([raw[i]["p_value"] for i in family]), strict=False))
        first_step = config.alpha / max(1, len(family))  # what Holm's first step asks of a test
        for i, t in enumerate(raw):
            p_adj = adjusted.get(i)
            ok = p_adj is None or p_adj > config.alpha
            if p_adj is None:
                verdict = "not tested (no such runs in either sample)"
            elif ok:
                verdict = (
                    f"p={_fmt_p(t['p_value'])} (Holm-adjusted {_fmt_p(p_adj)}, {t['test']}): "
                    f"no significant worsening at alpha {config.alpha:g}"
                )
            else:
                verdict = (
                    f"p={_fmt_p(t['p_value'])} (Holm-adjusted {_fmt_p(p_adj)}, {t['test']}) <= alpha "
                    f"{config.alpha:g}: significantly worse than the baseline"
                )
            detectable, underpowered, says = _power(t, first_step, ok and p_adj is not None)
            if underpowered:
                notes.append(f"warning: {t['name']} ({t['task_type']}): {says}")
            checks.append(
                CheckResult(
                    name=t["name"],
                    task_type=t["task_type"],
                    kind="baseline",
                    detectable=detectable,
                    underpowered=underpowered,
                    value=t["value"],
                    baseline=t["baseline"],
                    p_value=t["p_value"] if p_adj is not None else None,
                    p_adjusted=p_adj,
                    alpha=config.alpha,
                    test=t["test"] if p_adj is not None else None,
                    n=t["n"],
                    baseline_n=t["baseline_n"],
                    passed=ok,
                    message=f"{t['detail']}: {verdict}" + (f"; {says}" if says else ""),
                )
            )
    if not checks:
        notes.append("no checks configured: pass thresholds (--max-stall-rate, ...) or --baseline")
    return GateReport(checks=checks, summary=summary, baseline=baseline, config=config, notes=notes)
