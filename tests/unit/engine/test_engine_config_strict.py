"""Config values are checked strictly when the config is built or loaded, never later at run time."""

from __future__ import annotations

import pytest

from pyguard.base.errors import ConfigError
from pyguard.base.limits import JAVA_INT_MAX
from pyguard.engine import PolicyConfig


@pytest.mark.parametrize(
    "data, key",
    [
        ({"hard_cap": "8"}, "hard_cap"),
        ({"hard_cap": True}, "hard_cap"),
        ({"base_budget": 2.0}, "base_budget"),
        ({"hard_cap": 3_000_000_000}, "hard_cap"),
        ({"task_types": {"lookup": {"hard_cap": JAVA_INT_MAX + 1}}}, "task_types.lookup.hard_cap"),
        ({"caps": {"max_cost": float("nan")}}, "caps.max_cost"),
        ({"caps": {"max_wall_s": float("inf")}}, "caps.max_wall_s"),
        ({"caps": {"max_tool_calls_per_tool": {"lookup": 2**40}}}, "caps.max_tool_calls_per_tool"),
        ({"stall_outcome": "yes"}, "stall_outcome"),
    ],
)
def test_a_bad_type_or_out_of_range_value_is_refused_at_load(data, key):
    with pytest.raises(ConfigError) as err:
        PolicyConfig.model_validate(data)
    assert key in str(err.value)


def test_toml_with_a_huge_hard_cap_fails_at_load(tmp_path):
    path = tmp_path / "pyguard.toml"
    path.write_text("hard_cap = 3000000000\n")
    with pytest.raises(ConfigError, match="hard_cap.*at most 2147483647"):
        PolicyConfig.from_toml(path)


def test_the_largest_java_int_loads_and_round_trips():
    c = PolicyConfig(hard_cap=JAVA_INT_MAX, caps={"max_cost": 2})
    assert PolicyConfig.model_validate(c.model_dump()) == c
    assert PolicyConfig.model_validate(c.model_dump(mode="json")) == c
