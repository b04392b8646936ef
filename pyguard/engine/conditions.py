"""Stop conditions: what stops a run, as objects that compose with ``|`` and ``&`` (after tenacity's stop strategies
and AutoGen's termination conditions).

Every condition reads one frozen :class:`RunState` (the run after one model call: its usage, budget, hard cap and
the stall rules' hits) and returns one :class:`StopHit` (rule, outcome, message, evidence) or None. The stall rules
speak the same vocabulary: each finding of the stall detector is a ``stalled`` :class:`StopHit` whose
:class:`StallSubject` says what it is about (the actions involved, their last result, whether it may stop a run).
``a | b`` fires when either fires and reports every hit; ``a & b`` fires only when both fire. Combinators flatten:
``a | b | c`` is one :class:`AnyOf` of three. A condition that keeps state between checks implements :meth:`reset`
(the combinators pass it on); the policy gives every run its own copy, so concurrent runs never share one.

A condition made from configuration has a config (:mod:`pyguard.engine.stop_config`) that round-trips:
``build_condition(c.config()) == c`` in behaviour, so a run's header can hold it and replay rebuild it.

The conditions themselves: hard caps (:mod:`pyguard.engine.caps`), the stall rules, iteration budget and hard cap
(:mod:`pyguard.engine.stop_rules`), the limits of a run tree (:class:`pyguard.engine.tree.TreeBudget`); the
registry that builds any of them from its config is :func:`pyguard.engine.stop.build_condition`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from pyguard.engine.stop_config import AllOfConfig, AnyOfConfig, StopConfig
from pyguard.engine.usage import UsageState
from pyguard.errors import ConfigError
from pyguard.events import Outcome

__all__ = ["RunState", "StallSubject", "StopHit", "StopCondition", "AnyOf", "AllOf", "FunctionCondition"]


@dataclass(frozen=True, slots=True)
class RunState:
    """One run after one model call: everything a stop condition may read."""

    run_id: str
    iteration: int
    """Model calls made in the run so far (this one included)."""
    turn: int = 1
    """The conversation turn in force (1-based)."""
    turn_start: int = 0
    """Model calls made before this turn began (budgets and the hard cap count from here)."""
    usage: UsageState = field(default_factory=UsageState)
    """What the run has used so far, across turns."""
    budget: int = 0
    """The iteration budget (a model-call number of the run) if the run goes on: with what this call earned, or
    with the extension a reflection would grant when a stall rule hit."""
    hard_cap: int = 0
    """The hard cap as a model-call number of the run (the turn's start plus the per-turn hard cap)."""
    hard_cap_per_turn: int = 0
    """The hard cap as configured (model calls per turn)."""
    gain: float = 0.0
    """The information gain of the results this call's request brought."""
    stalls: tuple[StopHit, ...] = ()
    """The stall rules' hits after this call, each with its :class:`StallSubject` (none in the grace call after a
    reflection)."""
    reflections: int = 0
    """Reflections injected in this turn so far."""
    max_reflections: int = 1
    """Reflections a turn may have before a stall stops it."""

    @property
    def reflecting(self) -> bool:
        """A stall was found and a reflection is still to be had (the budget then holds the extension)."""
        return bool(self.stalls) and self.reflections < self.max_reflections


@dataclass(frozen=True, slots=True)
class StallSubject:
    """What a stall rule's hit is about (:attr:`StopHit.stall`): where it was found, the actions involved and their
    last result, and whether it may stop a run. The policy compares subjects to tell a repeated stall from a new one,
    and the reflection quotes them."""

    iteration: int
    """The model call the stall was found after."""
    tool: str | None = None
    fingerprints: tuple[str, ...] = ()
    """Canonical forms of the actions involved (cut for display)."""
    ids: tuple[str, ...] = ()
    """Exact and normalised fingerprint digests of the actions involved."""
    sample: str | None = field(default=None, repr=False)
    """The last result text of the action involved (tool content: quote it as data, never as instructions)."""
    stops: bool = True
    """False for a finding that earns a reflection but never stops a run by itself (futility: new attempts that
    leave a check's output unchanged are attempts, not a repeated state)."""


@dataclass(frozen=True, slots=True)
class StopHit:
    """A condition that fired: its rule, the outcome a stop gets, one sentence for people, and the evidence."""

    rule: str
    """e.g. ``cap:model_calls``, ``budget``, ``cycle``, ``tree_budget:tokens``."""
    outcome: Outcome
    """``expired`` (a limit ran out) or ``stalled`` (the run stopped making progress)."""
    message: str
    evidence: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    parts: tuple[StopHit, ...] = ()
    """For a hit of a combinator: the hit of every condition that fired, in order (a leaf hit has none)."""
    stall: StallSubject | None = None
    """For a stall rule's hit: what it is about (None for a limit's hit)."""

    @property
    def stops(self) -> bool:
        """Whether this hit may stop a run by itself (only a stall finding of futility may not)."""
        return self.stall is None or self.stall.stops

    def leaves(self) -> tuple[StopHit, ...]:
        """The hits of the single conditions that fired (this hit itself for a leaf)."""
        return self.parts or (self,)

    def as_dict(self) -> dict[str, Any]:
        """The hit as a decision's evidence: a limit's evidence and message; a stall's rule, where it was found,
        message, tool and actions before its evidence."""
        s = self.stall
        if s is None:
            return {**self.evidence, "message": self.message}
        return {
            "rule": self.rule,
            "iteration": s.iteration,
            "message": self.message,
            "tool": s.tool,
            "fingerprints": list(s.fingerprints),
            **({} if s.stops else {"stops": False}),
            **self.evidence,
        }

    @staticmethod
    def combine(hits: Sequence[StopHit]) -> StopHit:
        """One hit holding every leaf of ``hits`` (at least one), the first one's rule, outcome and message leading."""
        leaves = tuple(leaf for h in hits for leaf in h.leaves())
        first = leaves[0]
        return StopHit(first.rule, first.outcome, first.message, first.evidence, parts=leaves, stall=first.stall)


class StopCondition(ABC):
    """A reason to stop a run. Compose with ``|`` (either) and ``&`` (both)."""

    @abstractmethod
    def check(self, state: RunState) -> StopHit | None:
        """The hit of this condition for ``state``, or None when it does not fire."""

    def reset(self) -> None:
        """Forget what was counted between checks (stateless conditions have nothing to forget)."""
        return None

    def config(self) -> StopConfig:
        """This condition as configuration (:mod:`pyguard.engine.stop_config`), to record it and rebuild it."""
        raise ConfigError(
            f"{self!r} has no configuration, so a trace cannot record it and replay cannot rebuild it; "
            "pass it as Policy(extra_stop=...) (not recorded) or build it from the conditions in pyguard.engine.stop"
        )

    def __or__(self, other: StopCondition) -> AnyOf:
        return AnyOf(self, other)

    def __and__(self, other: StopCondition) -> AllOf:
        return AllOf(self, other)


class _Combinator(StopCondition):
    def __init__(self, *conditions: StopCondition) -> None:
        flat: list[StopCondition] = []
        for c in conditions:
            if not isinstance(c, StopCondition):
                raise ConfigError(
                    f"cannot combine {c!r} with stop conditions; use StopCondition instances (ModelCallCap(10), ...)"
                )
            flat.extend(c.conditions if isinstance(c, _Combinator) and type(c) is type(self) else [c])
        if not flat:
            raise ConfigError(f"{type(self).__name__}() needs at least one condition")
        self.conditions: tuple[StopCondition, ...] = tuple(flat)

    def reset(self) -> None:
        for c in self.conditions:
            c.reset()

    def __repr__(self) -> str:
        op = " | " if isinstance(self, AnyOf) else " & "
        return "(" + op.join(map(repr, self.conditions)) + ")"


class AnyOf(_Combinator):
    """Fires when any of its conditions fires; its hit holds every hit, the first one's rule leading."""

    def check(self, state: RunState) -> StopHit | None:
        hits = [h for c in self.conditions if (h := c.check(state)) is not None]
        return StopHit.combine(hits) if hits else None

    def config(self) -> StopConfig:
        return AnyOfConfig(of=[c.config() for c in self.conditions])


class AllOf(_Combinator):
    """Fires only when all of its conditions fire; its hit holds them all. Every condition is checked each time,
    so a stateful one counts the same whether or not another fired."""

    def check(self, state: RunState) -> StopHit | None:
        hits = [c.check(state) for c in self.conditions]
        if any(h is None for h in hits):
            return None
        return StopHit.combine([h for h in hits if h is not None])

    def config(self) -> StopConfig:
        return AllOfConfig(of=[c.config() for c in self.conditions])


class FunctionCondition(StopCondition):
    """A condition from a function ``state -> message or None`` (the message says why it fired); outcome
    ``expired``, rule ``cap:<name>``. It has no configuration: it cannot be recorded in a trace."""

    def __init__(self, name: str, fn: Callable[[RunState], str | None]) -> None:
        self.name, self.fn = name, fn

    def check(self, state: RunState) -> StopHit | None:
        message = self.fn(state)
        if message is None:
            return None
        return StopHit(f"cap:{self.name}", Outcome.EXPIRED, message, {"cap": self.name})

    def __repr__(self) -> str:
        return f"FunctionCondition({self.name!r})"
