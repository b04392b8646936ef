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
def run_agent(pyguard_guard, agent_factory, tools):
    """Run the agent on a task with a model, guarded; returns the RunResult."""

    def run(model, task=TASK):
        with pyguard_guard.start_run(task=task) as run:
            # the guard's tool hook (a Consumer<BeforeToolExecution>): a stop keeps the last response's tools from running
            agent = agent_factory.create(run.wrap(model), tools, run.before_tool_execution())
            run.call(lambda: str(agent.chat(task)))
        return run.result

    return run
