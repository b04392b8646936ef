"""Issue 34: ``on_stop="end"`` ends a stopped run with its stop message and no model call after the stop, counted by
the user's own decorating ``ChatModel`` (``dev.usercode.CountingChatModel``) around a real AiServices agent
(``dev.usercode.UserAgents``), guarded the README's way (``guard.attach`` and its tool hook)."""

from __future__ import annotations

import pytest

from pyguard.base.events import Outcome
from pyguard.engine import CapsConfig, PolicyConfig
from pyguard.engine.config import TaskTypeConfig
from pyguard.live.guard import Guard
from tests.e2e._agents import TASK, counting_agent, stuck_model, user_classes

pytestmark = pytest.mark.jvm
# Every guard here decides on the agent's thread (callback_timeout_ms=0): under load a decision can miss the 10 s
# callback deadline, and the Java fail-safe then stops the run guard_error; these tests count stops, not deadlines.

FOUND = "Order 12345: in transit, last scan Memphis hub."
"""What the user's tool returns: the run's last tool result, which the default stop message quotes."""


@pytest.fixture(scope="module")
def user(jvm):
    return user_classes("CountingChatModel", "UserAgents")


def test_end_returns_the_stop_message_and_makes_no_model_call_after_the_stop(user):
    counting, ag, agent = counting_agent(user, Guard(on_stop="end", callback_timeout_ms=0))
    answer = str(agent.chat(TASK))
    result = ag.results[-1]
    assert result.outcome is Outcome.STALLED, result.summary()
    assert int(counting.calls()) == result.model_calls  # the stopped call was the last one the provider got
    assert result.answer_source == "stop_message" and result.answer == answer
    rule = result.evidence.get("rule")
    assert answer.startswith(f"[pyguard] The run was stopped (stalled, rule {rule}): ") and rule
    assert answer.endswith(f"Last tool result: {FOUND}")
    assert result.record.end.wrap_up_tokens is None  # nothing billed beyond the run's own calls
    assert result.total_tokens == int(counting.tokens())
    assert result.record.end.evidence["wrap_up"]["status"] == "stop_message"


def test_the_message_is_configurable_and_content_can_be_left_out(user):
    guard = Guard(
        on_stop="end",
        stop_message="Stopped: {outcome}/{rule}. Found: {found}",
        stop_message_content=False,
        callback_timeout_ms=0,
    )
    counting, ag, agent = counting_agent(user, guard)
    answer = str(agent.chat(TASK))
    result = ag.results[-1]
    assert answer == f"Stopped: stalled/{result.evidence.get('rule')}. Found: (not shown: stop_message_content=False)"
    assert FOUND not in answer and int(counting.calls()) == result.model_calls


def test_on_stop_is_set_per_task_type_in_the_policy(user):
    policy = PolicyConfig(task_types={"lookup": TaskTypeConfig(on_stop="end")})
    counting, ag, agent = counting_agent(user, Guard(policy, callback_timeout_ms=0), task_type="lookup")
    agent.chat(TASK)
    assert ag.results[-1].answer_source == "stop_message" and int(counting.calls()) == ag.results[-1].model_calls
    counting, ag, agent = counting_agent(
        user, Guard(policy, callback_timeout_ms=0)
    )  # no task type: the policy's on_stop, "answer"
    agent.chat(TASK)
    assert ag.results[-1].answer_source == "wrap_up" and int(counting.calls()) == ag.results[-1].model_calls + 1


def test_a_cap_stop_ends_with_the_message_too(user):
    counting, ag, agent = counting_agent(
        # crossed by the 2nd call (about 470 tokens each), before the stuck lookup's stall (a stop at the 3rd call)
        user,
        Guard(PolicyConfig(caps=CapsConfig(max_total_tokens=600)), on_stop="end", callback_timeout_ms=0),
    )
    answer = str(agent.chat(TASK))
    result = ag.results[-1]
    assert result.outcome is Outcome.EXPIRED and result.evidence.get("rule") == "cap:total_tokens"
    assert "(expired, rule cap:total_tokens)" in answer and result.answer_source == "stop_message"
    assert int(counting.calls()) == result.model_calls


def test_start_run_call_returns_the_stop_message(user):
    Counting, UserAgents = user
    counting = Counting(stuck_model())
    with Guard(on_stop="end", callback_timeout_ms=0).start_run(task=TASK) as run:
        agent = UserAgents.create(run.wrap(counting), run.before_tool_execution(), 100)
        answer = run.call(lambda: str(agent.chat(TASK)))
    assert answer == run.result.answer and run.result.answer_source == "stop_message"
    assert int(counting.calls()) == run.result.model_calls


def test_a_stop_judged_before_the_next_call_ends_with_the_message_too(user):
    counting, ag, agent = counting_agent(
        user, Guard(PolicyConfig(judge_results_early=True), on_stop="end", callback_timeout_ms=0)
    )
    answer = str(agent.chat(TASK))
    result = ag.results[-1]
    assert result.outcome is Outcome.STALLED and result.answer_source == "stop_message", result.summary()
    assert answer == result.answer and answer.startswith("[pyguard] The run was stopped (stalled")
    assert int(counting.calls()) == result.model_calls  # no wrap-up call in place of the replaced call
