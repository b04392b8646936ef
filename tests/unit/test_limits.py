"""One model of a run's limits (issue 13): each default has one home (pyguard.base.limits, the engine's config, Java's
GuardConfig), the fail-safe margin is named and counts the run's own cap on model calls, and ``max_iterations`` means
one thing (the pytest marker's cap on model calls) while the agent loop's cap is ``max_loop_iterations`` (its old name:
tests/unit/test_agent_options.py)."""

from __future__ import annotations

import pytest

from pyguard.base.agent_options import AgentOptions
from pyguard.base.errors import ConfigError
from pyguard.base.limits import (
    DEFAULT_LOOP_ITERATIONS,
    FAIL_SAFE_MARGIN,
    JAVA_INT_MAX,
    NESTED_LOOP_ITERATIONS,
    fail_safe_cap,
    guard_ceiling,
)
from pyguard.engine import CapsConfig, PolicyConfig
from pyguard.engine.config import TaskTypeConfig
from pyguard.live.guard import Guard


def test_the_fail_safe_sits_the_margin_above_the_most_the_policy_allows_in_a_turn():
    default = PolicyConfig()
    assert guard_ceiling(default) == default.hard_cap == 150
    assert fail_safe_cap(default) == 150 + FAIL_SAFE_MARGIN
    wide = PolicyConfig(task_types={"long": TaskTypeConfig(hard_cap=400, base_budget=8)})
    assert fail_safe_cap(wide) == 400 + FAIL_SAFE_MARGIN  # the largest task type's hard cap
    assert Guard(wide).fail_safe_calls == fail_safe_cap(wide)


def test_the_runs_own_cap_on_model_calls_counts_in_the_fail_safe():
    capped = PolicyConfig(caps=CapsConfig(max_model_calls=3))
    assert guard_ceiling(capped) == 3
    assert Guard(capped).fail_safe_calls == 3 + FAIL_SAFE_MARGIN  # not 155: a broken guard gets a few calls, no more
    loose = PolicyConfig(caps=CapsConfig(max_model_calls=1000))
    assert guard_ceiling(loose) == 150  # a run cap above the hard cap changes nothing


def test_the_fail_safe_fits_a_java_int():
    huge = PolicyConfig(hard_cap=JAVA_INT_MAX, base_budget=8)
    assert fail_safe_cap(huge) == JAVA_INT_MAX
    assert Guard(fail_safe_calls=7).fail_safe_calls == 7  # an explicit value wins


def test_the_java_fail_safe_has_its_own_name_and_the_old_one_warns():
    with pytest.warns(DeprecationWarning, match=r"Guard\(max_model_calls=...\) is now fail_safe_calls"):
        guard = Guard(max_model_calls=7)
    assert guard.fail_safe_calls == 7
    with pytest.warns(DeprecationWarning, match="Guard.max_model_calls is now Guard.fail_safe_calls"):
        assert guard.max_model_calls == 7
    with pytest.raises(ConfigError, match="not both"):
        Guard(max_model_calls=7, fail_safe_calls=8)


def test_max_iterations_names_no_agent_loop():
    """max_iterations means the pytest marker's cap only: no entry point takes it as a parameter of its own (the agent
    loops' cap is max_loop_iterations, whose defaults live in pyguard.base.limits)."""
    import inspect

    from pyguard.jvm.nested import build_system
    from pyguard.live.nested import run_nested, run_nested_unguarded

    for fn in (run_nested, run_nested_unguarded, build_system, Guard.__init__):
        assert "max_iterations" not in inspect.signature(fn).parameters, fn.__name__
    assert AgentOptions().loop_iterations(NESTED_LOOP_ITERATIONS) == NESTED_LOOP_ITERATIONS == 5
    assert AgentOptions().loop_iterations() == DEFAULT_LOOP_ITERATIONS
