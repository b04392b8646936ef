"""The InterCode importer on committed real episodes (tests/data/real/intercode-bash: four unchanged episodes of
gpt-4 on NL2Bash task set 1, princeton-nlp/intercode, MIT)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyguard.base.errors import UnreadableRecord
from pyguard.loading import detect_format, load_runs
from pyguard.trace.intercode_import import is_intercode_run, parse_intercode

FIXTURE = Path(__file__).parents[2] / "data" / "real" / "intercode-bash" / "ic_bash_multiturn_gpt-4_10_turns_fs_1.json"
STEM = "ic_bash_multiturn_gpt-4_10_turns_fs_1"


def _runs() -> dict:
    return {r.run_id: r for r in load_runs(FIXTURE)}


def test_intercode_files_are_detected() -> None:
    assert detect_format(FIXTURE) == "intercode"


def test_actions_are_bash_calls_and_outputs_reach_the_next_call() -> None:
    runs = _runs()
    assert sorted(runs) == [f"{STEM}/{k}" for k in ("0", "35", "5", "6")]
    run = runs[f"{STEM}/0"]
    assert run.start.task.startswith("Calculate a list of duplicate md5 sum hashes")
    assert [o.kind for o in run.events[0].observations] == ["user"]
    assert all(c.name == "bash" for e in run.events for c in e.tool_calls)
    assert json.loads(run.events[0].tool_calls[0].arguments)["command"].startswith("find /testbed -type f")
    obs = run.events[1].observations[0]
    assert obs.kind == "tool" and obs.tool_call_id == run.events[0].tool_calls[0].id
    assert obs.text.startswith("f32a3a97638afeb2ee2a15cfe335ab72")
    assert run.end.success_label is True and not run.end.censored  # the last reward is 1.0: the harness ended it


def test_ten_actions_without_success_are_capped_failures() -> None:
    runs = _runs()
    loop = runs[f"{STEM}/35"]  # the same awk pipeline nine times, the same output each time
    assert len(loop.events) == 10 and loop.end.success_label is False
    assert loop.end.censored and loop.end.evidence["cut_off"] == "step_limit"
    assert len({c.arguments for e in loop.events[1:] for c in e.tool_calls}) == 1
    errors = runs[f"{STEM}/6"]  # repeated shell syntax errors: invalid actions give error observations
    assert errors.end.censored and sum(o.is_error for e in errors.events for o in e.observations) >= 8


def test_submit_and_skip_end_a_run_and_are_not_capped() -> None:
    episode = {
        "environment": "ic_ctf",
        "task_id": 7,
        "query": "Find the flag.",
        "turn_history": {
            "actions": ["ls", "cat flag.txt", "submit picoCTF{x}"],
            "observations": ["flag.txt", "picoCTF{y}", "Submitted flag is incorrect. Keep trying!"],
            "rewards": [0, 0, 0],
            "valid_action": [True, True, True],
        },
        "summary": {"max_reward": 0, "turns_taken": 3, "turns_max": 3},
    }
    (run,) = parse_intercode([(None, episode)], source="ic_ctf_multiturn_gpt-4_3_turns.json")
    assert [c.name for e in run.events for c in e.tool_calls] == ["bash", "bash", "submit"]
    assert run.end.success_label is False and not run.end.censored  # it answered within the cap
    assert run.end.evidence["ended_by_tool"] == "submit"


def test_unreadable_episodes_are_skipped_and_named() -> None:
    bad = {"task_id": 1, "turn_history": {"actions": [3]}, "summary": {"turns_max": 10}}
    with pytest.raises(UnreadableRecord, match=r"episode 'x/1': action 0 is not text"):
        parse_intercode([(None, bad)], source="x.json")
    assert not is_intercode_run({"turn_history": {"actions": []}})
    assert not is_intercode_run({"summary": {"turns_max": 3}})
