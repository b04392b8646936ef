"""The user's own agent code the e2e tests drive, and the providers they drive it with: one home for what
test_java_caller, test_user_agent_counts, test_on_stop_end and test_tool_limits share.

The agents are written apart from pyguard (``dev.usercode``: AiServices agents, their tools and factories, a
decorating ``CountingChatModel`` that sums what the provider billed, the ``Desk`` that holds an agent from Java), as
Java test classes loaded from ``java/target/test-classes``; they are guarded the README's way (``guard.attach``, its
tool hook)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jpype
import pytest

from pyguard.jvm import load_scenario, scripted_model

CLASSES = Path(__file__).resolve().parents[2] / "java" / "target" / "test-classes"
TASK = "Where is order 12345?"


def user_classes(*names: str) -> tuple[Any, ...]:
    """The classes ``dev.usercode.<name>``, through one class loader over the Java test classes (a module's fixture
    calls it once, with the JVM running); the test is skipped when they were not built."""
    for name in names:
        if not (CLASSES / "dev" / "usercode" / f"{name}.class").exists():
            pytest.skip(f"no java/target/test-classes/dev/usercode/{name}.class: build the Java side (mvn package)")
    URL = jpype.JClass("java.net.URL")
    loader = jpype.JClass("java.net.URLClassLoader")(
        [URL(CLASSES.as_uri() + "/")], jpype.JClass("java.lang.Thread").currentThread().getContextClassLoader()
    )
    return tuple(jpype.JClass(f"dev.usercode.{name}", loader=loader) for name in names)


def stuck_model() -> Any:
    """A provider stuck on one lookup (the logistics scenario, never recovering), with token usage."""
    scenario = dict(load_scenario("logistics_incident"))
    scenario["on_reflection"] = {**scenario["on_reflection"], "recover_probability": 0.0}
    return scripted_model(scenario, seed=3)


def informative_model() -> Any:
    """A provider that learns something new with every lookup (no stall before its sixth call): a cap ends its
    turns, not a stall (the logistics tools: ``tests/data/scenarios/rounds.json``)."""
    return scripted_model(Path(__file__).resolve().parents[1] / "data" / "scenarios" / "rounds.json")


def answering_model() -> Any:
    """A provider that looks the order up once, then answers."""
    scenario = dict(load_scenario("convergent"))
    scenario["turns"] = [scenario["turns"][0], {"answer": "Order 12345 is in transit."}]
    return scripted_model(scenario, seed=1)


def counting_agent(
    user: tuple[Any, Any], guard: Any, *, round_trips: int = 100, told: bool = True, task_type: str | None = None
) -> tuple[Any, Any, Any]:
    """``(counting, agent_guard, agent)``: the user's AiServices agent (``UserAgents.create``) on their
    ``CountingChatModel`` around a stuck provider, attached to ``guard`` with its tool hook. ``user``: the classes
    ``CountingChatModel`` and ``UserAgents``; ``told``: whether the guard is told the agent's round-trip cap."""
    Counting, UserAgents = user
    counting = Counting(stuck_model())
    ag = guard.attach(counting, max_tool_calling_round_trips=round_trips if told else None, task_type=task_type)
    return counting, ag, UserAgents.create(ag.model, ag.before_tool_execution(), round_trips)
