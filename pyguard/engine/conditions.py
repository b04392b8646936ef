"""Stop conditions: what stops a run, as objects that compose with ``|`` and ``&`` (after tenacity's stop strategies
and AutoGen's termination conditions).

Every condition reads one frozen :class:`RunState` (the run after one model call: its usage, budget, hard cap and
the stall rules' hits) and returns one :class:`StopHit` (rule, outcome, message, evidence) or None. The stall rules
speak the same vocabulary: each finding of the stall detector is a ``stalled`` :class:`StopHit` whose
:class:`StallSubject` says what it is about (the actions involved, their last result); a finding that only earns a
reflection has ``action`` reflect. ``a | b`` fires when either fires and reports every hit; ``a & b`` fires only when
both fire. Combinators flatten: ``a | b | c`` is one :class:`AnyOf` of three. A condition that keeps state between
checks implements :meth:`reset` (the combinators pass it on); the policy gives every run its own copy, reset, so
concurrent runs never share one.

The precedence is in the algebra: calling a condition, ``condition(state)``, gives its verdict (a limit's hit stops;
a stall finding reflects while the turn has reflections left, then stops), and a composition's verdict is led by
its first hit that stops, else its first reflection; the policy's decision is that verdict.

A condition made from configuration names its config model on the class (``config_model``,
:mod:`pyguard.engine.stop_config`) and round-trips: ``build_condition(c.config()) == c`` in behaviour, so a run's
header can hold it and replay rebuild it.

The conditions themselves: hard caps (:mod:`pyguard.engine.caps`), the stall rules, iteration budget and hard cap
(:mod:`pyguard.engine.stop_rules`), the limits of a run tree (:class:`pyguard.engine.tree.TreeBudget`); the
registry that builds any of them from its config is :func:`pyguard.engine.stop.build_condition`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, ClassVar

from pydantic import BaseModel

from pyguard.base.decisions import Action
from pyguard.base.errors import ConfigError
from pyguard.base.events import Outcome
from pyguard.engine.stop_config import AllOfConfig, AnyOfConfig, StopConfig
from pyguard.engine.usage import UsageState

__all__: list[str] = []


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
    reflected_at: int | None = None
    """The model call after which the turn's last reflection was sent (None before one)."""
    reflected: tuple[StopHit, ...] = ()
    """The stall findings that reflection answered (what a second signal is compared with)."""

    @property
    def reflecting(self) -> bool:
        """A stall was found and a reflection is still to be had (the budget then holds the extension)."""
        return bool(self.stalls) and self.reflections < self.max_reflections


@dataclass(frozen=True, slots=True)
class StallSubject:
    """What a stall rule's hit is about (:attr:`StopHit.stall`): where it was found, the actions involved and their
    last result. The policy compares subjects to tell a repeated stall from a new one, and the reflection quotes
    them."""

    iteration: int
    """The model call the stall was found after."""
    tool: str | None = None
    fingerprints: tuple[str, ...] = ()
    """Canonical forms of the actions involved (cut for display)."""
    ids: tuple[str, ...] = ()
    """Exact and normalised fingerprint digests of the actions involved."""
    sample: str | None = field(default=None, repr=False)
    """The last result text of the action involved (tool content: quote it as data, never as instructions)."""


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
    action: Action = Action.STOP
    """What this hit asks for: ``stop``, or ``reflect`` (only a stall finding: it earns a reflection and never stops
    a run by itself, as futility: new attempts that leave a check's output unchanged are attempts, not a repeated
    state). A stall finding that may stop is reflected on first while the turn has reflections left: the verdict of
    a condition (:meth:`StopCondition.__call__`) says which."""
    budget: bool = False
    """A hit of the iteration budget or the hard cap (the budget a reflection extends and productive calls earn),
    reported beside the limits, not among them."""

    def __post_init__(self) -> None:
        if self.action is not Action.STOP and (
            self.action is not Action.REFLECT or self.outcome is not Outcome.STALLED
        ):
            raise ConfigError(
                f"StopHit {self.rule!r}: action {self.action!r} with outcome {self.outcome!r}; a hit stops, or (a "
                "stall finding, outcome stalled) asks for a reflection"
            )

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
            **({} if self.action is Action.STOP else {"stops": False}),
            **self.evidence,
        }

    @staticmethod
    def combine(hits: Sequence[StopHit], lead: StopHit | None = None, action: Action | None = None) -> StopHit:
        """One hit holding every leaf of ``hits`` (at least one), ``lead``'s rule, outcome, message, evidence and
        action leading (the first hit's by default; ``action`` overrides the lead's)."""
        leaves = tuple(leaf for h in hits for leaf in h.leaves())
        first = hits[0] if lead is None else lead
        return StopHit(
            first.rule,
            first.outcome,
            first.message,
            first.evidence,
            parts=leaves,
            stall=first.stall,
            action=first.action if action is None else action,
            budget=first.budget,
        )


def _judged(hit: StopHit, state: RunState) -> StopHit | None:
    """The verdict of a condition's hit for ``state``. A limit's hit stops. A stall finding (outcome ``stalled``) is
    reflected on while the turn has reflections left (the hit of every finding, the first leading, asks for a
    reflection); once they are used up it stops, led by the first finding that may stop, or is no verdict at all
    when every finding only earns a reflection (futility, with no reflection left to give)."""
    if hit.outcome is not Outcome.STALLED:
        return hit
    stalls = tuple(h if h.stall is not None else replace(h, stall=StallSubject(state.iteration)) for h in hit.leaves())
    if state.reflections < state.max_reflections:
        return StopHit.combine(stalls, action=Action.REFLECT)
    lead = next((h for h in stalls if h.action is Action.STOP), None)
    return None if lead is None else StopHit.combine(stalls, lead)


_BY_CONFIG: dict[type, type[StopCondition]] = {}
"""Each condition class by its config model (filled as the classes are defined)."""


def build_condition(config: StopConfig) -> StopCondition:
    """The stop condition a config describes (the inverse of ``condition.config()``). Import it from
    :mod:`pyguard.engine.stop`, which defines every condition class (a class registers its ``config_model`` when
    it is defined)."""
    cls = _BY_CONFIG.get(type(config))
    if cls is None:
        raise ConfigError(f"{config!r} is not a stop condition's config; use one of pyguard.engine.stop_config")
    return cls.from_config(config)


class StopCondition(ABC):
    """A reason to stop a run. Compose with ``|`` (either) and ``&`` (both); call the composition for the verdict.

    A condition made from configuration names its pydantic model once, on the class (``config_model``, as
    AutoGen's ``component_config_schema``): the model's fields (all but ``kind``) are the constructor's keyword
    arguments and the attributes of the same names, so :func:`build_condition` makes the condition from its config
    and :meth:`config` gives the config back, with no table of builders beside them."""

    config_model: ClassVar[type[BaseModel] | None] = None
    """The model of this condition's configuration (:mod:`pyguard.engine.stop_config`); None: it has none, and a
    trace cannot record it."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        model = cls.__dict__.get("config_model")
        if model is not None:
            _BY_CONFIG[model] = cls

    @abstractmethod
    def check(self, state: RunState) -> StopHit | None:
        """The hit of this condition for ``state``, or None when it does not fire."""

    def __call__(self, state: RunState) -> StopHit | None:
        """The verdict for ``state``: this condition's hit, a stall finding judged against the turn's reflections
        (reflect while they last, then stop); None when it does not fire. A composition's verdict is its leading
        hit: the first hit that stops, else the first that reflects (:class:`AnyOf`)."""
        hit = self.check(state)
        return None if hit is None else _judged(hit, state)

    def reset(self) -> None:
        """Forget what was counted between checks (stateless conditions have nothing to forget). The policy calls
        it on each run's own copy of a condition given in Python, so every run starts from nothing."""
        return None

    @classmethod
    def from_config(cls, config: Any) -> StopCondition:
        """The condition ``config`` (an instance of ``config_model``) describes."""
        return cls(**{k: v for k, v in config if k != "kind"})

    def config(self) -> StopConfig:
        """This condition as configuration (:mod:`pyguard.engine.stop_config`), to record it and rebuild it."""
        model = self.config_model
        if model is None:
            raise ConfigError(
                f"{self!r} has no configuration, so a trace cannot record it and replay cannot rebuild it; "
                "pass it as Policy(extra_stop=...) (not recorded) or build it from the conditions in "
                "pyguard.engine.stop"
            )
        return model(**{k: getattr(self, k) for k in model.model_fields if k != "kind"})  # type: ignore[return-value]

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

    def __call__(self, state: RunState) -> StopHit | None:
        return self.check(state)  # each condition's hit is judged where it is made

    @classmethod
    def from_config(cls, config: Any) -> StopCondition:
        return cls(*(build_condition(c) for c in config.of))

    def config(self) -> StopConfig:
        assert self.config_model is not None
        return self.config_model(of=[c.config() for c in self.conditions])  # type: ignore[return-value]

    def reset(self) -> None:
        for c in self.conditions:
            c.reset()

    def __repr__(self) -> str:
        op = " | " if isinstance(self, AnyOf) else " & "
        return "(" + op.join(map(repr, self.conditions)) + ")"


def _lead(hits: Sequence[StopHit]) -> StopHit:
    """The precedence of a composition: the first hit that stops leads, else the first (a reflection)."""
    return next((h for h in hits if h.action is Action.STOP), hits[0])


class AnyOf(_Combinator):
    """Fires when any of its conditions fires; its hit holds every verdict, the first that stops leading, else the
    first reflection (so ``Stalled() | caps | HardCap() | IterationBudget()`` stops on a stall once the reflections
    are used up before a cap, on a cap before the budget, and reflects only when nothing stops)."""

    config_model = AnyOfConfig

    def check(self, state: RunState) -> StopHit | None:
        hits = [h for c in self.conditions if (h := c(state)) is not None]
        return StopHit.combine(hits, _lead(hits)) if hits else None


class AllOf(_Combinator):
    """Fires only when all of its conditions fire; its hit holds them all. Every condition is checked each time,
    so a stateful one counts the same whether or not another fired."""

    config_model = AllOfConfig

    def check(self, state: RunState) -> StopHit | None:
        hits = [c(state) for c in self.conditions]
        if any(h is None for h in hits):
            return None
        fired = [h for h in hits if h is not None]
        return StopHit.combine(fired, _lead(fired))


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
