"""The JVM edge of pyguard: the only package that imports jpype (lazily: importing it starts nothing).

Start the JVM explicitly, then build and run guarded LangChain4j agents::

    from pyguard.jvm import start_jvm, scripted_model, run_agent
    start_jvm()                                  # once per process; classpath=[...] adds a user's agent jar
    result = run_agent("aiservices", scripted_model("logistics_incident"), "Where is order 12345?", callback=policy)

``jclass("com.example.MyAgents")`` is ``jpype.JClass`` that says what to call first when the JVM is not running
(``jpype.JClass`` raises a bare ``JVMNotRunning``).

See :mod:`pyguard.jvm.agents` (agents and runs), :mod:`pyguard.jvm.server` (the local OpenAI-compatible server),
:mod:`pyguard.jvm.bootstrap` (JDK and jars), :mod:`pyguard.jvm.classpath` (two versions of one artifact on the
classpath), :mod:`pyguard.jvm.callback` (the Java -> Python crossing) and :mod:`pyguard.jvm.ending` (how a run
ended, read from a Java result or exception).
"""

from typing import Any

from pyguard.base.ending import Ending, RunEnding
from pyguard.jvm import agents
from pyguard.jvm._java import jclass
from pyguard.jvm.agents import (
    BridgeResult,
    BridgeRunStats,
    GuardedModel,
    GuardStopped,
    build_agent,
    demo_tools,
    guard_model,
    run_agent,
    run_built,
    scenario_tools,
    scripted_model,
    tool_set,
)
from pyguard.jvm.bootstrap import JvmInfo, bridge_jars, find_java_home, freeze_startup, jvm_started, start_jvm
from pyguard.jvm.callback import CallbackAdapter
from pyguard.jvm.classpath import ClasspathConflictWarning
from pyguard.jvm.ending import guard_stop_class
from pyguard.jvm.scenarios import load_scenario, scenario_names
from pyguard.jvm.server import LocalServer, openai_chat_model, start_openai_server

__all__ = [
    "BridgeResult",
    "BridgeRunStats",
    "CallbackAdapter",
    "ClasspathConflictWarning",
    "Ending",
    "RunEnding",
    "GuardStopped",
    "GuardedModel",
    "JvmInfo",
    "LocalServer",
    "bridge_jars",
    "build_agent",
    "demo_tools",
    "find_java_home",
    "freeze_startup",
    "guard_model",
    "jclass",
    "jvm_started",
    "load_scenario",
    "openai_chat_model",
    "run_agent",
    "run_built",
    "scenario_names",
    "scenario_tools",
    "scripted_model",
    "start_jvm",
    "start_openai_server",
    "tool_set",
]


def __getattr__(name: str) -> Any:
    """``DEFAULT_MAX_MODEL_CALLS`` is read from Java, its one home (see :mod:`pyguard.jvm.agents`).
    ``GuardStopException`` is Java's ``dev.pyguard.bridge.GuardStopException`` once the JVM runs: what an agent's call
    raises when the guard stops it under ``on_stop="raise"`` (``except pyguard.jvm.GuardStopException as stop:``,
    then ``stop.outcome()``, ``stop.rule()``, ``stop.reason()``, ``stop.runId()``)."""
    if name == "GuardStopException":
        return guard_stop_class()
    if name == "DEFAULT_MAX_MODEL_CALLS":
        return agents.DEFAULT_MAX_MODEL_CALLS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
