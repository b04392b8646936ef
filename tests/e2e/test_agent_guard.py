"""A guard attached to an agent for its lifetime (issue 23): the agent is built once, the way a service builds it, and
every user turn -- every ``chat()`` call, on any thread, for any chat-memory id -- is a guarded run of its own. A model
wrapped for one run and used after it refuses to run instead of running unguarded.

Threads are started together on a barrier and joined; nothing here waits on time."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jpype
import pytest

from pyguard.base.agent_options import AgentOptions
from pyguard.base.events import Outcome
from pyguard.jvm import load_scenario, scripted_model, tool_set
from pyguard.live.agent_guard import UNFINISHED_TURN
from pyguard.live.guard import Guard

TASK = "Where is order 12345?"
ROUNDS = Path(__file__).resolve().parents[1] / "data" / "scenarios" / "rounds.json"
"""An agent that learns something new with every call (no stall before its sixth): it reaches a cap."""


def stubborn_incident() -> dict:
    scenario = dict(load_scenario("logistics_incident"))
    scenario["on_reflection"] = {**scenario["on_reflection"], "recover_probability": 0.0}
    return scenario


def support_agent(chat_model, hooks, scripted, round_trips: int = 25):
    """The user's agent: AiServices built once with one chat memory per user (dev.pyguard.bridge.demo.SupportAgents)."""
    factory = jpype.JClass("dev.pyguard.bridge.demo.SupportAgents")
    before, after = hooks if hooks is not None else (None, None)
    return factory.create(chat_model, tool_set(None, scripted), before, after, round_trips)


def attached(guard: Guard, scripted, **options):
    agent_guard = guard.attach(scripted, task_type="lookup")
    hooks = (agent_guard.before_tool_execution(), agent_guard.after_tool_execution())
    return agent_guard, support_agent(agent_guard.model, hooks, scripted, **options)


def lone_run(scenario) -> int:
    """How many model calls one run of ``scenario`` makes alone (pyguard's own agent, the same policy)."""
    return Guard().run("aiservices", scripted_model(scenario), TASK, task_type="lookup").iterations


def test_an_agent_built_once_is_guarded_on_every_call(jvm):
    scripted = scripted_model("convergent")
    agent_guard, agent = attached(Guard(), scripted)
    answers = [str(agent.chat("alice", f"{TASK} (call {i})")) for i in range(3)]
    results = agent_guard.results
    assert [r.outcome for r in results] == [Outcome.SUCCEEDED] * 3, [r.summary() for r in results]
    assert [r.answer for r in results] == answers
    assert len({r.run_id for r in results}) == 3
    assert [r.record.start.task for r in results] == [f"{TASK} (call {i})" for i in range(3)]
    for r in results:  # each run has its own events, numbered from 1, all its own
        assert [e.index for e in r.record.events] == list(range(1, r.iterations + 1))
        assert {e.run_id for e in r.record.events} == {r.run_id}
    assert agent_guard.open_runs == []
    assert int(scripted.calls()) == sum(r.iterations for r in results)


def test_each_turn_has_its_own_budget_and_a_stop_ends_only_that_turn(jvm):
    scripted = scripted_model(stubborn_incident(), seed=3)
    agent_guard, agent = attached(Guard(), scripted)
    answers = [str(agent.chat(user, TASK)) for user in ("alice", "bob")]  # each stop answered (on_stop="answer")
    first, second = agent_guard.results
    assert [first.answer, second.answer] == answers
    assert first.outcome is second.outcome is Outcome.STALLED, (first.summary(), second.summary())
    assert first.run_id != second.run_id
    assert first.iterations == second.iterations  # the second turn was not charged the first one's calls
    assert first.decisions[-1].rule == second.decisions[-1].rule


def test_concurrent_calls_on_one_agent_are_separate_runs(jvm):
    threads = 6
    scripted = scripted_model("convergent")
    agent_guard, agent = attached(Guard(), scripted)
    start = threading.Barrier(threads)

    def call(i: int) -> str:
        start.wait()  # every thread calls the agent at once
        return str(agent.chat(f"user-{i}", f"{TASK} #{i}"))

    with ThreadPoolExecutor(max_workers=threads) as pool:
        answers = list(pool.map(call, range(threads)))
    results = agent_guard.results
    assert len(results) == threads and len({r.run_id for r in results}) == threads
    alone = lone_run("convergent")
    by_task = {r.record.start.task: r for r in results}
    for i in range(threads):
        r = by_task[f"{TASK} #{i}"]
        assert r.outcome is Outcome.SUCCEEDED and r.answer == answers[i]
        assert r.iterations == alone, r.summary()  # no other thread's model calls landed in this run
        first_user = [o.text for o in r.record.events[0].observations if o.kind == "user"]
        assert first_user == [f"{TASK} #{i}"]


def test_the_agents_own_round_trip_cap_ends_the_turn_and_the_next_turn_is_guarded(jvm):
    scripted = scripted_model(ROUNDS)  # something new with every call: no stall comes before the cap
    agent_guard, agent = attached(Guard(), scripted, round_trips=2)
    with pytest.raises(jpype.JException, match="maxToolCallingRoundTrips"):
        agent.chat("alice", TASK)  # LangChain4j's own cap, before the guard has seen enough to stop
    assert len(agent_guard.open_runs) == 1 and agent_guard.results == []
    with pytest.raises(jpype.JException, match="maxToolCallingRoundTrips"):
        agent.chat("bob", TASK)  # the next turn on this thread ends the last one first
    (first,) = agent_guard.results
    assert first.outcome is Outcome.EXPIRED and UNFINISHED_TURN in first.record.end.reason
    agent_guard.close()
    assert [r.outcome for r in agent_guard.results] == [Outcome.EXPIRED] * 2 and agent_guard.open_runs == []
    with pytest.raises(jpype.JException, match=r"guard was closed.*guard\.attach\(model\)"):
        agent.chat("carol", TASK)


def test_a_model_wrapped_for_one_run_refuses_to_run_after_it(jvm):
    scripted = scripted_model(stubborn_incident(), seed=3)
    with Guard(on_stop="raise").start_run(task=TASK, task_type="lookup") as run:
        agent = support_agent(run.wrap(scripted), (run.before_tool_execution(), None), scripted, round_trips=30)
        with pytest.raises(jpype.JClass("dev.pyguard.bridge.GuardStopException")):  # on_stop="raise": run.call raises
            run.call(lambda: str(agent.chat("alice", TASK)))
    assert run.result.outcome is Outcome.STALLED
    calls = int(scripted.calls())
    # the service keeps its agent after the run: the next call must not run unguarded until LangChain4j's cap
    with pytest.raises(jpype.JException, match=r"has ended.*guard\.attach\(model\)"):
        agent.chat("bob", TASK)
    assert int(scripted.calls()) == calls  # not one model call made


@pytest.mark.parametrize("style", ["aiservices", "agentic", "executor"])
def test_pyguards_own_agents_built_once_make_one_run_per_call(jvm, style):
    agent = Guard().agent(style, scripted_model("convergent"), task_type="lookup")
    results = [agent.chat(f"{TASK} ({i})") for i in range(2)]
    assert [r.outcome for r in results] == [Outcome.SUCCEEDED] * 2, [r.summary() for r in results]
    assert results[0].run_id != results[1].run_id
    assert results[0].iterations == results[1].iterations
    assert [r.record.start.task for r in results] == [f"{TASK} (0)", f"{TASK} (1)"]
    assert agent.agent_guard.results == results


@pytest.mark.parametrize("style", ["aiservices", "executor"])
def test_pyguards_own_agent_serves_threads_as_separate_runs(jvm, style):
    threads = 4
    agent = Guard().agent(style, scripted_model(stubborn_incident(), seed=3), task_type="lookup")
    start = threading.Barrier(threads)  # each thread's stop answered by its own wrap-up

    def call(i: int):
        start.wait()
        return agent.chat(f"{TASK} #{i}")

    with ThreadPoolExecutor(max_workers=threads) as pool:
        results = list(pool.map(call, range(threads)))
    assert [r.outcome for r in results] == [Outcome.STALLED] * threads, [r.summary() for r in results]
    assert len({r.iterations for r in results}) == 1  # each run alone, as if no other ran
    assert [r.record.start.task for r in results] == [f"{TASK} #{i}" for i in range(threads)]


def test_a_stop_ends_with_an_answer_by_default_and_raises_when_asked(jvm):
    scripted = scripted_model(stubborn_incident(), seed=3)
    agent_guard, agent = attached(Guard(), scripted)
    answer = str(agent.chat("alice", TASK))  # no exception: the wrap-up's answer
    (result,) = agent_guard.results
    assert result.outcome is Outcome.STALLED and result.answer == answer and result.answer_source == "wrap_up"
    assert "12345" in answer  # what the run had found (the scenario's on_reflection answer quotes the last result)
    assert result.record.end.wrap_up_tokens and result.record.end.wrap_up_tokens > 0
    assert int(scripted.calls()) == result.iterations + 1  # the wrap-up is one more model call, not an iteration

    raising, agent = attached(Guard(on_stop="raise"), scripted_model(stubborn_incident(), seed=3))
    with pytest.raises(jpype.JException, match="pyguard stopped run"):
        agent.chat("alice", TASK)
    assert raising.results[0].outcome is Outcome.STALLED and raising.results[0].answer_source in (None, "salvaged")


@pytest.mark.parametrize(
    "told",
    [
        {"task_type": "lookup", "max_tool_calling_round_trips": 2},
        {"options": AgentOptions(task_type="lookup", max_tool_calling_round_trips=2)},
        {
            "options": AgentOptions(task_type="lookup", max_tool_calling_round_trips=99),
            "max_tool_calling_round_trips": 2,
        },
    ],
    ids=["keywords", "options", "keyword-wins"],
)
def test_the_agents_own_round_trip_cap_gets_the_wrap_up_when_pyguard_knows_it(jvm, told):
    guard = Guard()
    scripted = scripted_model(stubborn_incident(), seed=3)
    agent_guard = guard.attach(scripted, **told)
    agent = support_agent(agent_guard.model, (agent_guard.before_tool_execution(), None), scripted, round_trips=2)
    answer = str(agent.chat("alice", TASK))  # not LangChain4j's "exceeded 2 tool calling round trips"
    (result,) = agent_guard.results
    assert result.outcome is Outcome.EXPIRED and result.answer == answer and result.answer_source == "wrap_up"
    assert result.iterations == 2 and "maxToolCallingRoundTrips=2" in result.reason
    assert result.record.start.task_type == "lookup"


@pytest.mark.parametrize("style", ["aiservices", "agentic", "executor"])
def test_pyguards_own_agents_answer_at_a_stop(jvm, style):
    result = Guard().run(style, scripted_model(stubborn_incident(), seed=3), TASK, task_type="lookup")
    assert result.outcome is Outcome.STALLED, result.summary()
    assert result.answer_source == "wrap_up" and "12345" in (result.answer or "")


def test_the_executors_own_cap_gets_the_wrap_up(jvm):
    result = Guard().run("executor", scripted_model("convergent"), TASK, max_loop_iterations=2)
    assert result.outcome is Outcome.EXPIRED and result.answer_source == "wrap_up", result.summary()
    raised = Guard(on_stop="raise").run("executor", scripted_model("convergent"), TASK, max_loop_iterations=2)
    assert raised.outcome is Outcome.EXPIRED and raised.answer_source != "wrap_up"


def test_executed_tools_are_counted_beside_requested_ones(jvm):
    scripted = scripted_model("convergent")
    agent_guard, agent = attached(Guard(), scripted)  # with the after-tool hook
    agent.chat("alice", TASK)
    (hooked,) = agent_guard.results
    assert hooked.tool_calls_executed == hooked.tool_calls > 0
    bare = Guard().attach(scripted)  # the agent built without the after-tool hook: executions unknown, not 0
    support_agent(bare.model, (bare.before_tool_execution(), None), scripted).chat("bob", TASK)
    assert bare.results[0].tool_calls_executed is None and bare.results[0].tool_calls == hooked.tool_calls
    for style in ("aiservices", "agentic", "executor"):  # pyguard's own loops always count
        result = Guard().run(style, scripted_model(stubborn_incident(), seed=3), TASK)
        assert result.tool_calls_executed is not None
        assert result.tool_calls_executed == result.tool_calls - len(result.record.events[-1].tool_calls)
