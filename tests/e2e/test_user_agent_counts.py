"""Issue 32: what a user reads is what happened, checked against the user's own count. The agent is written apart
from pyguard (``dev.usercode``: an AiServices agent, its tool and factory, and a decorating ``CountingChatModel``
that sums what the provider billed; Java test classes: ``tests/e2e/_agents.py``), guarded the
README's way (``guard.attach``, its tool hook)."""

from __future__ import annotations

import pytest

from pyguard.base.events import Outcome
from pyguard.engine import CapsConfig, PolicyConfig
from pyguard.live.guard import Guard
from tests.e2e._agents import TASK, counting_agent, user_classes

pytestmark = pytest.mark.jvm
# Every guard here decides on the agent's thread (callback_timeout_ms=0): under load a decision can miss the 10 s
# callback deadline, and the Java fail-safe then stops the run guard_error; these tests count stops, not deadlines.


@pytest.fixture(scope="module")
def user(jvm):
    return user_classes("CountingChatModel", "UserAgents")


def test_the_token_total_is_what_the_provider_billed_wrap_up_included(user):
    counting, ag, agent = counting_agent(user, Guard(callback_timeout_ms=0))
    answer = str(agent.chat(TASK))
    result = ag.results[-1]
    assert result.outcome is Outcome.STALLED, result.summary()
    assert result.answer_source == "wrap_up" and answer == result.answer
    end = result.record.end
    assert int(counting.calls()) == result.model_calls + 1  # the wrap-up is one more call, billed
    assert result.total_tokens == int(counting.tokens()), (result.total_tokens, int(counting.tokens()))
    assert end.wrap_up_tokens and end.wrap_up_tokens > 0  # its share, beside the total
    assert end.evidence["wrap_up"]["status"] == "answered" and end.evidence["wrap_up"]["tokens"] == end.wrap_up_tokens


def test_a_token_cap_holds_no_model_call_after_it_is_crossed(user):
    # crossed by the 2nd call (about 470 tokens each), before the stuck lookup's stall (a stop at the 3rd call)
    cap = 600
    counting, ag, agent = counting_agent(
        user, Guard(PolicyConfig(caps=CapsConfig(max_total_tokens=cap)), callback_timeout_ms=0)
    )
    try:
        answer = agent.chat(TASK)
    except Exception as exc:  # nothing to salvage (the model wrote no text): the stop raises, as under on_stop="raise"
        assert "cap:total_tokens" in str(exc)
        answer = None
    result = ag.results[-1]
    assert ag.open_runs == []
    assert result.outcome is Outcome.EXPIRED and result.evidence.get("rule") == "cap:total_tokens", result.summary()
    assert int(counting.calls()) == result.model_calls  # the call that crossed the cap was the last one billed
    assert result.total_tokens == int(counting.tokens()) > cap
    assert (result.answer_source, result.answer) == (("salvaged", str(answer)) if answer is not None else (None, None))
    assert result.record.end.evidence["wrap_up"]["status"] == "not_made"


@pytest.mark.parametrize("on_stop", ["answer", "raise"])
def test_a_turn_ended_by_the_agents_own_cap_is_recorded_as_itself(user, on_stop):
    # a cap of 2 round trips ends each turn at its 2nd call, before the stuck lookup's stall (a stop at the 3rd)
    counting, ag, agent = counting_agent(user, Guard(on_stop=on_stop, callback_timeout_ms=0), round_trips=2)
    for turn in range(2):
        message = f"{TASK} (turn {turn})"
        if on_stop == "raise":
            with pytest.raises(Exception, match="maxToolCallingRoundTrips=2"):
                agent.chat(message)
        else:
            agent.chat(message)
        assert ag.open_runs == []  # no run left open once chat() returned or raised
        assert len(ag.results) == turn + 1
        latest = ag.results[-1]
        assert latest.record.start.task == message  # the turn that just ended, not the previous one
        assert latest.outcome is Outcome.EXPIRED and latest.model_calls == 2, latest.summary()
    assert int(counting.calls()) == sum(r.model_calls for r in ag.results) + (2 if on_stop == "answer" else 0)
