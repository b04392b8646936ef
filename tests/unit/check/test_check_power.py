"""``pyguard check`` says what its sample can show (issue 23): per baseline test the smallest change it could detect
at this n, and a warning when a large observed change is "not significant" for lack of runs."""

from __future__ import annotations

import math

import numpy as np

from pyguard.base.events import Outcome
from pyguard.check import GateConfig, evaluate, summarize
from pyguard.check.stats import detectable_rate, detectable_ratio, runs_needed
from pyguard.check.summary import RunFacts


def facts(iterations, tokens, expired: int = 0, task_type: str = "lookup") -> list[RunFacts]:
    out = []
    for i, (it, tk) in enumerate(zip(iterations, tokens, strict=True)):
        outcome = Outcome.EXPIRED if i < expired else Outcome.SUCCEEDED
        out.append(RunFacts(run_id=f"{task_type}-{i}", task_type=task_type, outcome=outcome, iterations=it, tokens=tk))
    return out


def test_a_large_regression_at_ten_runs_is_refused_or_passes_with_a_warning_that_says_why():
    rng = np.random.default_rng(5)
    base_it = rng.integers(3, 7, 10)
    base_tk = (base_it * 900 * rng.uniform(0.7, 1.4, 10)).astype(int)
    # the case: 2.9x iterations, 4.7x tokens, 2 of 10 runs now expiring
    cur_it = np.rint(base_it * 2.9 * rng.uniform(0.3, 1.7, 10)).astype(int)
    cur_tk = (base_tk * 4.7 * rng.uniform(0.2, 1.8, 10)).astype(int)
    baseline = summarize(facts(base_it, base_tk))
    current = summarize(facts(cur_it, cur_tk, expired=2))
    report = evaluate(current, GateConfig(alpha=0.05, underpowered="warn"), baseline)
    by_name = {c.name: c for c in report.checks}
    expired = by_name["baseline.expired_rate"]
    assert expired.passed and expired.detectable is not None and expired.detectable > 0.2
    assert "at 10 vs 10 runs it detects" in expired.message
    warned = [c for c in report.checks if c.underpowered]
    assert warned, [c.message for c in report.checks]
    assert all(c.passed for c in warned)  # "warn": passed, said loudly in the warnings
    assert any("passed only for lack of runs" in w and "for lack of runs" in w for w in report.warnings)
    # the default refuses to pass a large worsening it cannot confirm (issue 32)
    refused = evaluate(current, GateConfig(alpha=0.05), baseline)
    assert not refused.passed and {c.name for c in refused.failures} >= {c.name for c in warned}
    assert all("refused: too few runs" in c.message for c in refused.failures if c.underpowered)


def test_a_sample_large_enough_finds_what_ten_runs_could_not():
    rng = np.random.default_rng(9)
    base_it = rng.integers(3, 7, 400)
    base_tk = base_it * 1000
    cur_it = np.rint(base_it * 2.9).astype(int)
    report = evaluate(
        summarize(facts(cur_it, cur_it * 1000)), GateConfig(alpha=0.05), summarize(facts(base_it, base_tk))
    )
    iterations = next(c for c in report.checks if c.name == "baseline.iterations")
    assert not iterations.passed and not iterations.underpowered


def test_the_detectable_change_shrinks_as_runs_grow():
    assert detectable_rate(0.05, 1000, 1000, 0.05) < detectable_rate(0.05, 100, 100, 0.05) < 1.0
    assert detectable_rate(0.0, 1, 1, 0.001) == 1.0  # nothing is detectable from one run each
    spread = np.exp(np.random.default_rng(1).normal(0, 0.5, 200))
    assert 1.0 < detectable_ratio(spread, 400, 0.05) < detectable_ratio(spread[:20], 20, 0.05)
    assert math.isinf(detectable_ratio(np.full(10, 4.0), 10, 0.05))  # no spread to measure a shift by
    assert runs_needed(0.5, 0.05) > runs_needed(1.0, 0.05) > 0
