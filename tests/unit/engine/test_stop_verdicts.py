"""The precedence lives in the stop algebra: a composed condition's verdict (``condition(state)``) is the decision.

A stall finding is reflected on while the turn has reflections left and stops once they are used up; a finding that
only earns a reflection (futility) is no verdict without one; in ``a | b`` the first hit that stops leads, else the
first reflection; the budget's hit is reported beside the limits, not among them."""

from __future__ import annotations

import pytest

from pyguard.base.decisions import Action
from pyguard.base.errors import ConfigError
from pyguard.base.events import Outcome
from pyguard.engine import PolicyConfig
from pyguard.engine.conditions import AnyOf, RunState, StallSubject, StopCondition, StopHit
from pyguard.engine.stall_report import stall_hit
from pyguard.engine.stop import HardCap, IterationBudget, ModelCallCap, Stalled, policy_condition
from pyguard.engine.usage import UsageState

CYCLE = stall_hit("cycle", "A, B, A, B", {"times": 3}, StallSubject(4, "a", ("a()",), ("x", "y")))
FUTILE = stall_hit("fruitless_attempts", "tests unchanged", {"attempts": 6}, StallSubject(4), Action.REFLECT)


def state(*stalls: StopHit, reflections: int = 0, calls: int = 4, budget: int = 10) -> RunState:
    return RunState(
        run_id="r",
        iteration=calls,
        usage=UsageState(model_calls=calls),
        budget=budget,
        hard_cap=150,
        hard_cap_per_turn=150,
        stalls=stalls,
        reflections=reflections,
        max_reflections=1,
    )


def test_a_stall_reflects_while_a_reflection_is_left_then_stops() -> None:
    first = Stalled()(state(FUTILE, CYCLE))
    assert first is not None and first.action is Action.REFLECT and first.rule == "fruitless_attempts"
    assert first.leaves() == (FUTILE, CYCLE)
    second = Stalled()(state(FUTILE, CYCLE, reflections=1))
    assert second is not None and second.action is Action.STOP and second.outcome is Outcome.STALLED
    assert second.rule == "cycle" and second.leaves() == (FUTILE, CYCLE)  # led by the finding that may stop
    assert Stalled()(state(FUTILE, reflections=1)) is None  # futility, and no reflection left to give


def test_in_a_composition_a_stop_leads_a_reflection_and_order_ranks_the_stops() -> None:
    whole = Stalled() | ModelCallCap(4) | HardCap() | IterationBudget()
    # a stall with a reflection left, and a cap: the cap stops; the stall is in the hit, not leading
    hit = whole(state(CYCLE))
    assert hit is not None and (hit.action, hit.rule) == (Action.STOP, "cap:model_calls")
    assert [h.rule for h in hit.leaves()] == ["cycle", "cap:model_calls"]
    # the reflections used up: the stall stops before the cap
    hit = whole(state(CYCLE, reflections=1))
    assert hit is not None and (hit.action, hit.rule, hit.outcome) == (Action.STOP, "cycle", Outcome.STALLED)
    # a stall with a reflection left and the budget spent: the budget stops, reported as the budget
    hit = (Stalled() | IterationBudget())(state(CYCLE, calls=10, budget=10))
    assert hit is not None and hit.action is Action.STOP and hit.budget and hit.outcome is Outcome.EXPIRED
    assert hit.message.startswith("stalled with no budget left")
    # nothing stops: the reflection is the verdict
    hit = (Stalled() | ModelCallCap(99) | IterationBudget())(state(CYCLE))
    assert hit is not None and (hit.action, hit.rule) == (Action.REFLECT, "cycle")


def test_the_policy_condition_is_the_precedence() -> None:
    whole = policy_condition(PolicyConfig.from_dict({"caps": {"max_model_calls": 4}}))
    assert isinstance(whole, AnyOf)
    assert whole(state(CYCLE)).rule == "cap:model_calls"  # type: ignore[union-attr]
    assert whole(state(CYCLE, reflections=1)).rule == "cycle"  # type: ignore[union-attr]
    assert whole(state(calls=3)) is None


class _Mine(StopCondition):
    def check(self, state: RunState) -> StopHit | None:
        return StopHit("my_stall", Outcome.STALLED, "mine")


def test_a_stalled_hit_of_your_own_is_judged_like_the_stall_rules_with_a_bare_subject() -> None:
    hit = _Mine()(state())
    assert hit is not None and hit.action is Action.REFLECT and hit.stall == StallSubject(4)
    hit = _Mine()(state(reflections=1))
    assert hit is not None and hit.action is Action.STOP and hit.rule == "my_stall"


def test_only_a_stall_finding_may_ask_for_a_reflection() -> None:
    with pytest.raises(ConfigError, match="'cap:x'"):
        StopHit("cap:x", Outcome.EXPIRED, "a limit", action=Action.REFLECT)
