"""w(n) and E[cost](N): token curve, extrapolation, the cost formula, tie-breaking, token axis."""

from __future__ import annotations

import numpy as np
import pytest

from pyguard.base.errors import InputError
from pyguard.calibrate import aalen_johansen
from pyguard.calibrate.cost import argmin_first, expected_cost, iteration_token_curve, token_unit_cost
from pyguard.calibrate.tokens import run_token_totals, token_axis, token_expected_cost


def test_token_curve_observed_where_supported_and_linear_beyond() -> None:
    # 10 runs reach calls 1..4, only 1 run reaches 5 and 6: those come from the fitted line 1000 + 500 n.
    iters = np.concatenate([np.repeat(np.arange(1, 5), 10), [5, 6]])
    values = 1000 + 500 * iters.astype(float)
    values[-2:] = [99_999, 1]  # noise the fit must ignore
    curve = iteration_token_curve(iters, values, horizon=8, min_support=5)
    np.testing.assert_allclose(curve.tokens[:4], 1000 + 500 * np.arange(1, 5))
    np.testing.assert_allclose(curve.tokens[4:], 1000 + 500 * np.arange(5, 9))
    assert curve.support.tolist() == [10, 10, 10, 10, 1, 1, 0, 0]
    assert curve.slope == pytest.approx(500) and curve.intercept == pytest.approx(1000)


def test_token_curve_never_decreases_into_nonsense() -> None:
    iters = np.repeat(np.arange(1, 4), 10)
    values = np.repeat([3000.0, 2000.0, 1000.0], 10)  # shrinking context: slope clamps to 0
    curve = iteration_token_curve(iters, values, horizon=10)
    assert np.all(curve.tokens[3:] >= 1000.0) and np.all(np.isfinite(curve.tokens))


def test_no_tokens_is_an_input_error() -> None:
    with pytest.raises(InputError, match="token"):
        iteration_token_curve(np.array([], np.int64), np.array([]), horizon=3)


def test_unit_cost() -> None:
    assert token_unit_cost(None) == 1.0
    assert token_unit_cost(2.0) == pytest.approx(0.002)


def test_expected_cost_formula() -> None:
    reach = np.array([1.0, 0.5, 0.25])
    c = np.array([0.5, 0.75, 0.8])
    step = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(expected_cost(reach, c, step, 10.0), [1 + 5, 2 + 2.5, 2.75 + 2])


def test_argmin_first_prefers_the_smaller_cap_on_ties() -> None:
    assert argmin_first(np.array([3.0, 1.0, 1.0, 2.0])) == 1
    np.testing.assert_array_equal(argmin_first(np.array([[2.0, 1.0], [0.0, 0.0]])), [1, 0])


def test_token_totals_fill_missing_calls_from_the_curve() -> None:
    per_call = np.array([10.0, 20.0, 30.0])
    # run 0: 3 calls, call 2 missing; run 1: 2 calls, nothing recorded
    totals = run_token_totals(2, np.array([3, 2]), np.array([0, 0]), np.array([1, 3]), np.array([11.0, 33.0]), per_call)
    np.testing.assert_allclose(totals, [11 + 20 + 33, 30.0])


def test_token_axis_cost_is_exact_without_censoring() -> None:
    totals = np.array([100.0, 200.0, 200.0, 400.0])
    status = np.array([1, 1, 2, 1])
    axis = token_axis(totals, status)
    inc = aalen_johansen(axis.counts)
    cost = token_expected_cost(axis, inc, unit_cost=1.0, failure_cost=1000.0)
    for k, budget in enumerate(axis.grid):
        spend = np.minimum(totals, budget).mean()
        miss = 1.0 - np.mean((totals <= budget) & (status == 1))
        assert cost[k] == pytest.approx(spend + miss * 1000.0)


def test_token_axis_quantile_grid_keeps_the_maximum() -> None:
    totals = np.arange(1, 5001, dtype=float)
    axis = token_axis(totals, np.ones(5000, np.int64), max_grid=50)
    assert len(axis.grid) <= 50 and axis.grid[-1] == 5000.0
    assert axis.counts.sum() == 5000
