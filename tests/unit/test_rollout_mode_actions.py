"""What a guarded run tells Java to do about each engine decision in each rollout mode (no JVM needed): the decision
recorded is always the engine's."""

from __future__ import annotations

import pytest

from pyguard.base.decisions import Action, Decision
from pyguard.base.errors import ConfigError
from pyguard.base.events import Outcome
from pyguard.live.guard import Guard

STOP = Decision(
    action=Action.STOP, reason="looping", rule="repeat_no_gain", outcome=Outcome.STALLED, iteration=5, turn=1
)
REFLECT = Decision(action=Action.REFLECT, reason="r", rule="repeat_no_gain", reflection="try else", iteration=3, turn=1)


def acted(mode: str, decision: Decision) -> Decision:
    run = Guard(mode=mode).start_run(task="t")  # type: ignore[arg-type]
    try:
        return run._acted(decision)
    finally:
        run.abandon()


def test_enforce_acts_on_every_decision():
    assert acted("enforce", STOP) is STOP and acted("enforce", REFLECT) is REFLECT


def test_observe_acts_on_none_but_keeps_the_turn():
    for d in (STOP, REFLECT):
        out = acted("observe", d)
        assert out.action is Action.CONTINUE and out.outcome is None and out.reflection is None
        assert (out.iteration, out.turn) == (d.iteration, d.turn)  # the fail-safe still counts per turn


def test_reflect_passes_reflections_and_turns_a_stop_into_one():
    assert acted("reflect", REFLECT).reflection == "try else"
    out = acted("reflect", STOP)
    assert out.action is Action.REFLECT and out.outcome is None and "looping" in (out.reflection or "")


def test_an_unknown_mode_is_refused_naming_it():
    with pytest.raises(ConfigError, match="mode='watch'"):
        Guard(mode="watch")  # type: ignore[arg-type]
