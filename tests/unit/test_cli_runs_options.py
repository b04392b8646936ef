"""The RUNS options shared by replay, calibrate and check: stdin, skip counts on stderr, --strict, --labels,
--terminal-tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pyguard.cli import main

REAL = Path(__file__).parents[1] / "data" / "real"
ANSWER = {"role": "assistant", "content": "done"}
MESSY = (
    "\n".join(
        json.dumps(r)
        for r in [
            {
                "id": "a",
                "success": True,
                "messages": [{"role": "user", "content": "q"}, ANSWER, {"role": "exit", "content": ""}],
            },
            {"id": "b", "messages": [{"role": "user", "content": "q"}]},
            {
                "id": "c",
                "success": False,
                "messages": [
                    {
                        "role": "assistant",
                        "tool_calls": [{"id": "1", "function": {"name": "submit", "arguments": "{}"}}],
                    }
                ],
            },
        ]
    )
    + "\n"
)


@pytest.mark.parametrize(
    "command", [["replay", "--json"], ["check", "--json"], ["calibrate", "--failure-cost", "1", "--json"]]
)
def test_stdin_is_read_and_skips_are_counted_on_stderr(command: list[str]) -> None:
    result = CliRunner().invoke(main, [command[0], "-", *command[1:]], input=MESSY)
    # check may fail its gate (1); calibrate may refuse runs without token counts (2, its own concern): the runs
    # were read either way
    assert result.exit_code in ((0, 1, 2) if command[0] == "calibrate" else (0, 1)), result.output
    assert "cannot read" not in result.stderr and "does not exist" not in result.stderr
    assert "skipped 2 unreadable item(s)" in result.stderr
    assert "message with unknown role 'exit'" in result.stderr and "run with no assistant message" in result.stderr


def test_strict_fails_on_the_first_unreadable_record() -> None:
    result = CliRunner().invoke(main, ["replay", "-", "--strict"], input=MESSY)
    assert result.exit_code == 2 and "unknown role" in result.stderr


def test_terminal_tools_and_labels_options(tmp_path: Path) -> None:
    out = CliRunner().invoke(main, ["replay", "-", "--json"], input=MESSY)
    runs = {r["id"]: r for r in json.loads(out.stdout)["runs"]}
    assert "c" not in json.loads(out.stdout)["summary"]["censored"]  # submit ends the run: finished, not cut off
    out = CliRunner().invoke(main, ["replay", "-", "--json", "--terminal-tools", "finish"], input=MESSY)
    assert json.loads(out.stdout)["summary"]["censored"] == ["c"]
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"resolved_ids": ["c"], "unresolved_ids": ["a"]}))
    out = CliRunner().invoke(main, ["replay", "-", "--json", "--labels", str(labels)], input=MESSY)
    runs = {r["id"]: r for r in json.loads(out.stdout)["runs"]}
    assert runs["a"]["success"] is False and runs["c"]["success"] is True


def test_replay_reads_a_real_mini_swe_agent_folder_with_its_labels() -> None:
    out = CliRunner().invoke(
        main,
        [
            "replay",
            str(REAL / "mini-swe-agent" / "trajs"),
            "--json",
            "--labels",
            str(REAL / "mini-swe-agent" / "results_summary.json"),
        ],
    )
    assert out.exit_code == 0, out.stderr
    summary = json.loads(out.stdout)["summary"]
    assert summary["successful"]["runs"] == 3 and summary["failed"]["runs"] == 2
