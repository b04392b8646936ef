"""The plugin's end-of-session summary per conversation (``--pyguard-by-conversation``, issue 34): each test's runs that
were turns of an attached agent's conversation, grouped by conversation id, with the budget rule that stopped one."""

from __future__ import annotations

import pytest

from pyguard.base.events import IterationEvent, Outcome, RunEnd, RunRecord, RunStart
from pyguard.pytest_plugin.reporting import SessionRuns, run_stats
from pyguard.result import RunResult


def turn(run_id: str, conversation: str | None, outcome: Outcome, calls: int, stopped_by: str | None = None):
    evidence = {} if conversation is None else {"conversation": {"id": conversation, "stopped_by": stopped_by}}
    events = [IterationEvent(run_id=run_id, index=i + 1, input_tokens=10, output_tokens=1) for i in range(calls)]
    end = RunEnd(run_id=run_id, outcome=outcome, iterations=calls, evidence=evidence)
    return RunResult(record=RunRecord(start=RunStart(run_id=run_id), events=events, end=end))


def test_runs_are_grouped_by_conversation_and_the_stop_is_named():
    results = [
        turn("a1", "alice", Outcome.SUCCEEDED, 2),
        turn("b1", "bob", Outcome.SUCCEEDED, 2),
        turn("a2", "alice", Outcome.EXPIRED, 1, "conversation_budget:model_calls"),
        turn("x", None, Outcome.SUCCEEDED, 1),
    ]
    stats = run_stats(results, None)
    assert stats["conversations"] == {
        "alice": {
            "runs": 2,
            "model_calls": 3,
            "outcomes": {"succeeded": 1, "expired": 1},
            "stopped_by": "conversation_budget:model_calls",
        },
        "bob": {"runs": 1, "model_calls": 2, "outcomes": {"succeeded": 1}, "stopped_by": None},
    }
    assert [r.conversation_id for r in results] == ["alice", "bob", "alice", None]
    summary = SessionRuns(by_conversation=True)
    summary.by_test["t.py::test_support"] = stats
    lines = summary.lines()
    assert (
        "  conversation 'alice' of t.py::test_support: 2 runs, 3 model calls, 1 expired, 1 succeeded;"
        " stopped by conversation_budget:model_calls"
    ) in lines
    assert "  conversation 'bob' of t.py::test_support: 2 model calls" not in lines
    assert any(line.startswith("  conversation 'bob'") for line in lines)
    plain = SessionRuns()
    plain.by_test["t.py::test_support"] = stats
    assert not any("conversation" in line for line in plain.lines())  # only when asked


def test_the_option_is_offered(pytester: pytest.Pytester):
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["*--pyguard-by-conversation*"])
