"""The search space: candidates around the start, lenient-only engine settings, policies built from a point."""

import pytest

from pyguard.engine import PolicyConfig
from pyguard.tune.space import Budget, SearchSpace, budget_of, build_policy, stall_candidates


def test_candidates_change_one_setting_and_never_fewer_reflections():
    base = PolicyConfig(max_reflections=2, stall={"low_gain_streak": 4})
    cands = stall_candidates(base, SearchSpace())
    assert cands[0] == {} and all(len(c) == 1 for c in cands[1:])
    assert len({tuple(c.items()) for c in cands}) == len(cands)
    assert {c["max_reflections"] for c in cands if "max_reflections" in c} == {4}
    assert {"stop_on_fruitless_retry": False} in cands
    assert {"low_gain_streak": 4} not in cands and {"low_gain_streak": 2} in cands


def test_the_nothing_new_thresholds_are_screened_and_an_invalid_candidate_left_out():
    cands = stall_candidates(PolicyConfig(), SearchSpace())
    assert {"nothing_new_window": 20} in cands and {"nothing_new_max_new": 4} in cands
    assert {"nothing_new_window": 35} not in cands  # the start itself is the {} candidate
    tight = PolicyConfig(stall={"nothing_new_window": 3, "nothing_new_max_new": 0})
    values = {c["nothing_new_max_new"] for c in stall_candidates(tight, SearchSpace()) if "nothing_new_max_new" in c}
    assert values == {1, 2}  # 4 is not below the window of 3: not a valid [stall] table
    config = build_policy(tight, {"nothing_new_max_new": 2}, {})
    assert (config.stall.nothing_new_window, config.stall.nothing_new_max_new) == (3, 2)


def test_build_policy_puts_budgets_by_type_and_engine_keys_on_top():
    b = Budget(base_budget=3, hard_cap=9, extension=1, earn_threshold=0.3, earn_per_iteration=2)
    config = build_policy(PolicyConfig(), {"low_gain_streak": 2, "max_reflections": 2}, {"lookup": b, None: b})
    assert config.stall.low_gain_streak == 2 and config.max_reflections == 2
    assert budget_of(config, "lookup") == b and budget_of(config, None) == b and config.hard_cap == 9
    assert PolicyConfig.model_validate(config.model_dump()) == config


def test_an_empty_space_is_refused():
    with pytest.raises(ValueError, match="hard_cap"):
        SearchSpace(hard_cap=())
