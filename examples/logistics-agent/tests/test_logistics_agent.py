"""The example agent under pyguard: it converges, a loop is caught, and every outcome is honest.

Each test runs twice: with the scripted model in-process, and over HTTP through the agent's production client
against a local OpenAI-compatible server playing the same scenario.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import TASK, ask

from pyguard.testing import (
    assert_answer_contains,
    assert_iterations_at_most,
    assert_max_repeats,
    assert_never_stalled,
    assert_outcome,
    assert_succeeded,
    assert_tokens_under,
)


@pytest.mark.pyguard(task_type="lookup")
def test_the_agent_converges_within_four_calls(run_agent, chat_model, tools):
    result = run_agent(chat_model("scenarios/reroute.json"))
    assert_succeeded(result, within=4)
    assert_never_stalled(result)
    assert_max_repeats(result, 1)
    assert_tokens_under(result, 5_000)
    assert_answer_contains(result, "BlueLine")
    assert tools.calls() == result.tool_calls == 3  # the agent's real tools ran, once per requested call


@pytest.mark.pyguard(task_type="lookup")
def test_a_status_loop_is_caught_long_before_langchain4j_s_own_cap(run_agent, chat_model, agent_factory):
    result = run_agent(chat_model("scenarios/status_loop.json"))
    assert_outcome(result, "stalled")
    assert_iterations_at_most(result, 10)
    assert agent_factory.MAX_ROUND_TRIPS == 25
    assert result.reflections, "the guard reflects once before it stops the run"
    with pytest.raises(AssertionError, match="outcome is 'stalled'"):
        assert_succeeded(result)  # a stopped run is never reported as a success


@pytest.mark.pyguard(task_type="lookup")
def test_a_reflection_brings_a_looping_agent_back(run_agent, chat_model):
    result = run_agent(chat_model("scenarios/status_loop_recovers.json"))
    assert_succeeded(result, within=10)
    assert_never_stalled(result, allow_reflections=True)
    assert result.reflections
    assert_answer_contains(result, "delayed")


@pytest.mark.pyguard(task_type="lookup", max_iterations=3)
def test_a_hard_cap_ends_the_run_as_expired(run_agent, chat_model, tools):
    result = run_agent(chat_model("scenarios/reroute.json"))
    assert_outcome(result, "expired")
    assert result.iterations == 3
    # the guard's tool hook kept the third response's tool from running: only the first two responses' tools ran
    requested = [len(e.tool_calls) for e in result.record.events]
    assert requested[-1] >= 1 and tools.calls() == sum(requested[:-1]), (requested, tools.calls())


@pytest.mark.pyguard(task_type="lookup")
def test_the_agent_built_once_is_guarded_on_every_call_and_thread(guarded_agent, chat_model):
    agent_guard, agent = guarded_agent(chat_model("scenarios/status_loop.json"))  # the service's one agent
    threads = 3
    start = threading.Barrier(threads)

    def call(_):
        start.wait()  # the calls arrive together
        return ask(agent, TASK)

    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(call, range(threads)))
    ask(agent, TASK)  # and one more after them
    results = agent_guard.results
    assert len(results) == threads + 1 and len({r.run_id for r in results}) == threads + 1
    for result in results:  # every call caught on its own, long before LangChain4j's cap of 25 round trips
        assert_outcome(result, "stalled")
        assert_iterations_at_most(result, 10)
    assert len({r.iterations for r in results}) == 1
