"""Issue 34: a per-tool limit with ``exit = "continue"`` blocks only that tool's calls over the limit; the model reads
why, the run goes on, a later call of another tool runs. On a user's own AiServices agent (``dev.usercode.Mailer``:
its tools count the mails really sent; its provider sends three, looks an order up, then answers quoting every tool
result), loaded from ``java/target/test-classes``."""

from __future__ import annotations

import pytest

from pyguard.base.errors import ConfigError
from pyguard.base.events import Outcome
from pyguard.engine import CapsConfig, PolicyConfig
from pyguard.engine.config import ToolLimitConfig
from pyguard.live.guard import Guard
from tests.e2e._agents import user_classes

pytestmark = pytest.mark.jvm

LIMITED = PolicyConfig(caps=CapsConfig(tool_limits={"send_email": ToolLimitConfig(limit=2)}))


@pytest.fixture(scope="module")
def mailer(jvm):
    (mailer,) = user_classes("Mailer")
    return mailer


def test_the_third_send_email_is_blocked_and_the_run_goes_on_to_answer(mailer):
    tools, provider = mailer.Tools(), mailer.Provider()
    with Guard(LIMITED).start_run(task="Tell the customer") as run:
        wrapped = run.wrap(provider)
        agent = mailer.create(wrapped, run.tools(tools), run.before_tool_execution())
        answer = run.call(lambda: str(agent.chat("Keep the customer of order 12345 posted")))
    result = run.result
    assert int(tools.sent.get()) == 2  # the third mail was not sent
    assert answer.startswith("Done.") and result.answer == answer and result.outcome is Outcome.SUCCEEDED
    seen = answer.split(" | ")[1:]
    assert seen[:2] == ["sent #1", "sent #2"]
    assert seen[2].startswith("[pyguard] not run: the limit of 2 calls of send_email per run is reached")
    assert seen[3] == "Order 12345: in transit."  # a later call of another tool ran
    assert int(provider.calls()) == 5 == result.model_calls  # the run went on after the blocked call
    assert result.tool_calls_blocked == {"send_email": 1}
    assert result.evidence["tool_limits"] == {"limits": {"send_email": 2}, "blocked": {"send_email": 1}}


def test_executed_calls_do_not_count_the_blocked_one(mailer):
    tools = mailer.Tools()
    with Guard(LIMITED).start_run(task="Tell the customer") as run:
        wrapped = run.wrap(mailer.Provider())
        agent = mailer.create(wrapped, run.tools(tools), run.before_tool_execution(), run.after_tool_execution())
        run.call(lambda: str(agent.chat("Keep the customer posted")))
    result = run.result
    assert result.tool_calls == 4  # requested: three mails and one lookup
    assert result.tool_calls_executed == 3 and result.tool_calls_blocked == {"send_email": 1}


def test_an_attached_agent_keeps_the_limit_per_run(mailer):
    guard = Guard(LIMITED)
    provider = mailer.Provider()
    ag = guard.attach(provider)
    tools = mailer.Tools()
    agent = mailer.create(ag.model, ag.tools(tools), ag.before_tool_execution())
    agent.chat("Keep the customer posted")
    assert int(tools.sent.get()) == 2 and ag.results[-1].tool_calls_blocked == {"send_email": 1}


def test_a_bad_limit_is_named():
    with pytest.raises(Exception, match="limit"):
        CapsConfig(tool_limits={"send_email": {"limit": 0}})
    with pytest.raises(Exception, match="exit"):
        CapsConfig(tool_limits={"send_email": {"limit": 2, "exit": "sometimes"}})
    with pytest.raises((ConfigError, ValueError)):
        PolicyConfig.from_dict({"caps": {"tool_limits": {"send_email": {"limit": 2, "bogus": 1}}}})


def test_tool_limits_read_from_toml(tmp_path):
    path = tmp_path / "pyguard.toml"
    path.write_text('[caps.tool_limits]\nsend_email = { limit = 2, exit = "continue" }\n')
    config = PolicyConfig.from_toml(path)
    assert config.caps.tool_limits == {"send_email": ToolLimitConfig(limit=2)}
    assert PolicyConfig.from_dict(config.model_dump(mode="json")) == config


def _attached_mailer(mailer, tool_limits, *, on_stop="answer", conversation=None):
    from pyguard.engine.conversation_limits import ConversationLimits

    config = PolicyConfig(caps=CapsConfig(tool_limits=tool_limits), conversation=conversation or ConversationLimits())
    provider, tools = mailer.Provider(), mailer.Tools()
    ag = Guard(config, on_stop=on_stop).attach(provider)
    return ag, mailer.create(ag.model, ag.tools(tools), ag.before_tool_execution()), provider, tools


def test_exit_end_ends_the_run_with_the_stop_message_and_no_model_call(mailer):
    ag, agent, provider, tools = _attached_mailer(mailer, {"send_email": ToolLimitConfig(limit=2, exit="end")})
    answer = str(agent.chat("Keep the customer posted"))
    result = ag.results[-1]
    assert int(tools.sent.get()) == 2 and int(provider.calls()) == 3  # no model call after the blocked one
    assert result.outcome is Outcome.EXPIRED and result.answer_source == "stop_message" and result.answer == answer
    assert "tool_limit:send_email" in answer and "the limit of 2 calls of send_email per run" in result.reason
    assert result.tool_calls_blocked == {"send_email": 1}


def test_exit_error_raises_the_guards_stop(mailer):
    ag, agent, provider, tools = _attached_mailer(mailer, {"send_email": ToolLimitConfig(limit=2, exit="error")})
    with pytest.raises(Exception, match="GuardStopException|tool_limit:send_email"):
        agent.chat("Keep the customer posted")
    result = ag.results[-1]
    assert int(tools.sent.get()) == 2 and int(provider.calls()) == 3
    assert result.outcome is Outcome.EXPIRED and "send_email" in result.reason


def test_exit_end_ends_the_run_with_the_stop_message_under_on_stop_raise_too(mailer):
    tools, provider = mailer.Tools(), mailer.Provider()
    limits = PolicyConfig(caps=CapsConfig(tool_limits={"send_email": ToolLimitConfig(limit=1, exit="end")}))
    with Guard(limits, on_stop="raise").start_run(task="Tell the customer") as run:
        agent = mailer.create(run.wrap(provider), run.tools(tools), run.before_tool_execution())
        answer = run.call(lambda: str(agent.chat("Keep the customer posted")))
    result = run.result
    assert int(tools.sent.get()) == 1 and int(provider.calls()) == 2  # no model call after the blocked mail
    assert result.outcome is Outcome.EXPIRED and result.answer_source == "stop_message" and answer == result.answer
    assert "the limit of 1 call of send_email per run is reached (exit end)" in answer


def test_replay_blocks_with_the_live_message(mailer):
    from pyguard.engine.tool_limit_replay import blocked_result

    tools, provider = mailer.Tools(), mailer.Provider()
    with Guard(LIMITED).start_run(task="Tell the customer") as run:
        agent = mailer.create(run.wrap(provider), run.tools(tools), run.before_tool_execution())
        answer = run.call(lambda: str(agent.chat("Keep the customer posted")))
    assert answer.split(" | ")[3] == blocked_result("send_email", 2)  # replay gives the engine the same text


def test_a_blocked_call_is_a_guardrail_decision_in_otel(mailer):
    pytest.importorskip("opentelemetry.sdk")
    from pyguard.otel import GuardTelemetry
    from pyguard.otel import semconv as sc

    telemetry, exporter = GuardTelemetry.in_memory()
    tools, provider = mailer.Tools(), mailer.Provider()
    with Guard(LIMITED, telemetry=telemetry).start_run(task="Tell the customer") as run:
        agent = mailer.create(run.wrap(provider), run.tools(tools), run.before_tool_execution())
        run.call(lambda: str(agent.chat("Keep the customer posted")))
    spans = exporter.get_finished_spans()
    guardrails = [s for s in spans if s.attributes.get(sc.OPERATION_NAME) == sc.OP_RUN_GUARDRAIL]
    (blocked,) = guardrails  # the run went on: its one intervention is the blocked mail
    (agent_span,) = [s for s in spans if s.attributes.get(sc.OPERATION_NAME) == "invoke_agent"]
    a = blocked.attributes
    assert blocked.parent.span_id == agent_span.context.span_id
    assert (a[sc.GUARDRAIL_VERDICT_TYPE], a[sc.GUARDRAIL_ACTION_TYPE], a[sc.GUARDRAIL_TARGET_TYPE]) == (
        "deny",
        "block",
        "tool_call",
    )
    assert a[sc.GUARDRAIL_POLICY_RULE_ID] == "tool_limit:send_email" and a[sc.PG_ITERATION] == 3
    assert a[sc.TOOL_CALL_ID] == "m3" and a[sc.OPENINFERENCE_SPAN_KIND] == "GUARDRAIL"
    telemetry.shutdown()
