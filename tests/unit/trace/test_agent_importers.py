"""Hand-made inputs in the shapes of mini-swe-agent v2, SWE-agent and BFCL (the real BFCL results carry no licence,
so their capped-run pattern is modelled here), and the labels files benchmarks write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyguard.base.errors import InputError
from pyguard.loading import detect_format, load_runs
from pyguard.trace import load_labels


def test_mini_swe_agent_exit_role_carries_the_status_and_a_limit_is_censored(tmp_path: Path) -> None:
    traj = {
        "instance_id": "pkg__pkg-1",
        "trajectory_format": "mini-swe-agent-1.1",
        "info": {},
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Fix the bug."},
            {"role": "assistant", "content": "THOUGHT: look\n\n```bash\nls\n```"},
            {"role": "user", "content": "<returncode>0</returncode>\n<output>a.py</output>"},
            {"role": "assistant", "content": "THOUGHT: two commands\n\n```bash\nls\n```\n```bash\npwd\n```"},
            {"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks."},
            {"role": "assistant", "content": "THOUGHT: run\n\n```bash\npython a.py\n```"},
            {"role": "user", "content": "<returncode>1</returncode>\n<output>Traceback</output>"},
            {"role": "exit", "content": "", "extra": {"exit_status": "LimitsExceeded"}},
        ],
    }
    path = tmp_path / "pkg__pkg-1.traj.json"
    path.write_text(json.dumps(traj))
    assert detect_format(path) == "miniswe"
    (run,) = load_runs(path, labels={"pkg__pkg-1": False})
    assert [len(e.tool_calls) for e in run.events] == [1, 0, 1]
    assert [o.kind for o in run.events[2].observations] == ["system"]  # the harness's complaint: not a user turn
    assert run.end.censored and run.end.evidence["cut_off"] == "step_limit" and run.end.success_label is False


def test_sweagent_trajectory_tools_and_cost_exit(tmp_path: Path) -> None:
    traj = {
        "history": [{"role": "system", "content": "SETTING"}, {"role": "user", "content": "ISSUE: fix x"}],
        "info": {"exit_status": "submitted (exit_cost)", "submission": "diff"},
        "trajectory": [
            {"thought": "open it", "action": "open src/x.py", "observation": "[File: src/x.py]"},
            {"thought": "edit", "action": "edit 3:3\n    return 1\nend_of_edit", "observation": "File updated."},
            {"thought": "run", "action": "python reproduce.py", "observation": "Traceback"},
        ],
    }
    path = tmp_path / "astropy__astropy-1.traj"
    path.write_text(json.dumps(traj))
    (run,) = load_runs(path, format="sweagent", labels={"resolved_ids": [], "unresolved_ids": ["astropy__astropy-1"]})
    assert run.run_id == "astropy__astropy-1" and run.start.task == "ISSUE: fix x"
    assert [c.name for e in run.events for c in e.tool_calls] == ["open", "edit", "bash"]
    assert json.loads(run.events[2].tool_calls[0].arguments) == {"command": "python reproduce.py"}
    assert run.end.censored and run.end.evidence["cut_off"] == "exit_cost" and run.end.success_label is False


def _bfcl_step(calls: list[dict], results: list[str], note: str = "Successfully decoded model response.") -> list:
    return [
        {"role": "assistant", "content": calls},
        {"role": "handler_log", "content": note},
        *({"role": "tool", "content": r} for r in results),
    ]


def test_bfcl_turns_capped_run_and_score_file_labels(tmp_path: Path) -> None:
    ls = {"ls": '{"a": false}'}
    capped = {
        "id": "multi_turn_base_7",
        "input_token_count": [[10, 11], [12] * 20],
        "output_token_count": [[1, 1], [1] * 20],
        "inference_log": [
            [{"role": "state_info", "class_name": "GorillaFileSystem", "content": {}}],
            {
                "begin_of_turn_query": [{"role": "user", "content": "list the files"}],
                "step_0": _bfcl_step([ls], ['{"current_directory_content": ["a"]}']),
                "step_1": _bfcl_step([], [], "Empty response from the model. Proceed to next turn."),
            },
            {
                "begin_of_turn_query": [{"role": "user", "content": "now move a"}],
                **{f"step_{i}": _bfcl_step([ls], ['{"current_directory_content": ["a"]}']) for i in range(19)},
                "step_19": _bfcl_step(
                    [ls], ['{"current_directory_content": ["a"]}'], "Model has been forced to quit after 20 steps."
                ),
            },
        ],
    }
    ok = {
        "id": "multi_turn_base_8",
        "inference_log": [{"begin_of_turn_query": [{"role": "user", "content": "hi"}], "step_0": _bfcl_step([], [])}],
    }
    broken = {"id": "multi_turn_base_9", "result": "Error during inference"}
    results = tmp_path / "BFCL_v4_multi_turn_base_result.json"
    # the errored test first: the format is still detected from the records after it
    results.write_text("\n".join(json.dumps(x) for x in (broken, capped, ok)) + "\n")
    score = tmp_path / "BFCL_v4_multi_turn_base_score.json"
    score.write_text(
        json.dumps({"accuracy": 0.5, "correct_count": 1, "total_count": 2})
        + "\n"
        + json.dumps({"id": "multi_turn_base_7", "valid": False})
        + "\n"
    )
    runs = load_runs(results, labels=score)
    assert runs.skipped == {"run with no inference log": 1}
    first, second = runs
    assert len(first.events) == 22 and first.events[0].input_tokens == 10
    assert [o.kind for o in first.events[2].observations] == ["user"]  # turn 2 opens after the answer
    assert not first.events[1].tool_calls
    assert first.end.censored and first.end.evidence["cut_off"] == "step_limit" and first.end.success_label is False
    assert second.end.success_label is True and not second.end.censored  # not listed in the score file: passed


def test_labels_files(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "report.json").write_text(json.dumps({"x__x-1": {"resolved": True, "patch_applied": True}}))
    (tmp_path / "a" / "report2.json").write_text(json.dumps({"x__x-2": {"resolved": False}}))
    assert dict(load_labels(tmp_path / "a")) == {"x__x-1": True, "x__x-2": False}
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"task_id": 3, "reward": 1.0}\n{"task_id": 4, "reward": 0.0}\n')
    assert dict(load_labels(rows)) == {"3": True, "4": False}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"hello": "world"}))
    with pytest.raises(InputError, match="cannot read labels"):
        load_labels(bad)
