"""Fixtures of the example's tests: the agent under test, built by its own Java factory around a given model."""

from __future__ import annotations

import pytest

TASK = "Order 12345 is late. Why, and what can we do about it?"


@pytest.fixture
def agent_factory(pyguard_jvm):
    """The Java class com.example.logistics.LogisticsAgentFactory (on the classpath through pytest.ini)."""
    import jpype

    return jpype.JClass("com.example.logistics.LogisticsAgentFactory")


@pytest.fixture
def tools(pyguard_jvm):
    """A fresh LogisticsTools instance: the agent's real @Tool methods, counting their calls."""
    import jpype

    return jpype.JClass("com.example.logistics.LogisticsTools")()


@pytest.fixture(params=["scripted", "openai"])
def chat_model(request, pyguard_scripted_model, pyguard_openai_server, agent_factory):
    """Factory: scenario -> the ChatModel the agent gets, once scripted in-process, once over HTTP through the
    agent's own production client (OpenAiChatModel) pointed at a local OpenAI-compatible server."""
    if request.param == "scripted":
        return pyguard_scripted_model

    def over_http(scenario):
        return agent_factory.openAiModel(pyguard_openai_server(scenario), "test-key", "scripted")

    return over_http


@pytest.fixture
def guarded_agent(pyguard_guard, agent_factory, tools):
    """Factory: model -> (agent_guard, agent). The agent is built once, as the service builds it, around a guard
    attached for its lifetime: every ``agent.chat(...)`` is a guarded run of its own (``agent_guard.results``)."""

    def build(model):
        agent_guard = pyguard_guard.attach(model)
        # the guard's tool hook (a Consumer<BeforeToolExecution>): a stop keeps the last response's tools from running
        agent = agent_factory.create(agent_guard.model, tools, agent_guard.before_tool_execution())
        return agent_guard, agent

    return build


@pytest.fixture
def run_agent(guarded_agent):
    """Run the agent once on a task with a model, guarded; returns the run's RunResult."""

    def run(model, task=TASK):
        agent_guard, agent = guarded_agent(model)
        ask(agent, task)
        return agent_guard.results[-1]

    return run


def ask(agent, task=TASK):
    """The agent's answer; None when the guard stopped the run (its GuardStopException)."""
    import jpype

    try:
        return str(agent.chat(task))
    except jpype.JException as exc:
        if "pyguard stopped run" not in str(exc):
            raise
        return None
