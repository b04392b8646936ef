"""Hard caps: limits on what a run uses, as stop conditions (:mod:`pyguard.engine.conditions`).

Every cap reads the run's frozen :class:`~pyguard.engine.usage.UsageState` (``state.usage``: what the run has used
so far) and returns a :class:`~pyguard.engine.conditions.StopHit` with rule ``cap:<name>`` and outcome ``expired``,
or None. Caps compose with the other conditions: ``ModelCallCap(60) | (TokenCap(200_000) & WallClockCap(300))``.
They are stateless, as tenacity's stop strategies read ``RetryCallState``, so one cap object may judge many runs.

A limit of N means "at most N": a cap fires once N is *reached*, so the run stops before using more.
"""

from __future__ import annotations

import warnings

from pyguard.base.errors import ConfigError
from pyguard.base.events import Outcome
from pyguard.engine.conditions import RunState, StopCondition, StopHit
from pyguard.engine.stop_config import (
    CostConfig,
    IdenticalActionsConfig,
    ModelCallsConfig,
    TokensConfig,
    ToolCallsConfig,
    WallClockConfig,
)

__all__: list[str] = []


def _hit(name: str, limit: float, used: float, message: str) -> StopHit:
    return StopHit(f"cap:{name}", Outcome.EXPIRED, message, {"cap": name, "limit": limit, "used": used})


def _positive(value: float, what: str) -> None:
    if not value > 0:
        raise ConfigError(f"{what} must be > 0, got {value!r}")


class ModelCallCap(StopCondition):
    """Model calls made in the run."""

    config_model = ModelCallsConfig

    def __init__(self, limit: int) -> None:
        _positive(limit, "ModelCallCap limit")
        self.limit = limit

    def check(self, state: RunState) -> StopHit | None:
        used = state.usage.model_calls
        if used < self.limit:
            return None
        return _hit("model_calls", self.limit, used, f"{used} model calls (limit {self.limit})")

    def __repr__(self) -> str:
        return f"ModelCallCap({self.limit})"


class ToolCallCap(StopCondition):
    """Tool calls requested, all tools together or (``tool``) one tool."""

    config_model = ToolCallsConfig

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

    def __repr__(self) -> str:
        return f"ToolCallCap({self.limit}{', ' + repr(self.tool) if self.tool else ''})"


class TokenCap(StopCondition):
    """Tokens of one kind (``which``: ``input``, ``output`` or ``total``) as reported by the provider (unknown
    counts 0). Its config is ``{ kind = "<which>_tokens", limit = N }``, the names of ``[caps]``."""

    config_model = TokensConfig
    _WHICH = ("input", "output", "total")

    def __init__(self, limit: int, which: str = "total", *, kind: str | None = None) -> None:
        if kind is not None:
            warnings.warn(
                f"TokenCap(kind={kind!r}) is deprecated: write TokenCap({limit}, which={kind!r})",
                DeprecationWarning,
                stacklevel=2,
            )
            which = kind
        if which not in self._WHICH:
            raise ConfigError(f"TokenCap which={which!r} is not one of {', '.join(self._WHICH)}")
        _positive(limit, f"TokenCap({which}) limit")
        self.limit, self.which = limit, which

    @property
    def kind(self) -> str:
        """Deprecated: :attr:`which`."""
        warnings.warn("TokenCap.kind is deprecated: read TokenCap.which", DeprecationWarning, stacklevel=2)
        return self.which

    @classmethod
    def from_config(cls, config: TokensConfig) -> TokenCap:
        return cls(config.limit, config.which)

    def config(self) -> TokensConfig:
        return TokensConfig(kind=f"{self.which}_tokens", limit=self.limit)  # type: ignore[arg-type]

    def check(self, state: RunState) -> StopHit | None:
        used = getattr(state.usage, f"{self.which}_tokens")
        if used < self.limit:
            return None
        return _hit(f"{self.which}_tokens", self.limit, used, f"{used} {self.which} tokens (limit {self.limit})")

    def __repr__(self) -> str:
        return f"TokenCap({self.limit}, {self.which!r})"


class CostCap(StopCondition):
    """Cost, priced with the policy's ``caps.prices`` (calls of unpriced models count 0)."""

    config_model = CostConfig

    def __init__(self, limit: float) -> None:
        _positive(limit, "CostCap limit")
        self.limit = limit

    def check(self, state: RunState) -> StopHit | None:
        cost = state.usage.cost
        if cost < self.limit:
            return None
        return _hit("cost", self.limit, round(cost, 6), f"cost {cost:.4f} (limit {self.limit})")

    def __repr__(self) -> str:
        return f"CostCap({self.limit})"


class WallClockCap(StopCondition):
    """Seconds since the run started, as measured by the policy's injected clock."""

    config_model = WallClockConfig

    def __init__(self, seconds: float) -> None:
        _positive(seconds, "WallClockCap seconds")
        self.seconds = seconds

    def check(self, state: RunState) -> StopHit | None:
        elapsed = state.usage.elapsed_s
        if elapsed < self.seconds:
            return None
        return _hit("wall_clock", self.seconds, round(elapsed, 6), f"{elapsed:.1f}s elapsed (limit {self.seconds}s)")

    def __repr__(self) -> str:
        return f"WallClockCap({self.seconds})"


class IdenticalActionCap(StopCondition):
    """The very same action (tool + canonical arguments) requested ``limit`` times, whatever it returned."""

    config_model = IdenticalActionsConfig

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

    def __repr__(self) -> str:
        return f"IdenticalActionCap({self.limit})"
