"""Per-tool limits in the tools' executors (Java's ``ToolLimits``): LangChain4j's ``beforeToolExecution`` cannot veto
one call (its exception ends the whole invocation), so a call over its tool's limit is refused by its executor, which
returns the reason as the tool's result instead of running the tool."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyguard.errors import ConfigError
from pyguard.jvm._java import jclass

__all__: list[str] = []


def limited_tools(tool_guard: Any, objects: Sequence[Any]) -> Any:
    """``objects``' ``@Tool`` methods as a Java ``Map<ToolSpecification, ToolExecutor>`` whose executors ask the run
    serving the calling thread of ``tool_guard`` (a ``GuardedChatModel`` or ``AgentGuardedChatModel``) first."""
    if not objects:
        raise ConfigError("tools(...) needs at least one tool object (a Java object with @Tool methods)")
    cls = jclass("dev.pyguard.bridge.ToolLimits")
    return cls.wrapObjects(tool_guard, *objects)
