"""Issue 34: conversation budgets. A user's AiServices agent with one chat memory per customer (``dev.usercode.Helpdesk``:
two model calls per turn, a tool call then an answer quoting its result and how many messages its memory holds) is
attached to a guard once; ``[conversation]`` limits hold across every ``chat()`` of one memory id. The turn that
crosses the budget stops there (its own rule, in its result and trace), the turns before it keep their results, and
a later turn of the spent conversation makes no model call. Loaded from ``java/target/test-classes``."""

from __future__ import annotations

import json
from pathlib import Path

import jpype
import pytest

from pyguard.base.events import Outcome
from pyguard.engine import PolicyConfig
from pyguard.engine.config import ToolLimitConfig
from pyguard.engine.conversation_limits import ConversationLimits
from pyguard.live.guard import Guard

pytestmark = pytest.mark.jvm

CLASSES = Path(__file__).resolve().parents[2] / "java" / "target" / "test-classes"


def _load(name: str):
    URL = jpype.JClass("java.net.URL")
    loader = jpype.JClass("java.net.URLClassLoader")(
        [URL(CLASSES.as_uri() + "/")], jpype.JClass("java.lang.Thread").currentThread().getContextClassLoader()
    )
    return jpype.JClass(name, loader=loader)


@pytest.fixture(scope="module")
def helpdesk(jvm):
    if not (CLASSES / "dev" / "usercode" / "Helpdesk.class").exists():
        pytest.skip("no java/target/test-classes/dev/usercode: build the Java side (mvn package)")
    return _load("dev.usercode.Helpdesk"), _load("dev.usercode.Mailer")


def attached(helpdesk, conversation: ConversationLimits, *, on_stop: str = "end", trace_dir=None, memory_ids=True):
    desk, mailer = helpdesk
    provider, tools = desk.Provider(), mailer.Tools()
    guard = Guard(PolicyConfig(conversation=conversation), on_stop=on_stop, trace_dir=trace_dir)
    ag = guard.attach(provider)
    hook = ag.memory_ids() if memory_ids else None
    agent = desk.create(ag.model, ag.tools(tools), ag.before_tool_execution(), hook)
    return ag, agent, provider, tools


def test_the_turn_that_crosses_the_conversation_budget_stops_and_earlier_turns_keep_their_results(helpdesk, tmp_path):
    ag, agent, provider, _ = attached(helpdesk, ConversationLimits(max_model_calls=5), trace_dir=tmp_path)
    first = str(agent.chat("alice", "Where is order 12345?"))
    second = str(agent.chat("alice", "And now?"))
    before = [r.model_copy() for r in ag.results]
    third = str(agent.chat("alice", "And now?"))  # call 5 reaches the budget: its tool never runs
    one, two, three = ag.results
    assert [one, two] == before  # the earlier turns' results untouched
    assert first.startswith("Answer #1 (3 messages in memory)") and second.startswith("Answer #2 (7 messages")
    assert one.outcome is two.outcome is Outcome.SUCCEEDED and one.answer == first and two.answer == second
    assert three.outcome is Outcome.EXPIRED and three.model_calls == 1 and int(provider.calls()) == 5
    assert three.decisions[-1].rule == "conversation_budget:model_calls"
    assert "conversation's budget ran out" in three.reason and "'alice'" in three.reason
    assert three.answer_source == "stop_message" and third == three.answer and "conversation_budget" in third
    assert [r.conversation_id for r in (one, two, three)] == ["alice"] * 3
    conv = three.evidence["conversation"]
    assert conv["spent"]["model_calls"] == 5 and conv["turn"] == 3 and conv["stopped_by"] == three.decisions[-1].rule
    assert conv["limits"] == {"max_model_calls": 5}
    records = [json.loads(line) for line in Path(three.trace_path).read_text().splitlines()]
    assert any(r.get("rule") == "conversation_budget:model_calls" for r in records)  # the decision, in the trace
    assert records[-1]["evidence"]["conversation"]["id"] == "alice"


def test_a_turn_of_a_spent_conversation_makes_no_model_call_and_another_conversation_goes_on(helpdesk):
    ag, agent, provider, _ = attached(helpdesk, ConversationLimits(max_model_calls=4))
    agent.chat("alice", "Where is order 12345?")
    agent.chat("alice", "And now?")  # 4 calls: alice's budget is spent, her second turn answered
    assert [r.outcome for r in ag.results] == [Outcome.SUCCEEDED] * 2
    calls = int(provider.calls())
    stopped = str(agent.chat("alice", "Still there?"))
    late = ag.results[-1]
    assert int(provider.calls()) == calls and late.model_calls == 0  # no model call at all
    assert late.outcome is Outcome.EXPIRED and late.answer == stopped and late.answer_source == "stop_message"
    assert late.decisions[0].rule == "conversation_budget:model_calls"
    assert late.evidence["conversation"]["spent_before_turn"] is True
    answer = str(agent.chat("bob", "Where is order 12345?"))  # bob's conversation has its own budget
    assert answer.startswith("Answer #") and ag.results[-1].outcome is Outcome.SUCCEEDED
    assert ag.results[-1].conversation_id == "bob"
    assert ag.conversation("alice").spent.model_calls == 4 and ag.conversation("bob").spent.model_calls == 2


def test_reset_gives_the_conversation_a_fresh_budget_and_end_forgets_it(helpdesk):
    ag, agent, provider, _ = attached(helpdesk, ConversationLimits(max_model_calls=2))
    agent.chat("alice", "Where is order 12345?")
    assert ag.conversation("alice").exhausted is not None
    spent = ag.conversation("alice").reset()
    assert spent.model_calls == 2 and ag.conversation("alice").exhausted is None
    answer = str(agent.chat("alice", "And now?"))
    assert answer.startswith("Answer #2 (7 messages")  # the chat memory went on; the budget started afresh
    assert ag.results[-1].outcome is Outcome.SUCCEEDED
    ended = ag.conversation("alice").end()
    assert ended.model_calls == 2 and "alice" not in ag.conversations.ids()
    assert str(agent.chat("alice", "Once more?")).startswith("Answer #3")
    assert ag.results[-1].evidence["conversation"]["turn"] == 1  # a new conversation


def test_with_on_stop_raise_the_crossing_turn_raises_the_guards_stop(helpdesk):
    ag, agent, provider, tools = attached(helpdesk, ConversationLimits(max_tool_calls=2), on_stop="raise")
    agent.chat("alice", "Where is order 12345?")
    with pytest.raises(Exception, match="conversation's budget ran out"):
        agent.chat("alice", "And now?")
    result = ag.results[-1]
    assert result.outcome is Outcome.EXPIRED and result.decisions[-1].rule == "conversation_budget:tool_calls"


def test_a_tokens_budget_counts_what_the_provider_reported(helpdesk):
    ag, agent, provider, _ = attached(helpdesk, ConversationLimits(max_tokens=330))  # 110 tokens a call
    agent.chat("alice", "Where is order 12345?")
    agent.chat("alice", "And now?")
    result = ag.results[-1]
    assert result.outcome is Outcome.EXPIRED and result.decisions[-1].rule == "conversation_budget:tokens"
    assert result.evidence["conversation"]["spent"]["tokens"] == 330 and int(provider.calls()) == 3


def test_without_memory_ids_a_conversation_is_the_thread(helpdesk):
    ag, agent, provider, _ = attached(helpdesk, ConversationLimits(max_model_calls=3), memory_ids=False)
    agent.chat("alice", "Where is order 12345?")
    agent.chat("bob", "Where is order 12345?")  # same thread: the same conversation for the guard
    first, second = ag.results
    assert first.conversation_id == second.conversation_id == ag.conversation().id
    assert second.outcome is Outcome.EXPIRED and second.model_calls == 1


def test_a_conversation_tool_limit_blocks_the_call_over_it_across_turns(helpdesk):
    limits = ConversationLimits(tool_limits={"send_email": ToolLimitConfig(limit=2)})
    ag, agent, provider, tools = attached(helpdesk, limits)
    answers = [str(agent.chat("alice", f"mail update {i}")) for i in range(3)]
    assert int(tools.sent.get()) == 2  # the third mail of the conversation was not sent
    assert answers[1].endswith("sent #2")
    assert "[pyguard] not run: the limit of 2 calls of send_email per conversation is reached" in answers[2]
    assert [r.outcome for r in ag.results] == [Outcome.SUCCEEDED] * 3  # exit continue: the turn went on
    assert ag.results[-1].tool_calls_blocked == {"send_email": 1} and ag.results[0].tool_calls_blocked == {}
    agent.chat("bob", "mail hello")
    assert int(tools.sent.get()) == 3  # bob's conversation has its own count


def test_conversation_limits_round_trip_through_toml(tmp_path):
    path = tmp_path / "pyguard.toml"
    path.write_text(
        "[conversation]\nmax_model_calls = 40\nmax_tokens = 200000\nmax_cost = 1.5\n"
        '[conversation.tool_limits]\nsend_email = { limit = 3, exit = "end" }\n'
    )
    config = PolicyConfig.from_toml(path)
    assert config.conversation == ConversationLimits(
        max_model_calls=40,
        max_tokens=200_000,
        max_cost=1.5,
        tool_limits={"send_email": ToolLimitConfig(limit=3, exit="end")},
    )
    assert PolicyConfig.from_dict(config.model_dump(mode="json")) == config
    with pytest.raises(Exception, match="max_calls"):
        PolicyConfig.from_dict({"conversation": {"max_calls": 3}})
    with pytest.raises(Exception, match="max_model_calls"):
        ConversationLimits(max_model_calls=0)


def test_a_conversation_tool_limit_with_exit_end_ends_the_turn_that_crosses_it(helpdesk):
    limits = ConversationLimits(tool_limits={"send_email": ToolLimitConfig(limit=2, exit="end")})
    ag, agent, provider, tools = attached(helpdesk, limits, on_stop="answer")  # exit end, whatever on_stop
    agent.chat("alice", "mail one")
    agent.chat("alice", "mail two")
    third = str(agent.chat("alice", "mail three"))
    result = ag.results[-1]
    assert int(tools.sent.get()) == 2 and int(provider.calls()) == 5  # no model call after the blocked mail
    assert result.outcome is Outcome.EXPIRED and result.answer == third and result.answer_source == "stop_message"
    assert "the limit of 2 calls of send_email per conversation is reached (exit end)" in result.reason
    assert result.tool_calls_blocked == {"send_email": 1}


def test_check_reports_the_recorded_turns_per_conversation(helpdesk, tmp_path):
    from click.testing import CliRunner

    from pyguard.cli.check import check

    ag, agent, provider, _ = attached(helpdesk, ConversationLimits(max_model_calls=3), trace_dir=tmp_path)
    agent.chat("alice", "Where is order 12345?")
    agent.chat("bob", "Where is order 12345?")
    agent.chat("alice", "And now?")  # alice's call 3 reaches her budget
    stopped = ag.results[-1]
    out = CliRunner().invoke(check, [str(tmp_path), "--by-conversation", "--json"])
    assert out.exit_code in (0, 1), out.output
    rows = {c["conversation"]: c for c in json.loads(out.output)["conversations"]["conversations"]}
    assert rows["alice"]["runs"] == 2 and rows["alice"]["model_calls"] == 3
    assert rows["alice"]["stopped_by"] == "conversation_budget:model_calls"
    assert rows["alice"]["stopped_run"] == stopped.run_id
    assert rows["alice"]["outcomes"] == {"succeeded": 1, "expired": 1}
    assert rows["bob"] == {**rows["bob"], "runs": 1, "model_calls": 2, "stopped_by": None, "tokens": 220}
    text = CliRunner().invoke(check, [str(tmp_path), "--by-conversation"])
    assert "per conversation" in text.output and "conversation_budget:model_calls" in text.output


@pytest.mark.parametrize("style", ["aiservices", "agentic", "executor"])
def test_the_same_conversation_budget_on_every_agent_style(jvm, style):
    from pyguard.jvm import scripted_model

    first_run = Guard().agent(style, scripted_model("convergent")).chat("Where is order 12345?")
    calls = first_run.model_calls  # what one turn of this style makes alone
    budget = ConversationLimits(max_model_calls=calls + 1)
    agent = Guard(PolicyConfig(conversation=budget), on_stop="end").agent(style, scripted_model("convergent"))
    one = agent.chat("Where is order 12345?")
    two = agent.chat("Where is order 12345?")  # the same thread: the same conversation
    assert one.outcome is Outcome.SUCCEEDED and one.model_calls == calls
    assert two.outcome is Outcome.EXPIRED and two.model_calls == 1, two.summary()
    assert two.decisions[-1].rule == "conversation_budget:model_calls" and two.answer_source == "stop_message"
    assert one.conversation_id == two.conversation_id == agent.agent_guard.conversation().id
    three = agent.chat("Where is order 12345?")
    assert three.model_calls == 0 and three.outcome is Outcome.EXPIRED
