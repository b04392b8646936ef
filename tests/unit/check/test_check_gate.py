"""The gate's verdicts: thresholds, and the baseline comparison's power and false-alarm rate."""

import numpy as np
import pytest

from pyguard.check import ALL_TASKS, GateConfig, check_runs, evaluate, summarize
from pyguard.check.outcomes import facts_from_footer

ALPHA = 0.05


def _summary(runs):
    return summarize(facts_from_footer(r) for r in runs)


def test_thresholds_pass_and_fail_per_task_type(make_runs):
    runs = make_runs(300, seed=1, types=("lookup",)) + make_runs(300, seed=2, types=("incident",), stalled=0.3)
    report = check_runs(runs, GateConfig(max_stall_rate=0.2, max_expired_rate=0.1, max_p95_iterations=12))
    by = {(c.name, c.task_type): c for c in report.checks}
    assert {t for _, t in by} == {"lookup", "incident", ALL_TASKS}
    assert by[("stall_rate", "lookup")].passed
    failed = by[("stall_rate", "incident")]
    assert not failed.passed and failed.value > 0.2 and failed.threshold == 0.2
    assert "above the threshold 0.2" in failed.message
    assert by[("expired_rate", "incident")].passed
    assert by[("p95_iterations", "lookup")].value <= 12 and by[("p95_iterations", "lookup")].passed
    assert report.exit_code == 1
    assert {(c.name, c.task_type) for c in report.failures} == {("stall_rate", "incident"), ("stall_rate", ALL_TASKS)}


def test_p95_iterations_threshold_fails_when_exceeded(make_runs):
    report = check_runs(make_runs(200, seed=3), GateConfig(max_p95_iterations=5))
    (c,) = report.checks
    assert c.name == "p95_iterations" and c.value > 5 and not c.passed
    assert report.exit_code == 1


def test_no_checks_configured_passes_with_a_note(make_runs):
    report = check_runs(make_runs(20, seed=4))
    assert report.passed and report.checks == []
    assert any("no checks configured" in n for n in report.notes)


def test_a_prompt_change_that_doubles_the_stall_rate_is_caught(make_runs):
    baseline = _summary(make_runs(400, seed=10))
    after = make_runs(400, seed=11, stalled=0.20)
    report = check_runs(after, GateConfig(alpha=ALPHA), baseline)
    stalled = next(c for c in report.checks if c.name == "baseline.stalled_rate")
    assert not stalled.passed
    assert stalled.value > stalled.baseline
    assert stalled.p_adjusted <= ALPHA and stalled.p_value <= stalled.p_adjusted
    assert "significantly worse" in stalled.message and f"{stalled.baseline:.3f}" in stalled.message
    assert report.exit_code == 1


def test_doubling_is_caught_in_most_samples_of_a_few_hundred_runs(make_summary):
    rng = np.random.default_rng(2024)
    caught = [
        not evaluate(make_summary(rng, 300, stalled=0.2), GateConfig(alpha=ALPHA), make_summary(rng, 300)).passed
        for _ in range(150)
    ]
    assert np.mean(caught) >= 0.8


def test_a_second_sample_of_the_same_behaviour_passes(make_runs):
    # One pair of samples; any single pair alarms with probability about alpha (seeds 20/21 happen to draw a
    # 13% token gap, p_adj=0.009). The calibrated claim is the many-seed test below.
    baseline = _summary(make_runs(300, seed=20))
    report = check_runs(make_runs(300, seed=22), GateConfig(alpha=ALPHA), baseline)
    assert report.passed, [c.message for c in report.failures]
    assert {c.name for c in report.checks} >= {
        "baseline.stalled_rate",
        "baseline.expired_rate",
        "baseline.success_rate",
        "baseline.iterations",
        "baseline.tokens",
    }


def test_false_alarm_rate_is_near_alpha_over_many_seeds(make_summary):
    """Same behaviour twice, 400 times: each test alarms at about alpha, the whole gate at most about alpha."""
    rng = np.random.default_rng(7)
    gate_alarms, stall_alarms = [], []
    for _ in range(400):
        report = evaluate(make_summary(rng, 300), GateConfig(alpha=ALPHA), make_summary(rng, 300))
        gate_alarms.append(not report.passed)
        stall_alarms.append(next(c for c in report.checks if c.name == "baseline.stalled_rate").p_value <= ALPHA)
    # binomial sd at 400 draws and p=0.05 is 0.011: these bounds are about 3 sd either side
    assert 0.02 <= np.mean(stall_alarms) <= 0.09
    assert 0.01 <= np.mean(gate_alarms) <= 0.085


def test_improvements_never_fail(make_runs):
    baseline = _summary(make_runs(300, seed=30, stalled=0.25))
    report = check_runs(make_runs(300, seed=31, stalled=0.02), GateConfig(), baseline)
    assert report.passed
    assert next(c for c in report.checks if c.name == "baseline.stalled_rate").p_value > 0.99


def test_more_iterations_and_tokens_are_caught(make_runs):
    baseline = _summary(make_runs(300, seed=40))
    longer = [
        r.model_copy(
            update={
                "end": r.end.model_copy(
                    update={"iterations": r.end.iterations + 2, "total_tokens": r.end.total_tokens + 800}
                )
            }
        )
        for r in make_runs(300, seed=41)
    ]
    report = check_runs(longer, GateConfig(), baseline)
    failed = {c.name for c in report.failures}
    assert failed == {"baseline.iterations", "baseline.tokens"}
    it = next(c for c in report.checks if c.name == "baseline.iterations")
    assert it.test == "mann-whitney" and it.value > it.baseline


def test_task_types_missing_on_either_side_are_noted(make_runs):
    baseline = _summary(make_runs(100, seed=50, types=("lookup", "old")))
    report = check_runs(make_runs(100, seed=51, types=("lookup", "new")), GateConfig(), baseline)
    assert {c.task_type for c in report.checks} == {"lookup", ALL_TASKS}
    assert any("'new'" in n and "no runs in the baseline" in n for n in report.notes)
    assert any("'old'" in n and "no runs now" in n for n in report.notes)


def test_outcomes_absent_from_both_samples_are_untested_and_outside_the_family(make_runs):
    baseline = _summary(make_runs(200, seed=60, expired=0.0))
    report = check_runs(make_runs(200, seed=61, expired=0.0), GateConfig(), baseline)
    expired = next(c for c in report.checks if c.name == "baseline.expired_rate")
    assert expired.passed and expired.p_value is None and "not tested" in expired.message
    assert not any(c.name == "baseline.escalated_rate" for c in report.checks)
    tested = [c for c in report.checks if c.p_value is not None]
    smallest = min(tested, key=lambda c: c.p_value)
    assert smallest.p_adjusted == pytest.approx(min(1.0, len(tested) * smallest.p_value))


@pytest.mark.parametrize(
    "bad",
    [dict(max_stall_rate=1.5), dict(max_expired_rate=-0.1), dict(alpha=0.0), dict(max_p95_iterations=0), dict(bogus=1)],
)
def test_gate_config_refuses_bad_values(bad):
    with pytest.raises(ValueError):
        GateConfig(**bad)
