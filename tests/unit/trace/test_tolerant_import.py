"""Tolerant import of messy recordings: skip, count per reason, go on; strict fails; streams; terminal tools."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pyguard.base.errors import InputError
from pyguard.loading import load_runs

ANSWER = {"role": "assistant", "content": "done"}


def _write(path: Path, runs: list) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in runs) + "\n")
    return path


def test_unknown_roles_missing_assistants_and_bad_task_types_are_skipped_and_counted(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "messy.jsonl",
        [
            {
                "id": "ok",
                "messages": [{"role": "user", "content": "q"}, ANSWER, {"role": "exit", "content": "Submitted"}],
            },
            {"id": "no-assistant", "messages": [{"role": "user", "content": "q"}]},
            {"id": "bad-type", "task_type": 7, "messages": [ANSWER]},
            {
                "id": "no-ids",
                "success": True,
                "messages": [
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {"function": {"name": "a", "arguments": "{}"}},
                            {"function": {"name": "b", "arguments": "{}"}},
                        ],
                    },
                    {"role": "tool", "content": "A"},
                    {"role": "tool", "content": "B"},
                    ANSWER,
                ],
            },
        ],
    )
    (tmp_path / "messy.jsonl").write_text(
        path.read_text() + "{not json\n" + json.dumps({"id": "late", "messages": [ANSWER]}) + "\n"
    )
    runs = load_runs(path)
    assert [r.run_id for r in runs] == ["ok", "no-ids", "late"]
    assert runs.skipped == {
        "message with unknown role 'exit'": 1,
        "run with no assistant message": 1,
        "bad task_type": 1,
        "line that is not JSON": 1,
    }
    assert "skipped 4" in runs.skip_summary()
    paired = runs[1].events[1].observations
    assert [(o.tool_name, o.text) for o in paired] == [("a", "A"), ("b", "B")]  # results without ids: by position
    with pytest.raises(InputError, match="not valid JSON"):  # strict: the first unreadable item fails the load
        load_runs(path, strict=True)


def test_terminal_tool_call_with_label_is_finished_not_censored(tmp_path: Path) -> None:
    def run(rid: str, tool: str, success: bool) -> dict:
        return {
            "id": rid,
            "success": success,
            "messages": [
                {"role": "user", "content": "buy it"},
                {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": tool, "arguments": "{}"}}]},
            ],
        }

    path = _write(
        tmp_path / "t.jsonl",
        [
            run("bought", "buy_now", True),
            run("handoff", "transfer_to_human_agents", False),
            run("cut", "search", False),
        ],
    )
    runs = {r.run_id: r for r in load_runs(path)}
    assert not runs["bought"].end.censored and runs["bought"].end.outcome.value == "succeeded"
    assert not runs["handoff"].end.censored and runs["handoff"].end.outcome.value == "failed"
    assert runs["cut"].end.censored and runs["cut"].end.evidence["cut_off"] == "recording_ends"
    custom = {r.run_id: r for r in load_runs(path, terminal_tools="search")}
    assert not custom["cut"].end.censored and custom["bought"].end.censored  # the names given replace the guess


def test_react_text_and_labels_file(tmp_path: Path) -> None:
    text = (
        "Question: who?\nThought: look\nAction: search[Scat]\nObservation: Could not find [Scat]. Similar: [a]\n"
        "Thought: again\nAction: search[Scatman]\nObservation: Could not find [Scatman].\n"
        "Thought: done\nAction: finish[John]\n"
    )
    (tmp_path / "run.txt").write_text(text)
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"resolved_ids": ["run[0]"], "unresolved_ids": []}))
    (run,) = load_runs(tmp_path / "run.txt", format="react", labels=labels)
    assert [c.name for e in run.events for c in e.tool_calls] == ["search", "search", "finish"]
    assert run.events[1].observations[0].text.startswith("Could not find [Scat]")
    assert run.end.success_label is True and not run.end.censored


@pytest.mark.skipif(sys.platform == "win32", reason="process substitution is POSIX")
def test_standard_input_and_fifo_paths_are_read_as_streams(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", [{"id": "s", "messages": [ANSWER]}])
    out = subprocess.run(
        [sys.executable, "-c", "from pyguard.loading import load_runs; print(load_runs('-')[0].run_id)"],
        input=path.read_bytes(),
        capture_output=True,
        check=True,
    )
    assert out.stdout.decode().strip() == "s"
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"cat {path} > {fifo}"])
    try:
        assert [r.run_id for r in load_runs(str(fifo))] == ["s"]
    finally:
        writer.wait(timeout=10)
