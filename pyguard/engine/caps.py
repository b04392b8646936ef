"""Hard caps: limits on what a run uses, as stop conditions (:mod:`pyguard.engine.conditions`).

Every cap reads the run's frozen :class:`~pyguard.engine.usage.UsageState` (``state.usage``: what the run has used
so far) and returns a :class:`~pyguard.engine.conditions.StopHit` with rule ``cap:<name>`` and outcome ``expired``,
or None. Caps compose with the other conditions: ``ModelCallCap(60) | (TokenCap(200_000) & WallClockCap(300))``.
They are stateless, as tenacity's stop strategies read ``RetryCallState``, so one cap object may judge many runs.

A limit of N means "at most N": a cap fires once N is *reached*, so the run stops before using more.
"""

from __future__ import annotations

from pyguard.engine.conditions import AnyOf, RunState, StopCondition, StopHit
from pyguard.engine.config import CapsConfig
from pyguard.engine.stop_config import (
    CostConfig,
    IdenticalActionsConfig,
    ModelCallsConfig,
    TokensConfig,
    ToolCallsConfig,
    WallClockConfig,
)
from pyguard.errors import ConfigError
from pyguard.events import Outcome

__all__ = [
    "ModelCallCap",
    "ToolCallCap",
    "TokenCap",
    "CostCap",
    "WallClockCap",
    "IdenticalActionCap",
    "build_caps",
]


def _hit(name: str, limit: float, used: float, message: str) -> StopHit:
    return StopHit(f"cap:{name}", Outcome.EXPIRED, message, {"cap": name, "limit": limit, "used": used})


def _positive(value: float, what: str) -> None:
    if not value > 0:
        raise ConfigError(f"{what} must be > 0, got {value!r}")


class ModelCallCap(StopCondition):
    def __init__(self, limit: int) -> None:
        _positive(limit, "ModelCallCap limit")
        self.limit = limit

    def check(self, state: RunState) -> StopHit | None:
        used = state.usage.model_calls
        if used < self.limit:
            return None
        return _hit("model_calls", self.limit, used, f"{used} model calls (limit {self.limit})")

    def config(self) -> ModelCallsConfig:
        return ModelCallsConfig(limit=self.limit)

    def __repr__(self) -> str:
        return f"ModelCallCap({self.limit})"


class ToolCallCap(StopCondition):
    """Tool calls requested, all tools together or (``tool``) one tool."""

    def __init__(self, limit: int, tool: str | None = None) -> None:
        _positive(limit, f"ToolCallCap limit{' for ' + repr(tool) if tool else ''}")
        self.limit, self.tool = limit, tool

    def check(self, state: RunState) -> StopHit | None:
        usage = state.usage
        used = usage.tool_calls if self.tool is None else usage.tool_calls_by_tool.get(self.tool, 0)
        if used < self.limit:
            return None
        name = "tool_calls" if self.tool is None else f"tool_calls:{self.tool}"
        what = "tool calls" if self.tool is None else f"calls of {self.tool}"
        return _hit(name, self.limit, used, f"{used} {what} (limit {self.limit})")

    def config(self) -> ToolCallsConfig:
        return ToolCallsConfig(limit=self.limit, tool=self.tool)

    def __repr__(self) -> str:
        return f"ToolCallCap({self.limit}{', ' + repr(self.tool) if self.tool else ''})"


class TokenCap(StopCondition):
    """Tokens of one kind (``input``, ``output`` or ``total``) as reported by the provider (unknown counts 0)."""

    _KINDS = ("input", "output", "total")

    def __init__(self, limit: int, kind: str = "total") -> None:
        if kind not in self._KINDS:
            raise ConfigError(f"TokenCap kind {kind!r} is not one of {', '.join(self._KINDS)}")
        _positive(limit, f"TokenCap({kind}) limit")
        self.limit, self.kind = limit, kind

    def check(self, state: RunState) -> StopHit | None:
        used = getattr(state.usage, f"{self.kind}_tokens")
        if used < self.limit:
            return None
        return _hit(f"{self.kind}_tokens", self.limit, used, f"{used} {self.kind} tokens (limit {self.limit})")

    def config(self) -> TokensConfig:
        return TokensConfig(limit=self.limit, which=self.kind)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"TokenCap({self.limit}, {self.kind!r})"


class CostCap(StopCondition):
    """Cost, priced with the policy's ``caps.prices`` (calls of unpriced models count 0)."""

    def __init__(self, limit: float) -> None:
        _positive(limit, "CostCap limit")
        self.limit = limit

    def check(self, state: RunState) -> StopHit | None:
        cost = state.usage.cost
        if cost < self.limit:
            return None
        return _hit("cost", self.limit, round(cost, 6), f"cost {cost:.4f} (limit {self.limit})")

    def config(self) -> CostConfig:
        return CostConfig(limit=float(self.limit))

    def __repr__(self) -> str:
        return f"CostCap({self.limit})"


class WallClockCap(StopCondition):
    """Seconds since the run started, as measured by the policy's injected clock."""

    def __init__(self, seconds: float) -> None:
        _positive(seconds, "WallClockCap seconds")
        self.seconds = seconds

    def check(self, state: RunState) -> StopHit | None:
        elapsed = state.usage.elapsed_s
        if elapsed < self.seconds:
            return None
        return _hit("wall_clock", self.seconds, round(elapsed, 6), f"{elapsed:.1f}s elapsed (limit {self.seconds}s)")

    def config(self) -> WallClockConfig:
        return WallClockConfig(seconds=float(self.seconds))

    def __repr__(self) -> str:
        return f"WallClockCap({self.seconds})"


class IdenticalActionCap(StopCondition):
    """The very same action (tool + canonical arguments) requested ``limit`` times, whatever it returned."""

    def __init__(self, limit: int) -> None:
        _positive(limit, "IdenticalActionCap limit")
        self.limit = limit

    def check(self, state: RunState) -> StopHit | None:
        usage = state.usage
        if usage.most_identical < self.limit:
            return None
        return _hit(
            "identical_actions",
            self.limit,
            usage.most_identical,
            f"{usage.most_identical_action} requested {usage.most_identical} times (limit {self.limit})",
        )

    def config(self) -> IdenticalActionsConfig:
        return IdenticalActionsConfig(limit=self.limit)

    def __repr__(self) -> str:
        return f"IdenticalActionCap({self.limit})"


def build_caps(config: CapsConfig) -> StopCondition | None:
    """The caps a :class:`CapsConfig` sets, OR-ed together (None when it sets none)."""
    caps: list[StopCondition] = []
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
    return caps[0] if len(caps) == 1 else AnyOf(*caps)
