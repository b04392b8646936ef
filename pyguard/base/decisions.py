"""What the engine answers after each iteration: continue, inject a reflection, or stop.

A :class:`Decision` always carries a reason and its evidence, never a bare bool. The JVM edge turns it into
the Java actuator's instruction for the next model call; replay and the CLI read it as it is.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from pyguard.base.events import Outcome

__all__: list[str] = []


class Action(StrEnum):
    CONTINUE = "continue"
    REFLECT = "reflect"
    """Add ``Decision.reflection`` as a message to the next model call, then continue."""
    STOP = "stop"
    """End the run before the next model call with ``Decision.outcome``."""


class Decision(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    action: Action
    reason: str = ""
    """One human sentence: why."""
    rule: str | None = None
    """The rule that fired, e.g. 'repeat_no_gain', 'cycle', 'low_gain_streak', 'error_storm', 'budget', 'cap:tokens'."""
    reflection: str | None = None
    """The message to inject (only with REFLECT)."""
    outcome: Outcome | None = None
    """The run's outcome (only with STOP): STALLED, EXPIRED, ESCALATED, ..."""
    evidence: dict = Field(default_factory=dict)
    """Counts, repeated fingerprints, the gain series: whatever shows why."""
    iteration: int | None = None
    """The iteration index this decision was made after."""
    turn: int | None = None
    """The conversation turn that iteration belongs to (1-based; see :func:`pyguard.base.events.opens_turn`)."""
    budget: int | None = None
    """The iteration budget in force after this decision."""

    @classmethod
    def built(
        cls,
        action: Action,
        *,
        reason: str = "",
        rule: str | None = None,
        reflection: str | None = None,
        outcome: Outcome | None = None,
        evidence: dict,
        iteration: int,
        turn: int,
        budget: int,
    ) -> Decision:
        """A decision from the engine's own values, of the types the fields declare (the engine makes one per model
        call): set as pydantic's ``model_construct`` sets them, without validating them again and without its loop
        over the fields (a third of the cost of ``Decision(...)``). Equal to ``Decision(...)`` of the same values:
        ``tests/unit/engine/test_decisions_built.py``."""
        decision = cls.__new__(cls)
        _set(decision, "__dict__", {
            "action": action,
            "reason": reason,
            "rule": rule,
            "reflection": reflection,
            "outcome": outcome,
            "evidence": evidence,
            "iteration": iteration,
            "turn": turn,
            "budget": budget,
        })  # fmt: skip
        _set(decision, "__pydantic_fields_set__", set(_BUILT_FIELDS))
        _set(decision, "__pydantic_extra__", None)
        _set(decision, "__pydantic_private__", None)
        return decision

    @classmethod
    def proceed(cls, iteration: int | None = None, budget: int | None = None) -> Decision:
        return cls(action=Action.CONTINUE, iteration=iteration, budget=budget)

    @property
    def stops(self) -> bool:
        return self.action is Action.STOP


_set = object.__setattr__
_BUILT_FIELDS = frozenset(Decision.model_fields)
