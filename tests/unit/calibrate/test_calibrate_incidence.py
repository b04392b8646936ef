"""The Aalen–Johansen estimator: exact on small examples, 1 - Kaplan–Meier with one cause, invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from pyguard.calibrate import RunStatus, aalen_johansen, event_counts

S, F, C = RunStatus.SUCCESS, RunStatus.FAILURE, RunStatus.CENSORED


def test_without_censoring_it_is_the_empirical_fraction() -> None:
    n = np.array([1, 2, 2, 3, 5, 5, 5, 4])
    status = np.array([S, S, F, S, S, F, S, F])
    inc = aalen_johansen(event_counts(n, status, 5))
    expected = [np.mean((n <= k) & (status == S)) for k in range(1, 6)]
    np.testing.assert_allclose(inc.success, expected)
    np.testing.assert_allclose(inc.failure[-1], np.mean(status == F))
    assert inc.survival[-1] == pytest.approx(0.0, abs=1e-12)


def test_competing_risks_by_hand() -> None:
    # 4 runs: success at 1, censored at 1, failure at 2, success at 3.
    inc = aalen_johansen(event_counts(np.array([1, 1, 2, 3]), np.array([S, C, F, S]), 3))
    # n=1: 4 at risk, 1 success -> c=1/4, S=3/4. n=2: 2 at risk, 1 failure -> S=3/8. n=3: 1 at risk, success.
    np.testing.assert_allclose(inc.at_risk, [4, 2, 1])
    np.testing.assert_allclose(inc.success, [0.25, 0.25, 0.25 + 3 / 8])
    np.testing.assert_allclose(inc.failure, [0.0, 3 / 8, 3 / 8])
    np.testing.assert_allclose(inc.reach, [1.0, 0.75, 3 / 8])


def test_censored_runs_are_not_failures() -> None:
    # Half the runs are cut at 2 before finishing; the others all succeed at 3: c(3) must be 1, not 1/2.
    n = np.array([2, 2, 3, 3])
    inc = aalen_johansen(event_counts(n, np.array([C, C, S, S]), 3))
    assert inc.success[-1] == pytest.approx(1.0)


def test_one_cause_matches_scipy_kaplan_meier() -> None:
    rng = np.random.default_rng(3)
    times = rng.integers(1, 15, 300)
    observed = rng.random(300) < 0.7
    inc = aalen_johansen(event_counts(times, np.where(observed, S, C), 14))
    km = stats.ecdf(stats.CensoredData(uncensored=times[observed], right=times[~observed]))
    np.testing.assert_allclose(inc.success, 1.0 - km.sf.evaluate(np.arange(1, 15)), atol=1e-12)


def test_empty_tail_gives_flat_curves_not_nan() -> None:
    counts = event_counts(np.array([1, 2]), np.array([S, C]), 6)
    inc = aalen_johansen(counts)
    assert np.all(np.isfinite(inc.success)) and np.all(np.isfinite(inc.survival))
    assert inc.success[-1] == pytest.approx(0.5)


runs = st.lists(st.tuples(st.integers(1, 12), st.sampled_from([S, F, C])), min_size=1, max_size=60)


@settings(max_examples=80, deadline=None)
@given(runs)
def test_invariants(data: list[tuple[int, int]]) -> None:
    n = np.array([d[0] for d in data])
    status = np.array([d[1] for d in data])
    inc = aalen_johansen(event_counts(n, status, 12))
    assert np.all(np.diff(inc.success) >= -1e-12) and np.all(np.diff(inc.failure) >= -1e-12)
    np.testing.assert_allclose(inc.success + inc.failure + inc.survival, 1.0, atol=1e-12)
    assert np.all((inc.success >= -1e-12) & (inc.success <= 1 + 1e-12))


@settings(max_examples=30, deadline=None)
@given(st.lists(runs, min_size=1, max_size=5))
def test_batched_equals_one_by_one(batches: list[list[tuple[int, int]]]) -> None:
    counts = np.stack([event_counts(np.array([d[0] for d in b]), np.array([d[1] for d in b]), 12) for b in batches])
    batched = aalen_johansen(counts)
    for i, c in enumerate(counts):
        np.testing.assert_allclose(batched.success[i], aalen_johansen(c).success)
        np.testing.assert_allclose(batched.reach[i], aalen_johansen(c).reach)
