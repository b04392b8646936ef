"""``[conversation]`` budgets hold across the ``chat()`` calls of an attached agent (``Guard.attach``, ``Guard.agent``)
only: a run of ``start_run``, ``Guard.run`` or ``Guard.run_streaming`` (a streaming agent) is one run of no
conversation, and its guard says so once, naming the limits it does not hold and what to do, instead of letting the
user believe a conversation budget guards it."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from pyguard.engine import PolicyConfig
from pyguard.engine.conversation_limits import ConversationLimits
from pyguard.jvm import scripted_model
from pyguard.jvm.streaming import scripted_streaming_model
from pyguard.live.guard import Guard

pytestmark = pytest.mark.jvm

TASK = "Where is order 12345?"
LIMITED = PolicyConfig(conversation=ConversationLimits(max_model_calls=3))
ROUNDS = Path(__file__).resolve().parents[1] / "data" / "scenarios" / "rounds.json"


def test_a_streaming_run_says_the_conversation_budget_does_not_hold_for_it(jvm):
    guard = Guard(LIMITED)
    with pytest.warns(UserWarning, match=r"\[conversation\] max_model_calls") as seen:
        # an agent that learns something new with every call: no stall ends it before the conversation's 3 calls
        result = guard.run_streaming(scripted_streaming_model(ROUNDS), TASK, tools="logistics")
    text = str(seen[0].message)
    assert "not a conversation" in text and "attach" in text and "[caps]" in text, text
    assert result.model_calls > 3  # the conversation's 3 calls held nothing: it is one run of no conversation
    assert "conversation" not in result.evidence


def test_start_run_says_it_once_per_guard(jvm):
    guard = Guard(LIMITED)
    with pytest.warns(UserWarning, match=r"\[conversation\]"):
        guard.start_run(task=TASK).abandon()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        guard.start_run(task=TASK).abandon()  # said once: the second run of the same guard is quiet
    assert not [w for w in seen if "[conversation]" in str(w.message)], [str(w.message) for w in seen]


def test_an_attached_agent_keeps_conversations_and_says_nothing(jvm):
    guard = Guard(LIMITED)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        agent = guard.agent("aiservices", scripted_model("logistics_incident"), tools="logistics")
        result = agent.chat(TASK)
    assert not [w for w in seen if "[conversation]" in str(w.message)], [str(w.message) for w in seen]
    assert result.evidence["conversation"]["limits"] == {"max_model_calls": 3}


def test_attaching_a_streaming_model_says_what_to_do_instead(jvm):
    from pyguard.base.errors import ConfigError

    with pytest.raises(ConfigError, match=r"StreamingChatModel .*cannot be attached.*wrap_streaming"):
        Guard(LIMITED).attach(scripted_streaming_model("logistics_incident"))
