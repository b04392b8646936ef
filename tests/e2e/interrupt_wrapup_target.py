"""Runs to interrupt with a real SIGINT (run as a subprocess by test_interrupts_everywhere.py; not a test module).

Usage: python interrupt_wrapup_target.py MODE TRACE_DIR
MODE "attach": a user's AiServices agent attached with ``guard.attach``, ``agent.chat()`` on the main thread; the
provider's second call prints READY and waits (the SIGINT lands during a model call). MODE "run" / "start_run":
``guard.run`` / ``guard.start_run`` + ``run.call``; the guard stops the stuck agent and its wrap-up call prints READY and
waits for good (the SIGINT lands mid-wrap-up, which never ends: only the bound on a Ctrl-C lets it land). Each waits on
an event, never on time. Prints one JSON line (how the run ended, what is still open) and exits 130 on Ctrl-C."""

from __future__ import annotations

import json
import os
import sys
import threading

import jpype
from jpype import JImplements, JOverride

from pyguard.jvm import load_scenario, scripted_model, start_jvm
from pyguard.live.guard import Guard

start_jvm()
mode, trace_dir = sys.argv[1], sys.argv[2]
never = threading.Event()


@JImplements("dev.langchain4j.model.chat.ChatModel")
class Provider:
    """The user's provider: a stuck scripted agent; it waits at the call the test interrupts."""

    def __init__(self, inner) -> None:  # noqa: ANN001
        self.inner = inner
        self.calls = 0

    @JOverride
    def chat(self, request):  # noqa: ANN001, ANN201
        self.calls += 1
        wrap_up = not request.toolSpecifications()
        if (mode == "attach" and self.calls == 2) or (mode != "attach" and wrap_up):
            print("READY", flush=True)
            while not never.wait(0.05):  # the interrupt lands here (attach: this is the main thread)
                pass
        return self.inner.chat(request)


scenario = dict(load_scenario("logistics_incident"))
scenario["on_reflection"] = {**scenario["on_reflection"], "recover_probability": 0.0}
ChatModel = jpype.JClass("dev.langchain4j.model.chat.ChatModel")
provider = jpype.JObject(Provider(scripted_model(scenario, seed=3)), ChatModel)
# the callback deadline only a guard against a hang (tests/conftest.py: HANG_GUARD_MS)
guard = Guard(trace_dir=trace_dir, callback_timeout_ms=600_000)
AiServices = jpype.JClass("dev.langchain4j.service.AiServices")
Assistant = jpype.JClass("dev.pyguard.bridge.ToolAssistant")
tools = jpype.JClass("dev.pyguard.bridge.demo.LogisticsTools")()
out: dict = {}
try:
    if mode == "attach":
        ag = guard.attach(provider)
        agent = AiServices.builder(Assistant).chatModel(ag.model).tools(tools)
        agent = agent.beforeToolExecution(ag.before_tool_execution()).build()
        try:
            agent.chat("Where is order 12345?")
        finally:
            out["open_runs"] = ag.open_runs
            out["results"] = [r.outcome.value for r in ag.results]
    elif mode == "start_run":
        with guard.start_run(task="Where is order 12345?", run_id="interrupted") as run:
            agent = AiServices.builder(Assistant).chatModel(run.wrap(provider)).tools(tools).build()
            run.call(lambda: str(agent.chat("Where is order 12345?")))
    else:
        guard.run("aiservices", provider, "Where is order 12345?", tools="logistics", run_id="interrupted")
    print(json.dumps({"interrupted": False, **out}), flush=True)
    os._exit(3)
except KeyboardInterrupt:
    out["active_runs"] = len(guard.active_runs)
    print(json.dumps({"interrupted": True, **out}), flush=True)
    os._exit(130)  # the provider's thread may still wait in its model call: leave without joining it
