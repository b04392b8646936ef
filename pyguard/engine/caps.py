"""Hard caps: independent limits that compose with ``|`` and ``&`` (after AutoGen's termination conditions).

Every cap looks at one frozen :class:`UsageState` (what the run has used so far, kept by the run's own
:class:`UsageTracker`) and returns the list of :class:`CapHit` that fired (empty: keep going), each naming the
limit, its value and what was used. ``a | b`` fires when either fires (reporting every one that fired);
``a & b`` fires only when both fire. Combinators flatten.

Caps are stateless: a run's state lives in its usage, as tenacity's stop strategies read ``RetryCallState``, so one
cap object may judge many runs at once. A cap of your own that does keep state between checks is still safe: the
policy gives every run its own copy (:meth:`pyguard.engine.Policy.caps_for_run`), so concurrent runs never share it and
a run starting never wipes another's.

A limit of N means "at most N": a cap fires once N is *reached*, so the run stops before using more.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from pyguard.engine.config import CapsConfig, Price
from pyguard.engine.fingerprint import ActionFingerprint, fingerprint
from pyguard.errors import ConfigError
from pyguard.events import IterationEvent

__all__ = [
    "UsageState",
    "UsageTracker",
    "CapHit",
    "Cap",
    "AnyCap",
    "AllCap",
    "ModelCallCap",
    "ToolCallCap",
    "TokenCap",
    "CostCap",
    "WallClockCap",
    "IdenticalActionCap",
    "FunctionalCap",
    "build_caps",
]


@dataclass(frozen=True, slots=True)
class UsageState:
    """What a run has used so far."""

    model_calls: int = 0
    tool_calls: int = 0
    tool_calls_by_tool: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    """The sum of :attr:`pyguard.events.IterationEvent.tokens` over the calls that reported usage (unknown counts 0)."""
    tokens_reported: bool = False
    """False while no model call has reported token usage."""
    cost: float = 0.0
    unpriced_calls: int = 0
    """Model calls whose model has no price (counted as cost 0)."""
    elapsed_s: float = 0.0
    most_identical: int = 0
    """How often the most repeated exact action was requested."""
    most_identical_action: str | None = None

    def as_dict(self) -> dict:
        return {
            "model_calls": self.model_calls,
            "tool_calls": self.tool_calls,
            "tool_calls_by_tool": dict(self.tool_calls_by_tool),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "cost": round(self.cost, 6),
            "unpriced_calls": self.unpriced_calls,
            "elapsed_s": round(self.elapsed_s, 6),
            "most_identical": self.most_identical,
            "most_identical_action": self.most_identical_action,
        }


class UsageTracker:
    """Accumulates one run's usage from its iteration events (one tracker per run). ``reset()`` starts over.

    ``state`` is the frozen snapshot; it is built when asked for (not at every event), so a policy that only
    needs it for caps or evidence does not pay for it on every model call."""

    def __init__(self, prices: Mapping[str, Price] | None = None) -> None:
        self.prices = dict(prices or {})
        self.reset()

    def reset(self) -> None:
        self._by_tool: Counter[str] = Counter()
        self._identical: Counter[str] = Counter()
        self._top: tuple[int, str | None] = (0, None)
        self._model_calls = 0
        self._tool_calls = 0
        self._input = self._output = self._total = 0
        self._reported = False
        self._cost = 0.0
        self._unpriced = 0
        self._elapsed = 0.0
        self._state: UsageState | None = UsageState()

    @property
    def state(self) -> UsageState:
        """What the run has used so far."""
        if self._state is None:
            self._state = UsageState(
                model_calls=self._model_calls,
                tool_calls=self._tool_calls,
                tool_calls_by_tool=MappingProxyType(dict(self._by_tool)),
                input_tokens=self._input,
                output_tokens=self._output,
                total_tokens=self._total,
                tokens_reported=self._reported,
                cost=self._cost,
                unpriced_calls=self._unpriced,
                elapsed_s=self._elapsed,
                most_identical=self._top[0],
                most_identical_action=self._top[1],
            )
        return self._state

    def price_of(self, model: str | None) -> Price | None:
        if model is not None and model in self.prices:
            return self.prices[model]
        return self.prices.get("*")

    def update(self, event: IterationEvent, elapsed_s: float) -> UsageState:
        """Count ``event`` (``elapsed_s``: seconds since the run started) and return the new state."""
        self.accumulate(event, elapsed_s)
        return self.state

    def accumulate(
        self, event: IterationEvent, elapsed_s: float, actions: Sequence[ActionFingerprint] | None = None
    ) -> None:
        """Count ``event`` like :meth:`update`, without building the state snapshot. ``actions``: the fingerprints of
        the event's tool calls, in order, when the caller has them already (else they are computed here)."""
        calls = event.tool_calls
        if calls:
            if actions is None:
                actions = [fingerprint(c.name, c.arguments) for c in calls]
            by_tool = self._by_tool
            identical = self._identical
            for call, fp in zip(calls, actions, strict=True):
                by_tool[call.name] = by_tool.get(call.name, 0) + 1
                n = identical.get(fp.exact_id, 0) + 1
                identical[fp.exact_id] = n
                if n > self._top[0]:
                    self._top = (n, fp.short())
        inp = event.input_tokens or 0
        out = event.output_tokens or 0
        tokens = event.tokens  # None: unknown, which a cap cannot count (the state says whether any call reported)
        if tokens is not None:
            self._total += tokens
            self._reported = True
        self._input += inp
        self._output += out
        if self.prices:
            price = self.price_of(event.model)
            if price is None:
                self._unpriced += 1
            else:
                self._cost += inp / 1e6 * price.input_per_mtok + out / 1e6 * price.output_per_mtok
        else:
            self._unpriced += 1
        self._model_calls += 1
        self._tool_calls += len(calls)
        self._elapsed = elapsed_s
        self._state = None


@dataclass(frozen=True, slots=True)
class CapHit:
    """One limit that fired."""

    name: str
    """e.g. ``model_calls``, ``tool_calls:send_email``, ``total_tokens``, ``cost``, ``wall_clock``."""
    limit: float
    used: float
    message: str

    def as_dict(self) -> dict:
        return {"cap": self.name, "limit": self.limit, "used": self.used, "message": self.message}


class Cap(ABC):
    """A hard limit. Compose with ``|`` (either) and ``&`` (both)."""

    @abstractmethod
    def check(self, state: UsageState) -> list[CapHit]:
        """The hits of this cap for ``state`` (empty when it does not fire)."""

    def __or__(self, other: Cap) -> AnyCap:
        return AnyCap(self, other)

    def __and__(self, other: Cap) -> AllCap:
        return AllCap(self, other)


class _Combined(Cap):
    def __init__(self, *caps: Cap) -> None:
        flat: list[Cap] = []
        for c in caps:
            if not isinstance(c, Cap):
                raise ConfigError(f"cannot combine {c!r} with caps; use Cap instances (ModelCallCap(10), ...)")
            flat.extend(c.caps if isinstance(c, _Combined) and type(c) is type(self) else [c])
        self.caps: tuple[Cap, ...] = tuple(flat)

    def __repr__(self) -> str:
        op = " | " if isinstance(self, AnyCap) else " & "
        return "(" + op.join(map(repr, self.caps)) + ")"


class AnyCap(_Combined):
    """Fires when any of its caps fires; reports all that fired."""

    def check(self, state: UsageState) -> list[CapHit]:
        return [hit for c in self.caps for hit in c.check(state)]


class AllCap(_Combined):
    """Fires only when all of its caps fire; reports them all."""

    def check(self, state: UsageState) -> list[CapHit]:
        hits: list[CapHit] = []
        for c in self.caps:
            h = c.check(state)
            if not h:
                return []
            hits.extend(h)
        return hits


def _positive(value: float, what: str) -> None:
    if not value > 0:
        raise ConfigError(f"{what} must be > 0, got {value!r}")


class ModelCallCap(Cap):
    def __init__(self, limit: int) -> None:
        _positive(limit, "ModelCallCap limit")
        self.limit = limit

    def check(self, state: UsageState) -> list[CapHit]:
        if state.model_calls < self.limit:
            return []
        return [
            CapHit(
                "model_calls", self.limit, state.model_calls, f"{state.model_calls} model calls (limit {self.limit})"
            )
        ]

    def __repr__(self) -> str:
        return f"ModelCallCap({self.limit})"


class ToolCallCap(Cap):
    """Tool calls requested, all tools together or (``tool``) one tool."""

    def __init__(self, limit: int, tool: str | None = None) -> None:
        _positive(limit, f"ToolCallCap limit{' for ' + repr(tool) if tool else ''}")
        self.limit, self.tool = limit, tool

    def check(self, state: UsageState) -> list[CapHit]:
        used = state.tool_calls if self.tool is None else state.tool_calls_by_tool.get(self.tool, 0)
        if used < self.limit:
            return []
        name = "tool_calls" if self.tool is None else f"tool_calls:{self.tool}"
        what = "tool calls" if self.tool is None else f"calls of {self.tool}"
        return [CapHit(name, self.limit, used, f"{used} {what} (limit {self.limit})")]

    def __repr__(self) -> str:
        return f"ToolCallCap({self.limit}{', ' + repr(self.tool) if self.tool else ''})"


class TokenCap(Cap):
    _KINDS = ("input", "output", "total")

    def __init__(self, limit: int, kind: str = "total") -> None:
        if kind not in self._KINDS:
            raise ConfigError(f"TokenCap kind {kind!r} is not one of {', '.join(self._KINDS)}")
        _positive(limit, f"TokenCap({kind}) limit")
        self.limit, self.kind = limit, kind

    def check(self, state: UsageState) -> list[CapHit]:
        used = getattr(state, f"{self.kind}_tokens")
        if used < self.limit:
            return []
        return [CapHit(f"{self.kind}_tokens", self.limit, used, f"{used} {self.kind} tokens (limit {self.limit})")]

    def __repr__(self) -> str:
        return f"TokenCap({self.limit}, {self.kind!r})"


class CostCap(Cap):
    def __init__(self, limit: float) -> None:
        _positive(limit, "CostCap limit")
        self.limit = limit

    def check(self, state: UsageState) -> list[CapHit]:
        if state.cost < self.limit:
            return []
        return [CapHit("cost", self.limit, round(state.cost, 6), f"cost {state.cost:.4f} (limit {self.limit})")]

    def __repr__(self) -> str:
        return f"CostCap({self.limit})"


class WallClockCap(Cap):
    """Seconds since the run started, as measured by the policy's injected clock."""

    def __init__(self, seconds: float) -> None:
        _positive(seconds, "WallClockCap seconds")
        self.seconds = seconds

    def check(self, state: UsageState) -> list[CapHit]:
        if state.elapsed_s < self.seconds:
            return []
        return [
            CapHit(
                "wall_clock",
                self.seconds,
                round(state.elapsed_s, 6),
                f"{state.elapsed_s:.1f}s elapsed (limit {self.seconds}s)",
            )
        ]

    def __repr__(self) -> str:
        return f"WallClockCap({self.seconds})"


class IdenticalActionCap(Cap):
    """The very same action (tool + canonical arguments) requested ``limit`` times, whatever it returned."""

    def __init__(self, limit: int) -> None:
        _positive(limit, "IdenticalActionCap limit")
        self.limit = limit

    def check(self, state: UsageState) -> list[CapHit]:
        if state.most_identical < self.limit:
            return []
        return [
            CapHit(
                "identical_actions",
                self.limit,
                state.most_identical,
                f"{state.most_identical_action} requested {state.most_identical} times (limit {self.limit})",
            )
        ]

    def __repr__(self) -> str:
        return f"IdenticalActionCap({self.limit})"


class FunctionalCap(Cap):
    """A cap from a function ``state -> message or None`` (the message says why it fired)."""

    def __init__(self, name: str, fn: Callable[[UsageState], str | None]) -> None:
        self.name, self.fn = name, fn

    def check(self, state: UsageState) -> list[CapHit]:
        message = self.fn(state)
        return [] if message is None else [CapHit(self.name, float("nan"), float("nan"), message)]

    def __repr__(self) -> str:
        return f"FunctionalCap({self.name!r})"


def build_caps(config: CapsConfig) -> Cap | None:
    """The caps a :class:`CapsConfig` sets, OR-ed together (None when it sets none)."""
    caps: list[Cap] = []
    if config.max_model_calls is not None:
        caps.append(ModelCallCap(config.max_model_calls))
    if config.max_tool_calls is not None:
        caps.append(ToolCallCap(config.max_tool_calls))
    for tool, n in sorted(config.max_tool_calls_per_tool.items()):
        caps.append(ToolCallCap(n, tool))
    for kind in ("input", "output", "total"):
        limit = getattr(config, f"max_{kind}_tokens")
        if limit is not None:
            caps.append(TokenCap(limit, kind))
    if config.max_cost is not None:
        caps.append(CostCap(config.max_cost))
    if config.max_wall_s is not None:
        caps.append(WallClockCap(config.max_wall_s))
    if config.max_identical_actions is not None:
        caps.append(IdenticalActionCap(config.max_identical_actions))
    if not caps:
        return None
    return caps[0] if len(caps) == 1 else AnyCap(*caps)
