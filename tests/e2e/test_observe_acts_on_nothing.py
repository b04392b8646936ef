"""Observe mode acts on none of the guard's decisions (README, "Rolling out"), and the actuators outside the engine are
no exception. In observe mode a call over its tool's limit runs, a spent conversation's turn runs, a run tree over its
budget goes on, and no run is stopped; the footer records what each would have done (``evidence.tool_limits.would_block``;
the stop as ``evidence.observed_stop``). Reflect blocks a tool call but never stops. On users' own AiServices agents
(``dev.usercode.Mailer``: three mails, a lookup, then an answer quoting every tool result; ``dev.usercode.Helpdesk``),
loaded from ``java/target/test-classes``, and LangChain4j's agentic workflows and supervisor."""

from __future__ import annotations

from pathlib import Path

import jpype
import pytest

from pyguard.base.events import Outcome
from pyguard.engine import CapsConfig, PolicyConfig
from pyguard.engine.config import ToolLimitConfig
from pyguard.engine.conversation_limits import ConversationLimits
from pyguard.live.guard import Guard

pytestmark = pytest.mark.jvm

CLASSES = Path(__file__).resolve().parents[2] / "java" / "target" / "test-classes"


@pytest.fixture(scope="module")
def mailer(jvm):
    if not (CLASSES / "dev" / "usercode" / "Mailer.class").exists():
        pytest.skip("no java/target/test-classes/dev/usercode: build the Java side (mvn package)")
    URL = jpype.JClass("java.net.URL")
    loader = jpype.JClass("java.net.URLClassLoader")(
        [URL(CLASSES.as_uri() + "/")], jpype.JClass("java.lang.Thread").currentThread().getContextClassLoader()
    )
    return jpype.JClass("dev.usercode.Mailer", loader=loader)


def _policy(exit: str, mode: str = "observe") -> PolicyConfig:
    return PolicyConfig(mode=mode, caps=CapsConfig(tool_limits={"send_email": ToolLimitConfig(limit=2, exit=exit)}))


@pytest.mark.parametrize("exit", ["continue", "end", "error"])
def test_observe_runs_every_call_and_records_what_the_limit_would_have_done(mailer, exit):
    tools, provider = mailer.Tools(), mailer.Provider()
    with Guard(_policy(exit)).start_run(task="Tell the customer") as run:
        agent = mailer.create(run.wrap(provider), run.tools(tools), run.before_tool_execution())
        answer = run.call(lambda: str(agent.chat("Keep the customer posted")))
    result = run.result
    assert int(tools.sent.get()) == 3  # the third mail was sent: observe blocks nothing
    assert answer.split(" | ")[1:4] == ["sent #1", "sent #2", "sent #3"]
    assert int(provider.calls()) == 5 == result.model_calls and result.outcome is Outcome.SUCCEEDED
    assert result.answer == answer and result.answer_source == "model"
    assert result.tool_calls_blocked == {}
    limits = result.evidence["tool_limits"]
    assert limits["blocked"] == {} and limits["would_block"] == {"send_email": 1}, limits
    observed = result.evidence.get("observed_stop")
    if exit == "continue":
        assert observed is None  # a continue limit never stops a run
    else:
        assert observed is not None and observed["outcome"] == "expired" and observed["mode"] == "observe"
        assert observed["rule"] == "tool_limit:send_email" and observed["iteration"] == 3, observed
        assert "the limit of 2 calls of send_email per run" in observed["reason"]


def test_observe_keeps_an_attached_agents_conversation_limit_record_only(mailer):
    config = PolicyConfig(
        mode="observe",
        conversation=ConversationLimits(tool_limits={"send_email": ToolLimitConfig(limit=2, exit="end")}),
    )
    provider, tools = mailer.Provider(), mailer.Tools()
    ag = Guard(config).attach(provider)
    agent = mailer.create(ag.model, ag.tools(tools), ag.before_tool_execution())
    answer = str(agent.chat("Keep the customer posted"))
    result = ag.results[-1]
    assert int(tools.sent.get()) == 3 and int(provider.calls()) == 5 and answer.startswith("Done.")
    assert result.outcome is Outcome.SUCCEEDED and result.tool_calls_blocked == {}
    assert result.evidence["observed_stop"]["rule"] == "tool_limit:send_email"


def test_enforce_still_blocks(mailer):
    tools, provider = mailer.Tools(), mailer.Provider()
    with Guard(_policy("continue", mode="enforce")).start_run(task="Tell the customer") as run:
        agent = mailer.create(run.wrap(provider), run.tools(tools), run.before_tool_execution())
        run.call(lambda: str(agent.chat("Keep the customer posted")))
    assert int(tools.sent.get()) == 2 and run.result.tool_calls_blocked == {"send_email": 1}
    assert "would_block" not in run.result.evidence["tool_limits"]


def test_reflect_blocks_the_call_but_never_stops_the_run(mailer):
    tools, provider = mailer.Tools(), mailer.Provider()
    with Guard(_policy("end", mode="reflect")).start_run(task="Tell the customer") as run:
        agent = mailer.create(run.wrap(provider), run.tools(tools), run.before_tool_execution())
        answer = run.call(lambda: str(agent.chat("Keep the customer posted")))
    result = run.result
    assert int(tools.sent.get()) == 2 and int(provider.calls()) == 5  # blocked, and the run went on
    assert answer.split(" | ")[3].startswith("[pyguard] not run: the limit of 2 calls of send_email per run")
    assert result.outcome is Outcome.SUCCEEDED and result.tool_calls_blocked == {"send_email": 1}
    assert result.evidence["observed_stop"]["rule"] == "tool_limit:send_email"


def test_observe_lets_a_spent_conversation_go_on_and_records_the_stop(jvm):
    """A conversation budget is an actuator too: in observe mode a turn of a spent conversation still runs (its model
    calls made), and the stop the budget would have made before its first call is recorded as its observed stop."""
    if not (CLASSES / "dev" / "usercode" / "Helpdesk.class").exists():
        pytest.skip("no java/target/test-classes/dev/usercode: build the Java side (mvn package)")
    URL = jpype.JClass("java.net.URL")
    loader = jpype.JClass("java.net.URLClassLoader")(
        [URL(CLASSES.as_uri() + "/")], jpype.JClass("java.lang.Thread").currentThread().getContextClassLoader()
    )
    desk = jpype.JClass("dev.usercode.Helpdesk", loader=loader)
    mailer = jpype.JClass("dev.usercode.Mailer", loader=loader)
    provider = desk.Provider()
    ag = Guard(PolicyConfig(mode="observe", conversation=ConversationLimits(max_model_calls=2))).attach(provider)
    agent = desk.create(ag.model, ag.tools(mailer.Tools()), ag.before_tool_execution(), ag.memory_ids())
    first = str(agent.chat("alice", "Where is order 12345?"))  # 2 calls: the budget is spent at its end
    second = str(agent.chat("alice", "And now?"))
    one, two = ag.results
    assert first.startswith("Answer #1") and second.startswith("Answer #2"), (first, second)
    assert int(provider.calls()) == 4 and two.model_calls == 2  # the second turn made its calls
    assert one.outcome is two.outcome is Outcome.SUCCEEDED
    assert two.evidence["observed_stop"]["rule"] == "conversation_budget:model_calls", two.evidence
    assert two.evidence["observed_stop"]["mode"] == "observe"
    assert two.evidence["observed_stop"]["iteration"] == 0  # enforced, the turn makes no model call
    from pyguard.check.outcomes import facts_from_footer

    facts = facts_from_footer(two.record)  # pyguard check counts the turn as the stop it would have been
    assert facts.outcome is Outcome.EXPIRED, facts
    conv = two.evidence["conversation"]  # the budget did not stop the turn: it would have
    assert "stopped_by" not in conv and conv["would_stop_by"] == "conversation_budget:model_calls", conv


def _workflow():
    from pyguard.jvm import scripted_model
    from pyguard.live.nested import SubAgent

    return [
        SubAgent("notifier", scripted_model("nested_notifier")),
        SubAgent("tracker", scripted_model("nested_tracker_stuck")),
    ]


def _informative_workflow():
    """The notifier, then a tracker that learns something new with every call and answers after six: the tree's
    budget, not a stall, is what enforcing stops it at."""
    import json

    from pyguard.jvm import scripted_model
    from pyguard.live.nested import SubAgent

    rounds = json.loads((Path(__file__).resolve().parents[1] / "data" / "scenarios" / "rounds.json").read_text())
    tracker = {k: v for k, v in rounds.items() if k != "loop_from"}
    tracker["turns"] = [
        *rounds["turns"],
        {"answer": "Order 12345 is in transit; its carrier expects it on 2024-03-06."},
    ]
    return [SubAgent("notifier", scripted_model("nested_notifier")), SubAgent("tracker", scripted_model(tracker))]


def test_observe_lets_a_tree_over_its_budget_go_on_and_records_the_stop(jvm):
    """A run tree's budget is an actuator too (tests/e2e/test_nested.py: enforced, this tree ends expired at 5 calls
    with the tracker stopped at the remainder): observed, the tracker runs to its own end and the stop is recorded."""
    from pyguard.engine.tree import TreeLimits
    from pyguard.live.nested import run_nested

    task = "Where is order 12345? Tell the customer."
    result = run_nested(
        Guard(mode="observe"), "sequence", task, _informative_workflow(), limits=TreeLimits(model_calls=5)
    )
    notifier, tracker = result.children
    assert result.outcome is Outcome.SUCCEEDED and tracker.outcome is Outcome.SUCCEEDED, result.summary()
    assert result.tree_model_calls > 5 and tracker.model_calls > 3
    assert tracker.evidence["observed_stop"]["rule"] == "tree_budget:model_calls"
    assert tracker.evidence["observed_stop"]["iteration"] == 3  # where enforcing stopped it
    assert result.evidence["observed_stop"]["rule"] == "tree_budget:model_calls"


def test_observe_cancels_no_sub_agent_of_a_supervisor_it_would_have_stopped(jvm):
    from pyguard.jvm import scripted_model
    from pyguard.live.nested import SubAgent, run_nested, run_nested_unguarded

    def agents():
        return [
            SubAgent("notifier", scripted_model("nested_notifier"), description="Sends messages to the customer"),
            SubAgent("tracker", scripted_model("nested_tracker_stuck"), description="Finds where an order is"),
        ]

    task = "Where is order 12345? Tell the customer."
    unguarded = run_nested_unguarded("supervisor", task, agents(), planner=scripted_model("nested_planner_stuck"))
    observed = run_nested(
        Guard(mode="observe"), "supervisor", task, agents(), planner=scripted_model("nested_planner_stuck")
    )
    assert observed.evidence["observed_stop"]["outcome"] in ("stalled", "expired")  # enforcing would have stopped it
    assert [c.outcome for c in observed.children if c.outcome is Outcome.CANCELLED] == []
    assert observed.tree_model_calls == unguarded.model_calls, (observed.summary(), unguarded.model_calls)


def test_observe_holds_no_child_to_the_trees_remainder_by_the_java_fail_safe(jvm):
    """Enforced, a child's Java fail-safe is the tree's remainder plus a margin; observed, the tree stops nothing, so a
    child left 1 call of a 3-call tree makes every call it makes under a roomy tree."""
    from pyguard.engine.tree import TreeLimits
    from pyguard.live.nested import run_nested

    task = "Where is order 12345? Tell the customer."
    roomy = run_nested(Guard(mode="observe"), "sequence", task, _workflow(), limits=TreeLimits(model_calls=100))
    tight = run_nested(Guard(mode="observe"), "sequence", task, _workflow(), limits=TreeLimits(model_calls=3))
    assert tight.children[1].model_calls == roomy.children[1].model_calls > 1 + 5, tight.summary()
    assert tight.children[1].outcome is roomy.children[1].outcome is Outcome.SUCCEEDED


def test_observe_records_a_child_the_tree_would_have_stopped_before_its_first_call(jvm):
    from pyguard.check.outcomes import facts_from_footer
    from pyguard.engine.tree import TreeLimits
    from pyguard.live.nested import run_nested

    task = "Where is order 12345? Tell the customer."
    result = run_nested(Guard(mode="observe"), "sequence", task, _workflow(), limits=TreeLimits(model_calls=2))
    tracker = result.children[1]  # the notifier spent the tree's 2 calls: enforced, the tracker makes none
    assert tracker.model_calls > 0 and tracker.outcome is Outcome.SUCCEEDED
    assert tracker.evidence["observed_stop"]["iteration"] == 0, tracker.evidence["observed_stop"]
    assert facts_from_footer(tracker.record).outcome is Outcome.EXPIRED  # pyguard check counts the stop
