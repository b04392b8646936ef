"""The policy of a test's guard: session file, then the marker's policy (file replaces, dict merges), then the cap."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyguard.base.errors import ConfigError
from pyguard.engine import PolicyConfig
from pyguard.pytest_plugin.guarding import build_policy, deep_merge
from pyguard.pytest_plugin.marker import MarkerArgs, parse_marker_kwargs
from pyguard.pytest_plugin.settings import PluginSettings


def marker(tmp_path: Path, **kwargs) -> MarkerArgs:
    return parse_marker_kwargs(kwargs, where="t.py::test", base=tmp_path)


def test_defaults_without_any_setting(tmp_path):
    assert build_policy(PluginSettings(), marker(tmp_path)) == PolicyConfig()


def test_layers_apply_in_order(tmp_path):
    (tmp_path / "session.toml").write_text("base_budget = 5\nhard_cap = 20\n[stall]\nlow_gain_streak = 5\n")
    session = PluginSettings(policy=tmp_path / "session.toml")
    assert build_policy(session, marker(tmp_path)).base_budget == 5

    merged = build_policy(session, marker(tmp_path, policy={"stall": {"low_gain_threshold": 0.2}}, max_iterations=7))
    assert (merged.base_budget, merged.hard_cap) == (5, 20)  # kept from the session file
    assert (merged.stall.low_gain_streak, merged.stall.low_gain_threshold) == (5, 0.2)  # nested keys merge
    assert merged.caps.max_model_calls == 7

    (tmp_path / "marker.toml").write_text("base_budget = 3\nhard_cap = 6\n")
    replaced = build_policy(session, marker(tmp_path, policy="marker.toml"))
    default_streak = PolicyConfig().stall.low_gain_streak
    assert default_streak != 5
    assert (replaced.base_budget, replaced.hard_cap, replaced.stall.low_gain_streak) == (3, 6, default_streak)


def test_a_policy_config_object_is_accepted_as_marker_policy(tmp_path):
    config = PolicyConfig(base_budget=2, hard_cap=4)
    assert build_policy(PluginSettings(), marker(tmp_path, policy=config)) == config


def test_a_bad_session_policy_file_is_a_config_error_naming_the_key(tmp_path):
    (tmp_path / "bad.toml").write_text("base_budgett = 5\n")
    with pytest.raises(ConfigError, match="base_budgett"):
        build_policy(PluginSettings(policy=tmp_path / "bad.toml"), marker(tmp_path))


def test_deep_merge():
    assert deep_merge({"a": {"b": 1, "c": 2}, "d": 1}, {"a": {"c": 3}, "d": {"x": 1}}) == {
        "a": {"b": 1, "c": 3},
        "d": {"x": 1},
    }
