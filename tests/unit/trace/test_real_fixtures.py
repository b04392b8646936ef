"""The importers on committed real recordings (tests/data/real) — the test of the importers on real data."""

from __future__ import annotations

import json
from pathlib import Path

from pyguard.loading import detect_format, load_runs

REAL = Path(__file__).parents[2] / "data" / "real"


def test_fireact_react_runs_import_with_labels_and_finish_ends_them() -> None:
    runs = {r.run_id: r for r in load_runs(REAL / "fireact")}
    assert detect_format(REAL / "fireact" / "llama7b.json") == "react"
    loop = runs["llama7b/2451"]
    searches = [c.arguments for e in loop.events for c in e.tool_calls if c.name == "search"]
    assert searches[:5] == [searches[0]] * 5 and json.loads(searches[0]) == {
        "input": "number of solo albums released by Ozzy Osbourne"
    }
    assert loop.events[1].observations[0].kind == "tool" and loop.events[1].observations[0].text == "None"
    assert loop.end.success_label is False and loop.end.censored is False  # finish[...] with a label: finished
    assert loop.end.evidence["ended_by_tool"] == "finish"
    chat = runs["gpt35/716"]  # the chat form: Observation messages are tool results, not user turns
    assert [o.kind for e in chat.events[1:] for o in e.observations] == ["tool"] * (len(chat.events) - 1)
    assert chat.end.success_label is True


def test_mini_swe_agent_runs_have_bash_calls_labels_and_are_finished() -> None:
    runs = {
        r.run_id: r
        for r in load_runs(REAL / "mini-swe-agent" / "trajs", labels=REAL / "mini-swe-agent" / "results_summary.json")
    }
    assert len(runs) == 5
    run = runs["django__django-15277"]
    assert run.end.success_label is True and not run.end.censored and run.end.evidence["exit_status"] == "Submitted"
    assert all(c.name == "bash" for e in run.events for c in e.tool_calls)
    assert "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in json.loads(run.events[-1].tool_calls[0].arguments)["command"]
    assert run.events[1].observations[0].kind == "tool" and "<returncode>" in run.events[1].observations[0].text
    assert runs["astropy__astropy-7606"].end.success_label is False
    assert len(runs["matplotlib__matplotlib-26342"].events) == 44


def test_tau2_conversation_turns_come_as_user_observations() -> None:
    runs = load_runs(REAL / "tau2-telecom")
    assert len(runs) == 4 and {r.end.success_label for r in runs} == {True, False}
    run = runs[0]
    kinds = [[o.kind for o in e.observations] for e in run.events]
    user_turns = [i for i, k in enumerate(kinds) if "user" in k]
    assert len(user_turns) >= 3  # a user message after an answer: a new turn, seen at the next iteration
    for i in user_turns[1:]:
        assert not run.events[i - 1].tool_calls  # ... that follows the agent's answer
    assert all(o.kind != "tool" or o.tool_call_id for e in run.events for o in e.observations)
