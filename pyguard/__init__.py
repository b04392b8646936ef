"""pyguard: drive Java LangChain4j agents from Python and guard their tool-calling loops.

The public API is what this package exports::

    from pyguard import Guard, PolicyConfig, TokenCap, scripted_model, start_jvm

    start_jvm()                                   # once per process
    guard = Guard(PolicyConfig(stop=TokenCap(200_000)))  # or Guard.from_toml("pyguard.toml")
    result = guard.run("aiservices", scripted_model("logistics_incident"), "Where is order 12345?", tools="logistics")
    # the agent's options as keywords (above) or as one object: AgentOptions(tools="logistics", run_id="r1")
    result.outcome, result.model_calls, result.total_tokens

``import pyguard`` starts no JVM and imports no jpype: events, decisions and errors are imported at once (pydantic
only); every other name is imported on first use (PEP 562), so ``from pyguard import Guard`` loads the guard and its
engine, and jpype only when a run needs the JVM. Everything not listed in ``__all__`` is an implementation detail.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pyguard._version import __version__
from pyguard.base.decisions import Action, Decision
from pyguard.base.errors import (
    BudgetError,
    ConfigError,
    HandleError,
    InputError,
    JvmError,
    MissingExtraError,
    PyguardError,
    RunError,
    TraceFormatError,
)
from pyguard.base.events import IterationEvent, Observation, Outcome, RunEnd, RunRecord, RunStart, ToolCall

if TYPE_CHECKING:
    from pyguard.base.agent_options import AgentOptions
    from pyguard.engine import Policy, PolicyConfig
    from pyguard.engine.caps import CostCap, IdenticalActionCap, ModelCallCap, TokenCap, ToolCallCap, WallClockCap
    from pyguard.engine.conditions import FunctionCondition, RunState, StopCondition, StopHit
    from pyguard.engine.tree import TreeLimits
    from pyguard.escalation import EscalationHandle
    from pyguard.jvm import jclass, openai_chat_model, scripted_model, start_jvm, start_openai_server
    from pyguard.jvm.streaming import openai_streaming_chat_model, scripted_streaming_model
    from pyguard.live.agent_guard import AgentGuard, GuardedAgent
    from pyguard.live.guard import Guard
    from pyguard.live.nested import NestedRun, SubAgent, run_nested, start_tree
    from pyguard.live.run import GuardedRun
    from pyguard.loading import load_runs
    from pyguard.otel import GuardTelemetry, export_runs
    from pyguard.result import RunResult


_LAZY: dict[str, str] = {
    "Guard": "pyguard.live.guard",
    "GuardedRun": "pyguard.live.run",
    "AgentGuard": "pyguard.live.agent_guard",
    "GuardedAgent": "pyguard.live.agent_guard",
    "AgentOptions": "pyguard.base.agent_options",
    "RunResult": "pyguard.result",
    "Policy": "pyguard.engine",
    "PolicyConfig": "pyguard.engine",
    "TreeLimits": "pyguard.engine.tree",
    "StopCondition": "pyguard.engine.conditions",
    "StopHit": "pyguard.engine.conditions",
    "RunState": "pyguard.engine.conditions",
    "FunctionCondition": "pyguard.engine.conditions",
    "ModelCallCap": "pyguard.engine.caps",
    "TokenCap": "pyguard.engine.caps",
    "ToolCallCap": "pyguard.engine.caps",
    "CostCap": "pyguard.engine.caps",
    "WallClockCap": "pyguard.engine.caps",
    "IdenticalActionCap": "pyguard.engine.caps",
    "start_jvm": "pyguard.jvm",
    "jclass": "pyguard.jvm",
    "scripted_model": "pyguard.jvm",
    "start_openai_server": "pyguard.jvm",
    "openai_chat_model": "pyguard.jvm",
    "scripted_streaming_model": "pyguard.jvm.streaming",
    "openai_streaming_chat_model": "pyguard.jvm.streaming",
    "SubAgent": "pyguard.live.nested",
    "NestedRun": "pyguard.live.nested",
    "run_nested": "pyguard.live.nested",
    "start_tree": "pyguard.live.nested",
    "EscalationHandle": "pyguard.escalation",
    "load_runs": "pyguard.loading",
    "GuardTelemetry": "pyguard.otel",
    "export_runs": "pyguard.otel",
}
"""Each lazily exported name and the module that defines it (imported on first access)."""

__all__ = [
    # imported with the package (pydantic only)
    "Action",
    "BudgetError",
    "ConfigError",
    "Decision",
    "HandleError",
    "InputError",
    "IterationEvent",
    "JvmError",
    "MissingExtraError",
    "Observation",
    "Outcome",
    "PyguardError",
    "RunEnd",
    "RunError",
    "RunRecord",
    "RunStart",
    "ToolCall",
    "TraceFormatError",
    "__version__",
    # imported on first use
    "Guard",
    "GuardedRun",
    "AgentGuard",
    "GuardedAgent",
    "AgentOptions",
    "RunResult",
    "Policy",
    "PolicyConfig",
    "TreeLimits",
    "StopCondition",
    "StopHit",
    "RunState",
    "FunctionCondition",
    "ModelCallCap",
    "TokenCap",
    "ToolCallCap",
    "CostCap",
    "WallClockCap",
    "IdenticalActionCap",
    "start_jvm",
    "jclass",
    "scripted_model",
    "start_openai_server",
    "openai_chat_model",
    "scripted_streaming_model",
    "openai_streaming_chat_model",
    "SubAgent",
    "NestedRun",
    "run_nested",
    "start_tree",
    "EscalationHandle",
    "load_runs",
    "GuardTelemetry",
    "export_runs",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pyguard' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next access is a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
