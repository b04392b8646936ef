"""Observe mode acts on none of the guard's decisions (README, "Rolling out"): a per-tool limit is no exception. In
observe mode a call over its tool's limit runs, the run is not stopped whatever the limit's exit, and the footer
records what the limit would have done (``evidence.tool_limits.would_block``, and for an exit ``end``/``error`` the
stop as ``evidence.observed_stop``). On a user's own AiServices agent (``dev.usercode.Mailer``: three mails, a lookup,
then an answer quoting every tool result), loaded from ``java/target/test-classes``."""

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
    conv = two.evidence["conversation"]  # the budget did not stop the turn: it would have
    assert "stopped_by" not in conv and conv["would_stop_by"] == "conversation_budget:model_calls", conv
