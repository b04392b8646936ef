"""Per-tool limits in the tools' executors (Java's ``ToolLimits``): LangChain4j's ``beforeToolExecution`` cannot veto
one call (its exception ends the whole invocation), so a call over its tool's limit is refused by its executor, which
returns the reason as the tool's result instead of running the tool (exit ``continue``), or also stops the run (exit
``end``: the stop message, no model call; ``error``: the guard's stop exception). A run's limits may sit within its
conversation's (``[conversation.tool_limits]``): a call runs only within both."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyguard.base.errors import ConfigError
from pyguard.engine.config import ToolLimitConfig
from pyguard.jvm._java import jclass

__all__: list[str] = []


def limited_tools(tool_guard: Any, objects: Sequence[Any]) -> Any:
    """``objects``' ``@Tool`` methods as a Java ``Map<ToolSpecification, ToolExecutor>`` whose executors ask the run
    serving the calling thread of ``tool_guard`` (a ``GuardedChatModel`` or ``AgentGuardedChatModel``) first."""
    if not objects:
        raise ConfigError("tools(...) needs at least one tool object (a Java object with @Tool methods)")
    cls = jclass("dev.pyguard.bridge.ToolLimits")
    return cls.wrapObjects(tool_guard, *objects)


def limit_run_tools(
    guarded: Any, limits: Mapping[str, ToolLimitConfig], stop_message: str | None, mode: str = "enforce"
) -> None:
    """Set a run's per-tool limits, with their exits, on its Java ``GuardedChatModel`` (``guarded``); ``stop_message``
    is what an exit ``end`` ends the run with when the run's own ``on_stop`` is not ``end``. ``mode`` is the run's
    (``PolicyConfig.mode``): ``observe`` lets a refused call run and only counts it, ``reflect`` blocks it but never
    stops the run; neither stops the run for an exit ``end``/``error`` (Java records the stop it would have made)."""
    if not limits and stop_message is None and mode == "enforce":
        return
    java_limits = guarded.toolLimits()
    java_limits.mode(mode)
    for tool, limit in sorted(limits.items()):
        java_limits.limit(tool, int(limit.limit), limit.exit)
    if stop_message is not None:
        java_limits.stopMessage(stop_message)


def conversation_tool_limits(limits: Mapping[str, ToolLimitConfig]) -> Any:
    """A Java ``ToolLimits`` of one conversation: every run of the conversation sits within it."""
    java_limits = jclass("dev.pyguard.bridge.ToolLimits")("conversation")
    for tool, limit in sorted(limits.items()):
        java_limits.limit(tool, int(limit.limit), limit.exit)
    return java_limits


def memory_ids() -> Any:
    """A Java ``ConversationIds``: its ``hook()`` is a ``chatRequestTransformer`` recording each model call's
    chat-memory id on the calling thread, its ``current()`` reads it."""
    return jclass("dev.pyguard.bridge.ConversationIds")()
