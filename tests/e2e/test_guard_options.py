"""One agent-options type on real LangChain4j loops (issue 24): the object, the keywords, or both (a keyword wins) build
the same agent; a keyword a call does not use is refused before any run starts; the nested systems' sub-agents take
the round trips from it too."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyguard.base.agent_options import AgentOptions
from pyguard.base.errors import ConfigError
from pyguard.base.events import Outcome
from pyguard.jvm import run_agent, scripted_model
from pyguard.live.guard import Guard, run_unguarded
from pyguard.live.nested import SubAgent, run_nested, run_nested_unguarded

TASK = "Where is order 12345?"
ROUNDS = Path(__file__).resolve().parents[1] / "data" / "scenarios" / "rounds.json"
"""An agent that learns something new with every call (no stall before its sixth): it reaches a cap."""


def test_the_object_and_the_keywords_build_the_same_agent(jvm, tmp_path):
    guard = Guard(trace_dir=tmp_path)
    lookup = AgentOptions(tools="logistics", task_type="lookup", max_tool_calling_round_trips=3)
    by_object = guard.run("aiservices", scripted_model(ROUNDS), TASK, options=lookup, run_id="order-12345")
    by_keywords = guard.run(
        "aiservices", scripted_model(ROUNDS), TASK, tools="logistics", task_type="lookup",
        max_tool_calling_round_trips=3,
    )  # fmt: skip
    assert by_object.run_id == "order-12345" and (tmp_path / "order-12345.jsonl").is_file()  # the keyword won
    assert by_object.record.start.task_type == by_keywords.record.start.task_type == "lookup"
    # the agent's own cap of 3 round trips, from the object as from the keywords: the wrap-up answers at its end
    assert (by_object.outcome, by_object.model_calls) == (by_keywords.outcome, by_keywords.model_calls)
    assert (by_object.outcome, by_object.model_calls, by_object.answer_source) == (Outcome.EXPIRED, 3, "wrap_up")


def test_the_executors_loop_cap_from_the_object_the_keyword_and_the_old_name(jvm):
    capped = AgentOptions(max_loop_iterations=3)
    runs = [
        run_unguarded("executor", scripted_model("divergent"), "why?", options=capped),
        run_unguarded("executor", scripted_model("divergent"), "why?", options=AgentOptions(), max_loop_iterations=3),
    ]
    with pytest.warns(DeprecationWarning, match=r"Guard.run\(max_iterations=...\) is now max_loop_iterations"):
        runs.append(Guard(on_stop="raise").run("executor", scripted_model("divergent"), "why?", max_iterations=3))
    assert [(r.outcome, r.model_calls) for r in runs] == [(Outcome.EXPIRED, 3)] * 3
    bridge = run_agent("executor", scripted_model("divergent"), "why?", guard=False, options=capped, run_id="b1")
    assert (bridge.run_id, bridge.stats.model_calls) == ("b1", 3)


def test_a_keyword_a_call_does_not_use_is_refused_before_a_run_starts(jvm, tmp_path):
    guard = Guard(trace_dir=tmp_path)
    with pytest.raises(ConfigError, match="Guard.run_streaming: the option 'max_loop_iterations' does not apply"):
        guard.run_streaming(scripted_model("convergent"), TASK, max_loop_iterations=3)
    with pytest.raises(ConfigError, match="Guard.agent: the option 'run_id' does not apply"):
        guard.agent("executor", scripted_model("convergent"), run_id="fixed")
    with pytest.raises(ConfigError, match="Guard.attach: the option 'tools' does not apply"):
        guard.attach(scripted_model("convergent"), tools="logistics")
    with pytest.raises(ConfigError, match=r"Guard.run: unknown option 'tool' \(did you mean 'tools'\?\)"):
        guard.run("executor", scripted_model("convergent"), TASK, tool="logistics")
    assert list(tmp_path.iterdir()) == [] and guard.active_runs == []


def test_a_nested_systems_sub_agents_take_their_round_trips_from_the_options(jvm):
    def agents() -> list[SubAgent]:
        return [
            SubAgent("notifier", scripted_model("nested_notifier")),
            SubAgent("tracker", scripted_model("nested_tracker_stuck")),  # six tool calls, then an answer
        ]

    task = "Where is order 12345? Tell the customer."
    default = run_nested_unguarded("sequence", task, agents())  # limits.NESTED_ROUND_TRIPS (20): room for all six
    assert default.error is None and default.model_calls == 2 + 7
    short = run_nested_unguarded("sequence", task, agents(), options=AgentOptions(max_tool_calling_round_trips=3))
    assert short.error is not None and short.model_calls == 2 + 4  # LangChain4j's own cap ended the tracker
    guarded = run_nested(Guard(), "sequence", task, agents(), options=AgentOptions(task_type="lookup"), run_id="seq")
    assert guarded.run_id == "seq" and guarded.record.start.task_type == "lookup"
    assert [c.run_id for c in guarded.children] == ["seq-notifier-1", "seq-tracker-1"]
    with pytest.raises(ConfigError, match="run_nested: the option 'system_message' does not apply"):
        run_nested(Guard(), "sequence", task, agents(), system_message="Be brief.")
