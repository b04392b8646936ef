"""The ``nothing_new`` thresholds are ``[stall]`` settings (``nothing_new_window``, ``nothing_new_max_new``): they
change when the rule reflects and stops, round-trip through TOML and refuse a bad value by name."""

from __future__ import annotations

import pytest
from engine_support import drive, walk_rooms

from pyguard.base.decisions import Action
from pyguard.base.errors import ConfigError
from pyguard.base.events import IterationEvent
from pyguard.engine import Policy, PolicyConfig, StallConfig


def _nothing_new(events: list[IterationEvent], config: PolicyConfig) -> list[tuple[int, str]]:
    """(call, action) of every ``nothing_new`` decision, driven as the guard does (each call's results judged before
    the next call), up to the stop."""
    _, decisions = drive(events, config)
    return [(d.iteration, d.action.value) for d in decisions if d.rule == "nothing_new"]


def _stall(**stall: int) -> PolicyConfig:
    return PolicyConfig.model_validate({"stall": stall})


def test_a_shorter_window_reflects_and_stops_earlier():
    events = walk_rooms(80)
    default = _nothing_new(events, PolicyConfig())
    short = _nothing_new(events, _stall(nothing_new_window=12))
    assert [a for _, a in default] == [a for _, a in short] == ["reflect", "stop"], (default, short)
    assert default[0][0] > StallConfig().nothing_new_window  # the default needs 35 calls with almost nothing new
    assert short[0][0] < 20 and short[1][0] == short[0][0] + 1, short  # 12 are enough
    assert short[1][0] < default[0][0]


def test_more_new_results_allowed_in_the_window_catches_a_run_that_finds_a_little():
    events = walk_rooms(80, new_every=11)  # a new room every 11 calls: 3 or 4 in any window of 35
    assert _nothing_new(events, PolicyConfig()) == []
    caught = _nothing_new(events, _stall(nothing_new_max_new=4))
    assert [a for _, a in caught] == ["reflect", "stop"], caught
    assert _nothing_new(events, _stall(nothing_new_window=60, nothing_new_max_new=4)) != caught


def test_a_task_type_takes_its_own_window_and_the_toml_round_trips(tmp_path):
    path = tmp_path / "pyguard.toml"
    path.write_text(
        "[stall]\nnothing_new_window = 20\nnothing_new_max_new = 1\n[task_types.game.stall]\nnothing_new_window = 50\n"
    )
    config = PolicyConfig.from_toml(path)
    assert (config.stall.nothing_new_window, config.stall.nothing_new_max_new) == (20, 1)
    game = config.stall_for("game")
    assert (game.nothing_new_window, game.nothing_new_max_new) == (50, 2)  # a whole table: unset keys default
    again = tmp_path / "again.toml"
    again.write_text(config.to_toml())
    assert PolicyConfig.from_toml(again) == config
    assert PolicyConfig.model_validate(config.model_dump()) == config
    assert (StallConfig().nothing_new_window, StallConfig().nothing_new_max_new) == (35, 2)


@pytest.mark.parametrize(
    ("stall", "said"),
    [
        ({"nothing_new_window": 1}, r"'stall\.nothing_new_window' = 1: .*greater than or equal to 2"),
        ({"nothing_new_max_new": -1}, r"'stall\.nothing_new_max_new' = -1: .*greater than or equal to 0"),
        (
            {"nothing_new_window": 10, "nothing_new_max_new": 10},
            "nothing_new_max_new 10 is not below "
            "nothing_new_window 10: every full window would be a stall; lower nothing_new_max_new or raise",
        ),
        ({"nothing_new_window": "35"}, r"'stall\.nothing_new_window' = '35'"),
    ],
)
def test_a_bad_value_is_refused_by_name_with_what_to_do(stall, said):
    with pytest.raises(ConfigError, match=said) as err:
        PolicyConfig.model_validate({"stall": stall})
    assert "Fix the value(s) and retry" in str(err.value)


def test_the_rule_reads_the_turn_s_stall_config():
    # a task type's own [stall] table sets the window for its runs only
    config = PolicyConfig.model_validate({"task_types": {"game": {"stall": {"nothing_new_window": 12}}}})
    events = walk_rooms(30)
    session = Policy(config).new_run(events[0].run_id, task_type="game")
    stopped = None
    for k, e in enumerate(events):
        d = session.observe(e)
        if not d.stops and k + 1 < len(events) and not e.is_final:
            d = session.observe_results(e.index, events[k + 1].observations)
        if d.stops:
            stopped = d
            break
    assert stopped is not None and stopped.rule == "nothing_new" and stopped.action is Action.STOP
    assert _nothing_new(events, config) == []  # a run of no task type: the policy's [stall], 35 calls, never full
