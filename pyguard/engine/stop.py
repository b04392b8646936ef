"""What stops a run, in one place: build any stop condition from its configuration, and compose a policy's whole
stop condition (the stall rules, the caps, the hard cap, the budget and the config's ``stop`` conditions).

    from pyguard.engine.stop import ModelCallCap, TokenCap, WallClockCap
    PolicyConfig(stop=ModelCallCap(60) | (TokenCap(200_000) & WallClockCap(300)))

or in TOML (:mod:`pyguard.engine.stop_config`)::

    [stop]
    kind = "any"
    of = [{ kind = "model_calls", limit = 60 },
          { kind = "all", of = [{ kind = "total_tokens", limit = 200000 }, { kind = "wall_clock", seconds = 300 }] }]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyguard.engine.caps import (
    CostCap,
    IdenticalActionCap,
    ModelCallCap,
    TokenCap,
    ToolCallCap,
    WallClockCap,
)
from pyguard.engine.conditions import (
    AllOf,
    AnyOf,
    FunctionCondition,
    RunState,
    StopCondition,
    StopHit,
    build_condition,
)
from pyguard.engine.config import PolicyConfig
from pyguard.engine.stop_rules import HardCap, IterationBudget, Stalled
from pyguard.engine.tree import TreeBudget

__all__ = [
    "AllOf",
    "AnyOf",
    "CostCap",
    "FunctionCondition",
    "HardCap",
    "IdenticalActionCap",
    "IterationBudget",
    "ModelCallCap",
    "RunState",
    "Stalled",
    "StopCondition",
    "StopHit",
    "TokenCap",
    "ToolCallCap",
    "TreeBudget",
    "WallClockCap",
    "build_condition",
]


def policy_condition(config: PolicyConfig, extra: StopCondition | None = None) -> StopCondition:
    """A run's whole stop condition under ``config``: the stall rules, the ``[caps]``, the config's ``stop``
    conditions and ``extra`` (a condition given in Python, not recorded), the hard cap and the budget, OR-ed in that
    order. The order is the precedence: the composition's verdict (``condition(state)``) is led by the first hit
    that stops, else by the first reflection, so a stall with no reflection left stops before a limit, a limit
    before the budget, and a stall with a reflection left reflects only when nothing stops (then the budget holds
    the reflection's extension); the session makes the verdict its decision."""
    parts: list[StopCondition] = [Stalled()]
    caps = [build_condition(c) for c in config.caps.conditions()]
    if caps:
        parts.append(caps[0] if len(caps) == 1 else AnyOf(*caps))
    if config.stop is not None:
        parts.append(build_condition(config.stop))
    if extra is not None:
        parts.append(extra)
    parts += [HardCap(), IterationBudget()]
    return AnyOf(*parts)


def with_recorded_stop(config: PolicyConfig, recorded_policy: Mapping[str, Any] | None) -> PolicyConfig:
    """``config`` with the stop conditions a run's trace header recorded (``RunStart.policy["stop"]``), so that
    replay judges the run by the conditions it was guarded with; ``config`` itself when the header records none or
    ``config`` sets its own ``stop`` (a config given for the replay wins). A recorded condition that is not valid
    raises :class:`~pyguard.base.errors.ConfigError` naming it."""
    recorded = None if recorded_policy is None else recorded_policy.get("stop")
    if recorded is None or config.stop is not None:
        return config
    return PolicyConfig.model_validate({**config.model_dump(), "stop": recorded})
