"""The engine's own stop rules as stop conditions: the stall rules (:class:`Stalled`), the dynamic iteration budget
(:class:`IterationBudget`) and the per-turn hard cap (:class:`HardCap`).

:class:`Stalled` reports the stall rules' hits in ``state.stalls`` (:mod:`pyguard.engine.stall` measures and makes
them, each a ``stalled`` hit with its :class:`~pyguard.engine.conditions.StallSubject`); the policy reflects on a
stall first and stops on it once the reflections are used up. The budget and the hard cap read ``state.budget`` and ``state.hard_cap``; both stop with rule
``budget`` and outcome ``expired``, the hard cap being the budget that can grow no further.
"""

from __future__ import annotations

from pyguard.base.events import Outcome
from pyguard.engine.conditions import RunState, StopCondition, StopHit
from pyguard.engine.stop_config import BudgetConfig, HardCapConfig, StalledConfig

__all__: list[str] = []


class Stalled(StopCondition):
    """The stall detector found a stall (``repeat_no_gain``, ``cycle``, ``error_storm``, ``low_gain_streak``,
    ``same_answer``, ``fruitless_attempts``, ``polling_limit``, ``fruitless_retry``; which rules run and their
    thresholds: ``[stall]``, :class:`~pyguard.engine.config.StallConfig`). Its hit holds the stall rules' hits,
    in the detector's order; outcome ``stalled``."""

    config_model = StalledConfig

    def check(self, state: RunState) -> StopHit | None:
        stalls = state.stalls
        return StopHit.combine(stalls) if stalls else None

    def __repr__(self) -> str:
        return "Stalled()"


def _budget_hit(state: RunState) -> StopHit:
    """The stop of a run whose budget is used up, with what the budget was and where."""
    i, budget = state.iteration, state.budget
    if state.reflecting:
        message = f"stalled with no budget left (hard cap {state.hard_cap_per_turn})"
    else:
        at_cap = " (the hard cap)" if budget >= state.hard_cap else ""
        used = budget - state.turn_start
        where = f" in turn {state.turn}" if state.turn > 1 else ""
        message = (
            f"iteration budget of {used} model calls used{where}{at_cap}"
            if i == budget
            else f"{i - state.turn_start} model calls made{where}, over the iteration budget of {used}{at_cap}"
        )
    return StopHit(
        "budget",
        Outcome.EXPIRED,
        message,
        {"budget": budget, "hard_cap": state.hard_cap_per_turn, "iteration": i},
        budget=True,
    )


class IterationBudget(StopCondition):
    """The run has made as many model calls as its dynamic budget allows (what it started with plus what it
    earned and what reflections granted)."""

    config_model = BudgetConfig

    def check(self, state: RunState) -> StopHit | None:
        return _budget_hit(state) if state.iteration >= state.budget else None

    def __repr__(self) -> str:
        return "IterationBudget()"


class HardCap(StopCondition):
    """The turn has made as many model calls as the hard cap allows, however productive."""

    config_model = HardCapConfig

    def check(self, state: RunState) -> StopHit | None:
        return _budget_hit(state) if state.iteration >= state.hard_cap else None

    def __repr__(self) -> str:
        return "HardCap()"
