"""Budgets that compose down a tree of runs (a supervisor or workflow and its sub-agent invocations). Pure Python.

A :class:`BudgetNode` is one run's share of a budget: model calls, tokens, cost and wall-clock seconds, each optional.
Two rules make the tree:

- **a child gets at most what its parent has left**: :meth:`BudgetNode.child` caps the child's own limits by the
  parent's remainder at that moment, and :meth:`BudgetNode.remaining` is the smallest remainder along the path to the
  root, so a child also stops when a sibling has spent what was left;
- **what a child spends is charged to its parent**: :meth:`BudgetNode.charge` adds one model call's usage to the node
  and to every ancestor, so a parent's :attr:`BudgetNode.spent` is its own usage plus all of its descendants'.

A limit of N means "at most N", as with :mod:`pyguard.engine.caps`; :class:`TreeBudget` is the stop condition (:mod:`pyguard.engine.conditions`) that reads it: a node is exhausted once a dimension is
*reached*, so the run stops before using more (a model call that crosses a token or cost limit is the last one).
Thread-safe: one lock per tree. The clock is injected (no test sleeps).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from pyguard.base.errors import ConfigError
from pyguard.base.events import IterationEvent, Outcome
from pyguard.engine.conditions import RunState, StopCondition, StopHit
from pyguard.engine.config import Price

__all__: list[str] = []


class TreeLimits(BaseModel):
    """The limits of one node of a run tree; None leaves a dimension unlimited (then only its parent's applies)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model_calls: int | None = Field(default=None, ge=0)
    """Model calls of the node and everything under it."""
    tokens: int | None = Field(default=None, ge=0)
    """Total tokens (as reported by the provider) of the node and everything under it."""
    cost: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """Cost (priced with the policy's ``caps.prices``) of the node and everything under it."""
    seconds: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """Wall-clock seconds from the start of the node (a child's deadline is never later than its parent's)."""


@dataclass(frozen=True, slots=True)
class Spend:
    """What a node and its descendants used."""

    model_calls: int = 0
    tokens: int = 0
    """The known sum (:class:`pyguard.base.ending.TokenTotals`): a call that reported no usage adds nothing ..."""
    cost: float = 0.0
    tokens_partial: bool = False
    """... and makes it partial: a lower bound, said so."""

    def plus(self, other: Spend) -> Spend:
        return Spend(
            self.model_calls + other.model_calls,
            self.tokens + other.tokens,
            self.cost + other.cost,
            self.tokens_partial or other.tokens_partial,
        )

    def as_dict(self) -> dict:
        out = {"model_calls": self.model_calls, "tokens": self.tokens, "cost": round(self.cost, 6)}
        return {**out, "tokens_partial": True} if self.tokens_partial else out


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.4g}"


def event_cost(event: IterationEvent, prices: Mapping[str, Price]) -> float:
    """The cost of one model call with ``prices`` (by model name, ``"*"`` for any other); 0 when unpriced."""
    price = prices.get(event.model) if event.model is not None else None
    if price is None:
        price = prices.get("*")
    if price is None:
        return 0.0
    return ((event.input_tokens or 0) * price.input_per_mtok + (event.output_tokens or 0) * price.output_per_mtok) / 1e6


@dataclass(eq=False)
class BudgetNode:
    """One run's node in a budget tree. Build the root with :meth:`root`, children with :meth:`child`."""

    run_id: str
    limits: TreeLimits
    """The node's effective limits: its own, capped by its parent's remainder when it was made."""
    parent: BudgetNode | None
    clock: Callable[[], float]
    started: float
    _lock: threading.RLock
    own: Spend = field(default_factory=Spend)
    """What this run itself used (its own model calls)."""
    spent: Spend = field(default_factory=Spend)
    """What this run and every descendant used."""
    children: list[BudgetNode] = field(default_factory=list)

    @classmethod
    def root(cls, run_id: str, limits: TreeLimits | None = None, *, clock: Callable[[], float]) -> BudgetNode:
        return cls(run_id, limits or TreeLimits(), None, clock, clock(), threading.RLock())

    def child(self, run_id: str, limits: TreeLimits | None = None) -> BudgetNode:
        """A child node: its limits are ``limits`` (or none of its own) capped by what this node has left now."""
        own = limits or TreeLimits()
        with self._lock:
            left = self.remaining()
            capped = TreeLimits(
                model_calls=_min(own.model_calls, left.model_calls),
                tokens=_min(own.tokens, left.tokens),
                cost=_min(own.cost, left.cost),
                seconds=_min(own.seconds, left.seconds),
            )
            node = BudgetNode(run_id, capped, self, self.clock, self.clock(), self._lock)
            self.children.append(node)
            return node

    def path(self) -> list[BudgetNode]:
        """This node and its ancestors, up to the root."""
        nodes: list[BudgetNode] = []
        node: BudgetNode | None = self
        while node is not None:
            nodes.append(node)
            node = node.parent
        return nodes

    def _own_remaining(self, now: float) -> dict[str, float | None]:
        lim = self.limits
        return {
            "model_calls": None if lim.model_calls is None else lim.model_calls - self.spent.model_calls,
            "tokens": None if lim.tokens is None else lim.tokens - self.spent.tokens,
            "cost": None if lim.cost is None else lim.cost - self.spent.cost,
            "seconds": None if lim.seconds is None else lim.seconds - (now - self.started),
        }

    def remaining(self) -> TreeLimits:
        """What this node may still use: the smallest remainder along its path to the root (never negative)."""
        with self._lock:
            now = self.clock()
            left: dict[str, float | None] = {"model_calls": None, "tokens": None, "cost": None, "seconds": None}
            for node in self.path():
                for key, value in node._own_remaining(now).items():
                    left[key] = _min(left[key], value)
            return TreeLimits(
                model_calls=None if left["model_calls"] is None else max(0, int(left["model_calls"])),
                tokens=None if left["tokens"] is None else max(0, int(left["tokens"])),
                cost=None if left["cost"] is None else max(0.0, float(left["cost"])),
                seconds=None if left["seconds"] is None else max(0.0, float(left["seconds"])),
            )

    def charge(self, usage: Spend) -> None:
        """Charge one run's usage to this node and every ancestor."""
        if usage.model_calls < 0 or usage.tokens < 0 or usage.cost < 0:
            raise ConfigError(f"usage {usage!r} cannot be negative")
        with self._lock:
            self.own = self.own.plus(usage)
            for node in self.path():
                node.spent = node.spent.plus(usage)

    def charge_event(self, event: IterationEvent, prices: Mapping[str, Price] | None = None) -> Spend:
        """Charge one model call (its :attr:`~pyguard.base.events.IterationEvent.tokens`, none when unknown and then partial,
        and its cost when ``prices`` are given); returns what was charged."""
        usage = Spend(1, event.tokens or 0, event_cost(event, prices) if prices else 0.0, not event.tokens_complete)
        self.charge(usage)
        return usage

    def exhausted(self) -> StopHit | None:
        """The first limit reached on the path from the root down to this node (the outermost owner), or None: rule
        ``tree_budget:<dimension>``, outcome ``expired``, evidence the dimension, limit, use and whose limit it is."""
        with self._lock:
            now = self.clock()
            for node in reversed(self.path()):
                lim = node.limits
                checks = (
                    ("model_calls", lim.model_calls, node.spent.model_calls),
                    ("tokens", lim.tokens, node.spent.tokens),
                    ("cost", lim.cost, node.spent.cost),
                    ("seconds", lim.seconds, now - node.started),
                )
                for dimension, limit, used in checks:
                    if limit is not None and used >= limit:
                        return _tree_hit(dimension, float(limit), float(used), node.run_id)
            return None

    def summary(self) -> dict:
        """The node, its limits, own and total spend, and its children (nested)."""
        with self._lock:
            return {
                "run_id": self.run_id,
                "limits": self.limits.model_dump(exclude_none=True),
                "own": self.own.as_dict(),
                "spent": self.spent.as_dict(),
                "children": [c.summary() for c in self.children],
            }


def _tree_hit(dimension: str, limit: float, used: float, owner: str) -> StopHit:
    return StopHit(
        f"tree_budget:{dimension}",
        Outcome.EXPIRED,
        f"the run tree's budget ran out: run {owner!r}'s {dimension} limit of {_fmt(limit)} is"
        f" used up ({_fmt(used)} used)",
        {"dimension": dimension, "limit": limit, "used": used, "owner": owner},
    )


class TreeBudget(StopCondition):
    """A stop condition over a live run tree: fires when :meth:`BudgetNode.exhausted` names a limit on the path
    from the root to ``node``. It reads the tree, not the run state, and has no configuration (the tree is built
    at run time): give it as ``Policy(extra_stop=...)``."""

    def __init__(self, node: BudgetNode) -> None:
        self.node = node

    def check(self, state: RunState) -> StopHit | None:
        return self.node.exhausted()

    def __deepcopy__(self, memo: dict) -> TreeBudget:
        return self  # every run's copy reads the one live tree (the policy copies conditions per run)

    def __repr__(self) -> str:
        return f"TreeBudget({self.node.run_id!r})"


def _min(a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)
