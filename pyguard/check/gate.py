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

from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from pyguard.base.events import Outcome
from pyguard.check.power import LARGE_RATE_RISE, LARGE_RATIO, power_of
from pyguard.check.stats import holm_adjust, proportion_increase_test, shift_increase_test
from pyguard.check.summary import ALL_TASKS, RunSetSummary, TaskTypeFigures

__all__: list[str] = []

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
    underpowered: Literal["fail", "warn"] = "fail"
    """A large observed worsening the runs are too few to confirm (:mod:`pyguard.check.power`): ``"fail"`` refuses
    to pass it, ``"warn"`` passes it with a warning."""


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
    """True when the observed change is large but below :attr:`detectable`: "not significant" for lack of runs (the
    check fails unless :attr:`GateConfig.underpowered` is ``"warn"``)."""
    detects_large: bool | None = None
    """Whether this baseline test can detect a change of the size that matters (a rate rising by
    :data:`~pyguard.check.power.LARGE_RATE_RISE`, iterations or tokens growing :data:`~pyguard.check.power.LARGE_RATIO`
    times) at these sample sizes; False: its pass is no evidence of no worsening. None for thresholds."""


class GateReport(BaseModel):
    """Everything the gate found: the checks, the summary they were computed from, and notes."""

    model_config = ConfigDict(extra="forbid")

    checks: list[CheckResult]
    summary: RunSetSummary
    baseline: RunSetSummary | None = None
    config: GateConfig
    notes: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    """What every form of the report shows loudly: checks refused or passed for lack of runs."""

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


def _threshold_checks(group: str, g: TaskTypeFigures, cfg: GateConfig) -> list[CheckResult]:
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


def _baseline_tests(
    group: str, cur: TaskTypeFigures, base: TaskTypeFigures, pooled: list[dict] | None = None
) -> list[dict]:
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


def evaluate(summary: RunSetSummary, config: GateConfig, baseline: RunSetSummary | None = None) -> GateReport:
    """Run every configured check of ``summary`` (thresholds, and the baseline comparison when given)."""
    groups = [g for g in summary.task_types if summary.groups[g].n]
    if len(groups) > 1:
        groups.append(ALL_TASKS)
    checks: list[CheckResult] = []
    notes: list[str] = []
    warnings: list[str] = []
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
        checks.extend(_baseline_check(t, adjusted.get(i), config, first_step) for i, t in enumerate(raw))
        warnings.extend(_power_warnings(checks, config))
    if not checks:
        notes.append("no checks configured: pass thresholds (--max-stall-rate, ...) or --baseline")
    return GateReport(checks=checks, summary=summary, baseline=baseline, config=config, notes=notes, warnings=warnings)


def _baseline_check(t: dict, p_adj: float | None, config: GateConfig, first_step: float) -> CheckResult:
    """The verdict on raw test ``t`` with Holm-adjusted p-value ``p_adj`` (None: untested), and what it can show."""
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
    power = power_of(t, first_step, ok and p_adj is not None)
    refused = power.underpowered and config.underpowered == "fail"
    if refused:
        verdict += "; refused: too few runs to tell this worsening from noise (--underpowered warn to pass it)"
    return CheckResult(
        name=t["name"],
        task_type=t["task_type"],
        kind="baseline",
        detectable=power.detectable,
        underpowered=power.underpowered,
        detects_large=power.detects_large,
        value=t["value"],
        baseline=t["baseline"],
        p_value=t["p_value"] if p_adj is not None else None,
        p_adjusted=p_adj,
        alpha=config.alpha,
        test=t["test"] if p_adj is not None else None,
        n=t["n"],
        baseline_n=t["baseline_n"],
        passed=ok and not refused,
        message=f"{t['detail']}: {verdict}" + (f"; {power.says}" if power.says else ""),
    )


def _power_warnings(checks: list[CheckResult], config: GateConfig) -> list[str]:
    """The loud part of the report: each large worsening the runs could not confirm, and the checks that cannot
    detect a change of the size that matters (their passes are no evidence)."""
    out = []
    for c in checks:
        if c.underpowered:
            action = "FAILED (refused)" if config.underpowered == "fail" else "passed only for lack of runs"
            out.append(f"{c.name} [{c.task_type}] {action}: {c.message}")
    blind = [c for c in checks if c.kind == "baseline" and c.detects_large is False and not c.underpowered]
    if blind:
        names = ", ".join(f"{c.name.removeprefix('baseline.')} [{c.task_type}]" for c in blind)
        out.append(
            f"{len(blind)} of {sum(c.kind == 'baseline' for c in checks)} baseline checks cannot detect a change of "
            f"the size that matters (a rate rising by {LARGE_RATE_RISE:g}, iterations or tokens {LARGE_RATIO:g}x) at "
            f"these run counts, so their passes are no evidence of no worsening: {names}"
        )
    return out
