import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from pyguard.check import holm_adjust, proportion_increase_test, shift_increase_test


def test_z_test_matches_the_pooled_formula():
    p, method = proportion_increase_test(60, 300, 30, 300)
    pooled = 90 / 600
    z = (0.2 - 0.1) / math.sqrt(pooled * (1 - pooled) * (2 / 300))
    assert method == "z-test"
    assert p == pytest.approx(stats.norm.sf(z))
    assert p < 0.001


def test_the_test_is_one_sided():
    worse, _ = proportion_increase_test(60, 300, 30, 300)
    better, _ = proportion_increase_test(30, 300, 60, 300)
    assert worse < 0.01 and better > 0.99


def test_small_expected_counts_use_fishers_exact_test():
    p, method = proportion_increase_test(3, 40, 0, 40)
    assert method == "fisher"
    assert p == pytest.approx(stats.fisher_exact([[3, 37], [0, 40]], alternative="greater").pvalue)


def test_no_occurrence_in_either_sample_cannot_reject():
    assert proportion_increase_test(0, 100, 0, 100) == (1.0, "z-test")
    assert proportion_increase_test(100, 100, 100, 100)[0] == 1.0


@pytest.mark.parametrize("args", [(5, 0, 1, 10), (11, 10, 1, 10), (-1, 10, 1, 10), (1, 10, 12, 10)])
def test_impossible_counts_are_refused(args):
    with pytest.raises(ValueError, match="0 <= x <= n"):
        proportion_increase_test(*args)


def test_mann_whitney_detects_a_shift_up_only():
    rng = np.random.default_rng(0)
    base = rng.poisson(4, 300)
    assert shift_increase_test(base + 2, base) < 1e-6
    assert shift_increase_test(base, base + 2) > 0.99


def test_mann_whitney_on_constant_equal_samples_is_one():
    assert shift_increase_test([3, 3, 3], [3, 3]) == 1.0


def test_mann_whitney_needs_both_samples():
    with pytest.raises(ValueError, match="both samples"):
        shift_increase_test([], [1, 2])


def test_holm_on_a_worked_example():
    # sorted p: 0.01*4=0.04, 0.02*3=0.06, 0.03*2=0.06 (monotone), 0.5*1=0.5
    assert holm_adjust([0.03, 0.01, 0.5, 0.02]) == pytest.approx([0.06, 0.04, 0.5, 0.06])
    assert holm_adjust([]) == []


@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=30))
def test_holm_adjusted_values_are_valid_and_keep_the_order(ps):
    adj = holm_adjust(ps)
    assert all(a >= p - 1e-12 and a <= 1.0 for a, p in zip(adj, ps, strict=False))
    order = np.argsort(ps, kind="stable")
    sorted_adj = np.asarray(adj)[order]
    assert np.all(np.diff(sorted_adj) >= -1e-12)
    assert min(adj) == pytest.approx(min(1.0, len(ps) * min(ps)))
