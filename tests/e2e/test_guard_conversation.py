"""A conversation guarded live on LangChain4j's AiServices: one run of several chat() calls, a budget per user turn.

The scripted model plays the shipped ``support_conversation`` scenario (three user messages: a lookup, an export
polled until done, a failing product search retried with a suggestion). The guard sees each later user message as
the observation of the call after the previous answer, opens a new turn there, and the decisions, the trace and
the result carry the turn.
"""

from __future__ import annotations

from pyguard.base.events import Outcome, turn_starts
from pyguard.engine import PolicyConfig
from pyguard.jvm import load_scenario, scripted_model
from pyguard.live.guard import Guard
from pyguard.trace import read_trace


def test_a_guarded_conversation_gets_a_budget_per_turn(jvm, tmp_path):
    data = load_scenario("support_conversation")
    users = [s["user"] for s in data["conversation"]]
    # a budget of 5 calls per turn fits every message (at most 5 calls each) but not the 11 calls of the whole run
    per_turn = PolicyConfig(base_budget=5, hard_cap=5, earn_per_iteration=0)
    result = Guard(per_turn, trace_dir=tmp_path).run("aiservices", scripted_model(data), users, run_id="conv")
    assert result.outcome is Outcome.SUCCEEDED, result.reason
    assert result.model_calls == 11 and "6817146515" in (result.answer or "")
    assert [d.turn for d in result.decisions][-1] == 3
    starts = turn_starts(result.record.events)
    assert len(starts) == 3 and all(result.decisions[k].turn == n + 1 for n, k in enumerate(starts))
    trace = read_trace(tmp_path / "conv.jsonl").runs[0]
    assert [d.turn for d in trace.decisions] == [d.turn for d in result.decisions]
    # the same budget over the whole run cuts the conversation in its third message: the honest outcome says so
    whole = PolicyConfig(base_budget=5, hard_cap=5, earn_per_iteration=0, budget_per_turn=False)
    cut = Guard(whole).run("aiservices", scripted_model(data), users, run_id="conv-whole")
    assert cut.outcome is Outcome.EXPIRED and cut.model_calls == 5
