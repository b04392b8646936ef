"""Run trees on LangChain4j's real agentic classes: a supervisor over a stuck sub-agent, a sequence and a loop of
sub-agents, each invocation a child run; budgets compose down the tree; the tree is in the trace and the result."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyguard.base.events import Outcome
from pyguard.engine.tree import TreeLimits
from pyguard.jvm import scripted_model
from pyguard.live.guard import Guard
from pyguard.live.nested import RECOVERY_PREFIX, SubAgent, run_nested, run_nested_unguarded, run_tree
from pyguard.loading import load_runs

TASK = "Where is order 12345? Tell the customer."
ROUNDS = Path(__file__).resolve().parents[1] / "data" / "scenarios" / "rounds.json"
"""An agent that learns something new with every call (no stall before its sixth): it reaches a cap."""


def agents() -> list[SubAgent]:
    return [
        SubAgent("notifier", scripted_model("nested_notifier"), description="Sends messages to the customer"),
        SubAgent("tracker", scripted_model("nested_tracker_stuck"), description="Finds where an order is"),
    ]


def planner():
    return scripted_model("nested_planner_stuck")


def test_a_supervisor_looping_over_a_stuck_sub_agent_is_stopped(jvm, tmp_path):
    result = run_nested(Guard(trace_dir=tmp_path), "supervisor", TASK, agents(), planner=planner(), run_id="sup")
    assert result.outcome is Outcome.STALLED, result.summary()
    # The supervisor's sub-agent invocations are its tool calls: the same request to the same sub-agent with the same
    # result is a repeat; the planner is stopped long before LangChain4j's maxAgentsInvocations (10).
    calls = [c.name for e in result.record.events for c in e.tool_calls]
    assert calls[0] == "notifier" and set(calls[1:]) == {"tracker"}
    assert result.model_calls <= 6
    assert any(d.rule for d in result.decisions if d.stops)
    # Children: one per invocation, in order; each stuck tracker was stalled by its own guard and handed its parent a
    # one-line result; the invocation after the parent's stop made no model call.
    names = [c.run_id for c in result.children]
    assert names[0] == "sup-notifier-1" and names[1] == "sup-tracker-1"
    assert result.children[0].outcome is Outcome.SUCCEEDED
    stalled = [c for c in result.children if c.outcome is Outcome.STALLED]
    assert len(stalled) >= 2
    seen = [o.text for e in result.record.events for o in e.observations if o.tool_name == "tracker"]
    assert seen and all(t.startswith(RECOVERY_PREFIX) for t in seen)
    if result.children[-1].outcome is Outcome.CANCELLED:
        assert result.children[-1].model_calls == 0
    # The children's spend is charged to the parent.
    tree = result.evidence["tree"]
    assert tree["own"]["model_calls"] == result.model_calls
    assert tree["spent"]["model_calls"] == result.tree_model_calls == sum(r.model_calls for r in result.walk())
    assert tree["spent"]["tokens"] == result.tree_total_tokens > result.total_tokens
    # The tree is in the trace: every child's run_start names its parent.
    records = load_runs(tmp_path)
    assert {r.run_id for r in records} == {r.run_id for r in result.walk()}
    tree_ids = run_tree(records)
    assert tree_ids[None] == ["sup"]
    assert sorted(tree_ids["sup"]) == sorted(names)


def test_guarded_supervisor_spends_a_fraction_of_the_unguarded(jvm):
    unguarded = run_nested_unguarded("supervisor", TASK, agents(), planner=planner())
    guarded = run_nested(Guard(), "supervisor", TASK, agents(), planner=planner())
    assert unguarded.error is None and unguarded.model_calls >= 50
    assert guarded.tree_model_calls < unguarded.model_calls / 2
    assert guarded.tree_total_tokens < unguarded.total_tokens / 2


def test_a_child_never_gets_more_than_its_parent_has_left(jvm):
    limits = TreeLimits(model_calls=9)
    result = run_nested(Guard(), "supervisor", TASK, agents(), planner=planner(), limits=limits, run_id="capped")
    assert result.outcome is Outcome.EXPIRED, result.summary()
    assert "tree's budget ran out" in result.reason
    assert result.tree_model_calls <= 9
    spent = 0
    for child in result.children:
        # What the child was given (its limit) is what the parent had left when it started.
        given = child.evidence["tree"]["limits"]["model_calls"]
        assert child.model_calls <= given
        spent += child.model_calls
    assert spent + result.model_calls == result.tree_model_calls == result.evidence["tree"]["spent"]["model_calls"]
    assert any(c.outcome is Outcome.EXPIRED for c in result.children)


def test_each_child_has_its_own_limits_within_the_remainder(jvm):
    result = run_nested(
        Guard(), "supervisor", TASK, agents(), planner=planner(), child_limits=TreeLimits(model_calls=2)
    )
    assert all(c.model_calls <= 2 for c in result.children)
    tracker = [c for c in result.children if c.run_id.endswith("tracker-1")][0]
    assert tracker.outcome is Outcome.EXPIRED and f"run {tracker.run_id!r}'s model_calls limit of 2" in tracker.reason


@pytest.mark.parametrize("kind", ["sequence", "loop"])
def test_a_workflow_of_two_sub_agents_is_a_run_tree(jvm, tmp_path, kind):
    workflow = [
        SubAgent("tracker", scripted_model("nested_tracker_stuck")),
        SubAgent("notifier", scripted_model("nested_notifier")),
    ]
    result = run_nested(
        Guard(trace_dir=tmp_path),
        kind,
        TASK,
        workflow,
        max_loop_iterations=6,
        exit_when_contains="RESOLVED",
        run_id="wf",
    )
    records = {r.run_id: r for r in load_runs(tmp_path)}
    assert records["wf"].start.parent_run_id is None
    assert {records[c.run_id].start.parent_run_id for c in result.children} == {"wf"}
    # The workflow's steps are its sub-agent invocations; every child's model calls are charged to it.
    steps = [c.name for e in result.record.events for c in e.tool_calls]
    assert steps[:2] == ["tracker", "notifier"]
    invocations = [e for e in result.record.events if e.tool_calls]
    assert len(invocations) == len(result.children)
    assert result.end.censored is (result.outcome is not Outcome.SUCCEEDED)
    assert result.evidence["tree"]["spent"]["model_calls"] == result.tree_model_calls
    assert result.children[0].outcome is Outcome.STALLED
    if kind == "sequence":
        assert result.outcome is Outcome.SUCCEEDED, result.summary()
        assert [c.run_id for c in result.children] == ["wf-tracker-1", "wf-notifier-1"]
    else:
        # The loop goes round with the same invocations and the same results: the workflow's engine stops it
        # before LangChain4j's maxIterations (6 rounds, 12 invocations).
        assert result.outcome is Outcome.STALLED, result.summary()
        assert len(result.children) < 12


def test_a_workflow_over_budget_ends_expired_and_the_child_stops_at_the_remainder(jvm):
    workflow = [
        SubAgent("notifier", scripted_model("nested_notifier")),
        SubAgent("tracker", scripted_model(ROUNDS)),  # something new with every call: the remainder ends it, no stall
    ]
    result = run_nested(Guard(), "sequence", TASK, workflow, limits=TreeLimits(model_calls=5))
    assert result.outcome is Outcome.EXPIRED, result.summary()
    notifier, tracker = result.children
    assert notifier.model_calls == 2 and notifier.outcome is Outcome.SUCCEEDED
    assert tracker.evidence["tree"]["limits"]["model_calls"] == 3
    assert tracker.model_calls == 3 and tracker.outcome is Outcome.EXPIRED
    assert result.tree_model_calls == 5


def test_your_own_supervisor_built_with_agentic_services_is_guarded_the_same_way(jvm, tmp_path):
    """The documented path for a user's own system: start_tree, the planner through run.wrap, each sub-agent built
    with AgenticServices.agentBuilder on run.agent_tree().childModel(...) and .listener(run.agent_tree())."""
    import jpype

    from pyguard.live.nested import start_tree

    AgenticServices = jpype.JClass("dev.langchain4j.agentic.AgenticServices")
    Worker = jpype.JClass("dev.pyguard.bridge.nested.SubAgent")  # your own @Agent interface in real code
    run = start_tree(Guard(trace_dir=tmp_path), kind="supervisor", task=TASK, run_id="own")
    tree = run.agent_tree()
    sub_agents = []
    for agent in agents():
        tools = agent.model.newTools()
        builder = (
            AgenticServices.agentBuilder(Worker)
            .name(agent.name)
            .description(agent.description)
            .outputKey(agent.name)
            .chatModel(tree.childModel(agent.name, agent.model))
            .listener(tree)
        )
        builder.tools(tools.explicitTools())
        sub_agents.append(builder.build())
    supervisor = (
        AgenticServices.supervisorBuilder()
        .chatModel(run.wrap(planner()))
        .subAgents(jpype.JArray(jpype.JObject)(sub_agents))
        .errorHandler(tree.errorHandler())
        .build()
    )
    run.call(lambda: str(supervisor.invoke(TASK)))
    result = run.result
    assert result.outcome is Outcome.STALLED, result.summary()
    assert [c.run_id for c in result.children][:2] == ["own-notifier-1", "own-tracker-1"]
    assert {r.start.parent_run_id for r in load_runs(tmp_path) if r.run_id != "own"} == {"own"}


def test_a_token_budget_holds_across_the_tree(jvm):
    result = run_nested(Guard(), "supervisor", TASK, agents(), planner=planner(), limits=TreeLimits(tokens=3000))
    assert result.outcome is Outcome.EXPIRED, result.summary()
    assert "tokens limit of 3000" in result.reason
    spent = result.evidence["tree"]["spent"]["tokens"]
    assert spent == result.tree_total_tokens >= 3000
    # The call that reaches the limit is the last one: the tree overshoots by at most one model call's tokens.
    last_call = max(e.total_tokens for r in result.walk() for e in r.record.events)
    assert spent < 3000 + last_call
