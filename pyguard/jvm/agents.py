"""Build the three agent styles around a guarded model and run a task: the Python API of the bridge.

Typical use (the JVM must be started first with :func:`pyguard.jvm.start_jvm`)::

    from pyguard.jvm import start_jvm, scripted_model, run_agent
    start_jvm()
    model = scripted_model("logistics_incident", seed=1)
    result = run_agent("aiservices", model, "Where is order 12345?", callback=my_policy)   # -> BridgeResult
    result.status, result.outcome, result.reason, result.stats.model_calls, result.events

``callback`` is any ``Callable[[IterationEvent], Decision | None]`` (an engine ``RunSession.observe``, say). For
finer control build the pieces: :func:`guard_model` (one per run) then :func:`build_agent` and ``agent.run(task)``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Unpack

from pyguard.base.agent_options import AgentKeywords, AgentOptions, agent_options
from pyguard.base.errors import ConfigError
from pyguard.jvm._java import java_call, jclass
from pyguard.jvm.bridge_result import AgentStyle, BridgeResult, BridgeRunStats, GuardStopped, WrapUpRecord
from pyguard.jvm.callback import GuardPolicyFn
from pyguard.jvm.guarded_model import GuardedModel, bridge_classes, guard_model
from pyguard.jvm.scenarios import ScenarioSource, scenario_json

__all__ = ["BridgeResult", "BridgeRunStats", "GuardStopped", "GuardedModel", "WrapUpRecord", "guard_model"]


def __getattr__(name: str) -> Any:
    """``DEFAULT_MAX_MODEL_CALLS``: the Java fail-safe's default for a run without a policy, read from its one home,
    Java's ``GuardConfig.DEFAULT_MAX_MODEL_CALLS`` (so it needs the JVM started)."""
    if name == "DEFAULT_MAX_MODEL_CALLS":
        return int(jclass("dev.pyguard.bridge.GuardConfig").DEFAULT_MAX_MODEL_CALLS)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def scripted_model(source: ScenarioSource, *, seed: int | None = None) -> Any:
    """A Java ``ScriptedChatModel`` playing a scenario (shipped name, JSON path, or dict); ``seed`` overrides its seed."""
    cls = jclass("dev.pyguard.bridge.scripted.ScriptedChatModel")
    jseed = None if seed is None else jclass("java.lang.Long")(int(seed))
    return java_call(cls.fromJson, scenario_json(source), jseed)


def scenario_tools(source: ScenarioSource) -> Any:
    """Fresh tools for one run as the scenario declares them (its ``toolset``): a Java ``ToolSet``."""
    scenario = java_call(jclass("dev.pyguard.bridge.scripted.Scenario").parse, scenario_json(source))
    return jclass("dev.pyguard.bridge.scripted.ScriptedChatModel").toolsFor(scenario)


def demo_tools() -> Any:
    """A fresh ``ToolSet`` of the logistics demo tools (real @Tool methods over fixed data)."""
    ToolSet = jclass("dev.pyguard.bridge.ToolSet")
    return ToolSet.of(jclass("dev.pyguard.bridge.demo.LogisticsTools")())


def tool_set(tools: Any, model: Any = None) -> Any:
    """Normalise ``tools`` to a Java ``ToolSet``.

    None: the scripted model's own scenario tools (fresh), else no tools; a ``LocalServer``: its scenario's tools; ``"logistics"``: the demo tools;
    ``"hazards"``: the bad-input tools; a Java ``ToolSet``; a Java object with @Tool methods; or a list of those.
    """
    ToolSet = jclass("dev.pyguard.bridge.ToolSet")
    if hasattr(tools, "new_tools") and hasattr(tools, "base_url"):  # a LocalServer: its scenario's tools
        return tools.new_tools()
    if tools is None:
        return ToolSet.ownedBy(model)
    if isinstance(tools, str):
        if tools == "logistics":
            return demo_tools()
        if tools == "hazards":
            return ToolSet.of(jclass("dev.pyguard.bridge.demo.HazardTools")())
        raise ConfigError(
            f"tools={tools!r} is unknown; use 'logistics', 'hazards', a Java ToolSet or Java @Tool objects"
        )
    if isinstance(tools, ToolSet):
        return tools
    if isinstance(tools, Iterable) and not hasattr(tools, "getClass"):
        result = ToolSet.empty()
        for t in tools:
            result = result.plus(tool_set(t, model))
        return result
    return java_call(ToolSet.of, tools, what="tools")


BUILD_OPTIONS = (
    "tools",
    "max_loop_iterations",
    "max_tool_calling_round_trips",
    "exit_when_answer_contains",
    "system_message",
)
"""The agent options :func:`build_agent` reads (the run id and task type are the guarded model's:
:func:`guard_model`)."""


def build_agent(
    style: AgentStyle | str,
    model: GuardedModel | Any,
    *,
    options: AgentOptions | None = None,
    per_run_memory: bool = False,
    **keywords: Unpack[AgentKeywords],
) -> Any:
    """A Java ``GuardedAgent`` of ``style`` around ``model`` (a :class:`GuardedModel` or any Java ChatModel).

    ``options`` (:class:`pyguard.AgentOptions`) or the same as keywords (a keyword wins): the tools, the system
    message and the agent's own loop caps (:mod:`pyguard.base.limits`): ``max_loop_iterations`` is the agentic loop's
    iterations / the explicit loop's model calls; ``max_tool_calling_round_trips`` AiServices' (and the agentic
    sub-agent's). ``exit_when_answer_contains`` (agentic only): None exits on the first answer, "" never exits early.
    ``per_run_memory`` (aiservices): a chat memory per run, for an agent built once for many runs.
    """
    options = agent_options("build_agent", options, keywords, uses=BUILD_OPTIONS)
    try:
        style = AgentStyle(style)
    except ValueError:
        raise ConfigError(f"agent style {style!r} is unknown; use one of {[s.value for s in AgentStyle]}") from None
    if isinstance(model, GuardedModel):
        model.check_not_released("build_agent")
    java_model = model.java if isinstance(model, GuardedModel) else model
    tools = options.tools
    ts = None if tools is None else tool_set(tools, java_model)  # None: the model's own tools, found in Java
    return java_call(
        bridge_classes().Agents.build,
        style.value,
        java_model,
        ts,
        options.loop_iterations(),
        options.round_trips(),
        options.exit_when_answer_contains,
        options.system_message,
        bool(per_run_memory),
        what="build_agent",
    )


def run_built(agent: Any, task: str | Sequence[str], guarded: GuardedModel | None = None) -> BridgeResult:
    """Run a built agent once and read its result (and the Python side's events and errors); ``guarded``, the run's
    guarded model, is released after it (:meth:`GuardedModel.release`: one guarded model per run).

    ``task`` is one user message, or a conversation: a list of user messages, each answered (one ``chat()`` call, one
    chat memory) before the next; the aiservices style only. The result's answer is the last one."""
    if guarded is not None:
        guarded.check_not_released("run_built")
    if isinstance(task, str):
        raw = json.loads(str(agent.runJson(task)))
    else:
        raw = json.loads(str(agent.runTurnsJson(_user_messages(task, str(agent.style())))))
    cb = guarded.callback if guarded is not None else None
    if cb is not None:
        cb.release()  # the run is over: its Python state need not wait for the JVM's collector (GuardedModel.release)
        if cb.interrupted:
            raise KeyboardInterrupt  # Ctrl-C arrived inside the callback: the run was cancelled, now let the caller know
    return BridgeResult(
        style=raw["style"],
        run_id=raw["run_id"],
        status=raw["status"],
        answer=raw["answer"],
        outcome=raw["outcome"],
        reason=raw["reason"],
        rule=raw["rule"],
        fail_safe=raw["fail_safe"],
        error=raw["error"],
        error_type=raw["error_type"],
        iterations=raw["iterations"],
        wall_ms=raw["wall_ms"],
        stats=None if raw["stats"] is None else BridgeRunStats.model_validate(raw["stats"]),
        events=tuple(cb.events) if cb else (),
        callback_errors=tuple(cb.errors) if cb else (),
    )


def _user_messages(task: Sequence[str], style: str) -> Any:
    messages = list(task)
    if not messages or not all(isinstance(m, str) for m in messages):
        raise ConfigError(f"task must be a string or a non-empty list of user messages (strings), got {task!r:.120}")
    if len(messages) > 1 and style != AgentStyle.AISERVICES.value:
        raise ConfigError(f"a conversation of {len(messages)} user messages needs the aiservices style, not {style!r}")
    out = jclass("java.util.ArrayList")()
    for m in messages:
        out.add(m)
    return out


def run_agent(
    style: AgentStyle | str,
    model: Any,
    task: str | Sequence[str],
    callback: GuardPolicyFn | None = None,
    *,
    guard: bool = True,
    max_model_calls: int | None = None,
    callback_timeout_ms: int = 0,
    options: AgentOptions | None = None,
    **keywords: Unpack[AgentKeywords],
) -> BridgeResult:
    """Guard ``model`` for one run, build the ``style`` agent with ``options`` (:class:`pyguard.AgentOptions`, or the
    same as keywords: tools, run id, task type, the agent's own caps, ...), run ``task``; never raises for the run.

    ``guard=False`` is an unguarded baseline that still counts calls and tokens (observe-only: LangChain4j's own
    caps only; ``callback`` then only records events).
    """
    options = agent_options("run_agent", options, keywords)
    guarded = guard_model(
        model,
        callback,
        run_id=options.run_id,
        task_type=options.task_type,
        max_model_calls=max_model_calls,
        callback_timeout_ms=callback_timeout_ms,
        observe_only=not guard,
    )
    agent = build_agent(style, guarded, options=options)
    return run_built(agent, task, guarded)
