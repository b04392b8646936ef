"""Stop conditions as configuration: one pydantic model per condition, told apart by ``kind``, nested with ``any``
and ``all``. Each round-trips (``M.model_validate(m.model_dump()) == m``); :func:`pyguard.engine.stop.build_condition`
makes the condition from its config, and ``condition.config()`` gives the config back.

In TOML, the ``[stop]`` table of a policy is one condition (OR-ed with the built-in ones: the stall rules, the
``[caps]``, the hard cap and the iteration budget)::

    [stop]
    kind = "any"
    of = [
        { kind = "model_calls", limit = 60 },
        { kind = "all", of = [
            { kind = "total_tokens", limit = 200000 },
            { kind = "wall_clock", seconds = 300 },
        ] },
    ]
"""

from __future__ import annotations

import warnings
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from pyguard.engine.strict_config import StrictConfig

__all__: list[str] = []


class ModelCallsConfig(StrictConfig):
    """At most ``limit`` model calls in the run."""

    kind: Literal["model_calls"] = "model_calls"
    limit: int = Field(ge=1)


class ToolCallsConfig(StrictConfig):
    """At most ``limit`` tool calls requested, all tools together or (``tool``) one tool."""

    kind: Literal["tool_calls"] = "tool_calls"
    limit: int = Field(ge=1)
    tool: str | None = None


class TokensConfig(StrictConfig):
    """At most ``limit`` tokens as reported by the provider: ``input_tokens``, ``output_tokens`` or ``total_tokens``
    (the names of ``[caps]``: ``max_input_tokens = N`` is ``{ kind = "input_tokens", limit = N }``). The older
    ``{ kind = "tokens", which = "input" }`` is read as ``input_tokens`` with a DeprecationWarning."""

    kind: Literal["input_tokens", "output_tokens", "total_tokens"] = "total_tokens"
    limit: int = Field(ge=1)

    @property
    def which(self) -> str:
        """``input``, ``output`` or ``total``."""
        return self.kind.removesuffix("_tokens")


class CostConfig(StrictConfig):
    """At most ``limit`` in cost, priced with the policy's ``caps.prices``."""

    kind: Literal["cost"] = "cost"
    limit: float = Field(gt=0)


class WallClockConfig(StrictConfig):
    """At most ``seconds`` since the run started (the policy's injected clock)."""

    kind: Literal["wall_clock"] = "wall_clock"
    seconds: float = Field(gt=0)


class IdenticalActionsConfig(StrictConfig):
    """The very same action (tool and canonical arguments) requested at most ``limit`` times."""

    kind: Literal["identical_actions"] = "identical_actions"
    limit: int = Field(ge=1)


class StalledConfig(StrictConfig):
    """The stall rules (configured in ``[stall]``): a stall is reflected on first (``max_reflections``), then stops
    the run (outcome ``stalled``)."""

    kind: Literal["stalled"] = "stalled"


class BudgetConfig(StrictConfig):
    """The dynamic iteration budget is used up (rule ``budget``)."""

    kind: Literal["budget"] = "budget"


class HardCapConfig(StrictConfig):
    """The per-turn hard cap is reached (rule ``budget``: the budget can grow no further)."""

    kind: Literal["hard_cap"] = "hard_cap"


class AnyOfConfig(StrictConfig):
    """Any of ``of`` fires."""

    kind: Literal["any"] = "any"
    of: list[StopConfig] = Field(min_length=1)


class AllOfConfig(StrictConfig):
    """All of ``of`` fire."""

    kind: Literal["all"] = "all"
    of: list[StopConfig] = Field(min_length=1)


def _upgraded(value: Any) -> Any:
    """A stop table in a deprecated spelling, rewritten (with a DeprecationWarning) to the one it stands for."""
    if isinstance(value, dict) and value.get("kind") == "tokens":
        which = value.get("which", "total")
        warnings.warn(
            f'[stop] {{ kind = "tokens", which = "{which}" }} is deprecated: write {{ kind = "{which}_tokens" }} '
            f"(the name of [caps] max_{which}_tokens)",
            DeprecationWarning,
            stacklevel=2,
        )
        return {k: v for k, v in value.items() if k != "which"} | {"kind": f"{which}_tokens"}
    return value


StopConfig = Annotated[
    ModelCallsConfig
    | ToolCallsConfig
    | TokensConfig
    | CostConfig
    | WallClockConfig
    | IdenticalActionsConfig
    | StalledConfig
    | BudgetConfig
    | HardCapConfig
    | AnyOfConfig
    | AllOfConfig,
    Field(discriminator="kind"),
    BeforeValidator(_upgraded),
]
"""One stop condition's configuration (any kind)."""

AnyOfConfig.model_rebuild()
AllOfConfig.model_rebuild()
