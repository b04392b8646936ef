"""The JVM half of run trees: LangChain4j agentic systems whose sub-agent invocations are child runs.

Java's ``dev.pyguard.bridge.nested.AgentTree`` is an ``AgentListener`` that calls a :class:`TreeHandler` (implemented
by :class:`pyguard.live.nested.NestedRun`) around every invocation of a routed sub-agent; this module is the crossing
(``@JImplements``) and the builders of pyguard's own systems (``NestedAgents``: a supervisor, a sequence, a loop).
Nothing here decides: the run tree and its budgets live in :mod:`pyguard.live.nested` and :mod:`pyguard.engine.tree`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pyguard.base.agent_options import AgentOptions
from pyguard.base.errors import ConfigError
from pyguard.base.limits import NESTED_LOOP_ITERATIONS, NESTED_ROUND_TRIPS
from pyguard.jvm._java import java_call, jclass
from pyguard.jvm.agents import tool_set

__all__: list[str] = []

SystemKind = Literal["supervisor", "sequence", "loop"]
_KINDS = ("supervisor", "sequence", "loop")


class TreeHandler(Protocol):
    """What the Java ``AgentTree`` calls (see ``AgentTreeCallback.java``)."""

    def open_child(self, agent_name: str, inputs_json: str, base: Any) -> Any: ...

    def close_child(self, agent_name: str, output: str | None, error: Any) -> None: ...

    def recovery(self, agent_name: str, error: Any) -> str | None: ...


@dataclass(frozen=True)
class SubAgent:
    """One sub-agent of a system: its name (what a supervisor's planner calls it), its Java ``ChatModel``, its tools
    (anything :func:`pyguard.jvm.tool_set` takes; None: the scripted model's own scenario tools) and a description."""

    name: str
    model: Any
    tools: Any = None
    description: str | None = None


_PROXY: Any = None
_PROXY_LOCK = threading.Lock()


def _proxy_class() -> Any:
    global _PROXY
    with _PROXY_LOCK:
        if _PROXY is None:
            from jpype import JImplements, JOverride

            @JImplements("dev.pyguard.bridge.nested.AgentTreeCallback")
            class _AgentTreeCallback:
                def __init__(self, handler: TreeHandler) -> None:
                    self.handler = handler
                    self.errors: list[str] = []

                @JOverride
                def openChild(self, agentName: Any, inputsJson: Any, base: Any) -> Any:  # noqa: N802,N803
                    return self.handler.open_child(str(agentName), str(inputsJson), base)

                @JOverride
                def closeChild(self, agentName: Any, output: Any, error: Any) -> None:  # noqa: N802,N803
                    try:
                        self.handler.close_child(str(agentName), None if output is None else str(output), error)
                    except Exception as exc:  # the listener's caller would only log it: keep it
                        self.errors.append(f"{type(exc).__name__}: {exc}")

                @JOverride
                def recovery(self, agentName: Any, error: Any) -> Any:  # noqa: N802,N803
                    try:
                        return self.handler.recovery(str(agentName), error)
                    except Exception as exc:
                        self.errors.append(f"{type(exc).__name__}: {exc}")
                        return None

            _PROXY = _AgentTreeCallback
        return _PROXY


def agent_tree(handler: TreeHandler) -> Any:
    """A Java ``AgentTree`` calling ``handler``: build each sub-agent with ``.chatModel(tree.childModel(name, model))``
    and ``.listener(tree)``, and give the supervisor or workflow ``.errorHandler(tree.errorHandler())``."""
    return jclass("dev.pyguard.bridge.nested.AgentTree")(_proxy_class()(handler))


def _specs(agents: Sequence[SubAgent]) -> Any:
    if len(agents) < 1:
        raise ConfigError("a multi-agent system needs at least one sub-agent; pass SubAgent(name, model, tools)")
    names = [a.name for a in agents]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"sub-agent names must be unique; repeated: {', '.join(dupes)}")
    NestedAgents = jclass("dev.pyguard.bridge.nested.NestedAgents")
    specs = jclass("java.util.ArrayList")()
    for a in agents:
        if not a.name or not a.name.replace("_", "").isalnum():
            raise ConfigError(
                f"sub-agent name {a.name!r} must be letters, digits and '_' (the planner calls it by name)"
            )
        specs.add(NestedAgents.spec(a.name, a.description, a.model, tool_set(a.tools, a.model)))
    return specs


def build_system(
    kind: SystemKind | str,
    agents: Sequence[SubAgent],
    *,
    tree: Any = None,
    planner: Any = None,
    max_agents_invocations: int = 10,
    exit_when_contains: str = "DONE",
    options: AgentOptions | None = None,
) -> Any:
    """A Java ``AgentSystem`` of ``kind``: a supervisor (``planner`` is its model) over ``agents``, a sequence or a
    loop of them. With ``tree`` (from :func:`agent_tree`) every invocation is a child run; without, the system runs on
    the models as given (the unguarded baseline). ``options``: the system's agent options, of which it uses the
    sub-agents' round trips (:meth:`AgentOptions.round_trips`; default :data:`pyguard.base.limits.NESTED_ROUND_TRIPS`) and
    a loop's ``max_loop_iterations`` (default :data:`pyguard.base.limits.NESTED_LOOP_ITERATIONS`)."""
    if kind not in _KINDS:
        raise ConfigError(f"system kind {kind!r} is unknown; use one of {', '.join(_KINDS)}")
    options = options or AgentOptions()
    max_tool_calling_round_trips = options.round_trips(NESTED_ROUND_TRIPS)
    max_loop_iterations = options.loop_iterations(NESTED_LOOP_ITERATIONS)
    for name, value in (("max_agents_invocations", max_agents_invocations),):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"{name}={value!r} must be a positive integer")
    NestedAgents = jclass("dev.pyguard.bridge.nested.NestedAgents")
    specs = _specs(agents)
    if kind == "supervisor":
        if planner is None:
            raise ConfigError("a supervisor needs a planner model: pass planner=<a Java ChatModel>")
        return java_call(
            NestedAgents.supervisor, planner, tree, specs, max_agents_invocations, max_tool_calling_round_trips
        )
    if kind == "sequence":
        return java_call(NestedAgents.sequence, tree, specs, max_tool_calling_round_trips)
    return java_call(
        NestedAgents.loop, tree, specs, max_loop_iterations, exit_when_contains, max_tool_calling_round_trips
    )


def guard_stop_of(error: Any) -> tuple[str, str, str] | None:
    """``(run_id, outcome, reason)`` of the pyguard ``GuardStopException`` in a Java error's cause chain, or None."""
    if error is None or not hasattr(error, "getClass"):
        return None
    stop = jclass("dev.pyguard.bridge.GuardStopException").findIn(error)
    if stop is None:
        return None
    return str(stop.runId()), str(stop.outcome()), str(stop.reason())
