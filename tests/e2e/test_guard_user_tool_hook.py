"""A user's own AiServices agent gets the guard's tool hook typed only with LangChain4j's interfaces (issue 13): with
it, a stop keeps the last requested tool from running; the agent is built here the way user code builds it, with
LangChain4j's builder and no pyguard type."""

from __future__ import annotations

import jpype
import pytest

from pyguard.base.errors import RunError
from pyguard.base.events import Outcome
from pyguard.jvm import load_scenario, scripted_model
from pyguard.live.guard import Guard

TASK = "Where is order 12345?"


def stubborn_incident() -> dict:
    scenario = dict(load_scenario("logistics_incident"))
    scenario["on_reflection"] = {**scenario["on_reflection"], "recover_probability": 0.0}
    return scenario


def run_users_agent(with_hook: bool):
    AiServices = jpype.JClass("dev.langchain4j.service.AiServices")
    Assistant = jpype.JClass("dev.pyguard.bridge.ToolAssistant")  # stands for the user's own interface
    tools = jpype.JClass("dev.pyguard.bridge.demo.LogisticsTools")()
    with Guard(on_stop="raise").start_run(task=TASK, task_type="lookup") as run:  # the hook is what keeps tools
        model = scripted_model(stubborn_incident(), seed=3)
        builder = AiServices.builder(Assistant).chatModel(run.wrap(model))
        builder = builder.tools(tools)
        if with_hook:
            hook = run.before_tool_execution()
            assert isinstance(hook, jpype.JClass("java.util.function.Consumer"))
            builder = builder.beforeToolExecution(hook).afterToolExecution(run.after_tool_execution())
        agent = builder.build()
        with pytest.raises(jpype.JClass("dev.pyguard.bridge.GuardStopException")):  # on_stop="raise"
            run.call(lambda: str(agent.chat(TASK)))
    assert run.guarded_model(model).stats().tool_executions == (int(tools.totalCalls()) if with_hook else 0)
    # executed beside requested: counted where the after-tool hook is wired, None (not 0) where it is not
    assert run.result.tool_calls_executed == (int(tools.totalCalls()) if with_hook else None)
    return run, int(tools.calls("get_shipment_status"))


def test_a_stop_keeps_the_last_requested_tool_of_a_users_agent_from_running(jvm):
    run, ran = run_users_agent(with_hook=True)
    result = run.result
    assert result.outcome is Outcome.STALLED, result.summary()
    requested = result.tool_calls
    last = result.record.events[-1]
    assert last.tool_calls, "the stopped response asked for a tool"
    assert ran == requested - len(last.tool_calls), (ran, requested)  # every tool ran but the stopped response's
    assert result.tool_calls_executed == ran < result.tool_calls

    unhooked, ran_anyway = run_users_agent(with_hook=False)
    assert unhooked.result.outcome is Outcome.STALLED
    assert ran_anyway == unhooked.result.tool_calls == ran + 1  # without the hook, the last tool still ran


def test_the_hook_needs_the_model_wrapped_first(jvm):
    run = Guard().start_run(task=TASK)
    with pytest.raises(RunError, match=r"call run.wrap\(model\) before run.before_tool_execution\(\)"):
        run.before_tool_execution()
    run.abandon()
