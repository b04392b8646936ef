"""The ATIF importer (Harbor / terminal-bench trajectories) on the hand-written fixtures of tests/unit/trace/atif."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyguard.base.errors import UnreadableRecord
from pyguard.loading import detect_format, load_runs
from pyguard.trace.atif_import import is_atif_run, parse_atif

ATIF = Path(__file__).parent / "atif"


def test_atif_files_are_detected_as_atif() -> None:
    assert detect_format(ATIF / "terminal_run.json") == "atif"
    assert detect_format(ATIF / "two_runs.jsonl") == "atif"


def test_agent_steps_are_iterations_and_results_reach_the_next_one() -> None:
    (run,) = load_runs(ATIF / "terminal_run.json", labels=ATIF / "labels.json")
    assert run.run_id == "fix-tests__a1b2c3"
    assert run.start.task == "Make the tests in /app pass."
    assert len(run.events) == 4  # the system step is no model call; the user step is the first observation
    first, second = run.events[0], run.events[1]
    assert [o.kind for o in first.observations] == ["user"]
    assert [(c.id, c.name, json.loads(c.arguments)) for c in first.tool_calls] == [
        ("call_1", "bash", {"command": "cd /app && pytest -q"})
    ]
    assert first.input_tokens == 900 and first.output_tokens == 40 and first.total_tokens == 940
    assert first.model == "example-model"
    # step 3's result arrives with step 4, named by its call
    assert [(o.kind, o.tool_call_id, o.tool_name, o.text) for o in second.observations] == [
        ("tool", "call_1", "bash", "1 failed, 3 passed")
    ]
    assert len(second.tool_calls) == 2 and [o.tool_call_id for o in run.events[2].observations] == ["call_2", "call_3"]
    # the same command, the same result: what a loop detector reads
    assert (
        run.events[2].tool_calls[0].arguments == run.events[3].tool_calls[0].arguments == first.tool_calls[0].arguments
    )
    assert run.end.success_label is False  # from labels.json, by session_id
    assert run.end.censored and run.end.evidence["cut_off"] == "recording_ends"  # it ends on a call
    assert run.end.evidence["total_cost_usd"] == 0.004 and run.end.evidence["imported_from"] == "atif"


def test_turns_results_without_a_call_and_multimodal_content() -> None:
    runs = load_runs(ATIF / "two_runs.jsonl", labels=ATIF / "labels.json")
    (run,) = runs
    assert run.run_id == "lookup-ok" and run.end.success_label is True and not run.end.censored
    assert [len(e.tool_calls) for e in run.events] == [1, 0, 1, 0]
    kinds = [[o.kind for o in e.observations] for e in run.events]
    assert kinds == [["user"], ["tool", "system"], ["user"], ["tool"]]  # the second user message: a new turn
    assert run.events[1].text == "GOOGL trades at $185.35."
    assert run.events[3].observations[0].text == "1.5M shares"
    assert json.loads(run.events[0].tool_calls[0].arguments) == {"ticker": "GOOGL", "metric": "price"}


def test_unreadable_trajectories_are_skipped_and_counted() -> None:
    runs = load_runs(ATIF / "two_runs.jsonl")
    assert [r.run_id for r in runs] == ["lookup-ok"]
    assert runs.skipped == {"unreadable ATIF step": 1, "run with no assistant message": 1}
    assert runs[0].end.success_label is None  # ATIF carries no outcome: unlabelled without labels=


def test_strict_parsing_names_the_step_and_what_is_expected() -> None:
    bad = {
        "schema_version": "ATIF-v1.4",
        "session_id": "s",
        "agent": {"name": "a", "version": "1"},
        "steps": [{"step_id": 1, "source": "agent", "message": "", "tool_calls": [{"tool_call_id": "x"}]}],
    }
    with pytest.raises(UnreadableRecord, match=r"steps\[0\]: tool_calls\[0\] has no 'function_name'"):
        parse_atif([(None, bad)], source="t.json")


def test_detection_needs_the_atif_keys() -> None:
    assert is_atif_run({"schema_version": "ATIF-v1.2", "session_id": "s", "steps": []})
    assert is_atif_run({"schema_version": "1.4", "session_id": "s", "steps": []})
    assert not is_atif_run({"schema_version": "v2", "session_id": "s", "steps": []})
    assert not is_atif_run({"session_id": "s", "steps": []})
    assert not is_atif_run({"messages": []})
