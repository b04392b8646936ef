"""`pyguard replay` through click's CliRunner: JSON shape, table output, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pyguard.cli import main

RECORDINGS = Path(__file__).parents[1] / "data" / "recordings"
RUN_KEYS = {"id", "success", "iterations", "stop_at", "reason", "reflect_at", "tool_calls", "tool_calls_saved",
            "tokens", "tokens_saved"}
GROUP_KEYS = {"runs", "stopped", "reflected", "tool_calls", "tool_calls_saved", "tokens", "tokens_saved",
              "runs_without_usage"}


def _invoke(*args: str):  # noqa: ANN202
    return CliRunner().invoke(main, ["replay", *args], catch_exceptions=False)


@pytest.fixture()
def tight_policy(tmp_path: Path) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text("base_budget = 3\nhard_cap = 3\n[caps]\nmax_model_calls = 3\n")
    return path


@pytest.mark.parametrize("name, fmt", [("openai_runs.jsonl", "openai"), ("pyguard_trace.jsonl", "pyguard")])
def test_json_output_shape(name: str, fmt: str) -> None:
    result = _invoke(str(RECORDINGS / name), "--format", fmt, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data) == {"runs", "summary"}
    assert data["runs"] and all(set(r) == RUN_KEYS for r in data["runs"])
    summary = data["summary"]
    for group in ("successful", "failed", "unlabelled"):
        assert set(summary[group]) == GROUP_KEYS
    assert summary["runs"] == len(data["runs"])
    assert "continue" in summary["reflections"]


def test_json_values_with_a_tight_policy(tight_policy: Path) -> None:
    result = _invoke(str(RECORDINGS / "openai_runs.jsonl"), "--config", str(tight_policy), "--json")
    assert result.exit_code == 0, result.output
    runs = {r["id"]: r for r in json.loads(result.output)["runs"]}
    loop = runs["loop-fail"]
    assert (loop["success"], loop["iterations"], loop["stop_at"]) == (False, 8, 3)
    assert loop["tool_calls"] == 7 and loop["tool_calls_saved"] == 4
    assert loop["tokens"] == 3004 and 0 < loop["tokens_saved"] < loop["tokens"]
    cut = runs["cutoff"]
    assert cut["stop_at"] == 3 and cut["tokens"] is None and cut["tokens_saved"] is None  # no usage recorded
    assert runs["openai_runs[3]"]["success"] is None  # no label: unknown
    assert runs["lookup-ok"]["stop_at"] is None and runs["lookup-ok"]["tool_calls_saved"] == 0
    summary = json.loads(result.output)["summary"]
    assert summary["failed"]["stopped"] == 2 and summary["censored"] == ["cutoff"]


def test_table_output(tight_policy: Path) -> None:
    result = _invoke(str(RECORDINGS / "pyguard_trace.jsonl"), "--config", str(tight_policy))
    assert result.exit_code == 0, result.output
    for needle in ("inc-1", "look-1", "summary: 2 runs, 1 stopped", "successful", "failed", "continue"):
        assert needle in result.output


@pytest.mark.parametrize(
    "args, needle",
    [
        (["nope.jsonl"], "does not exist"),
        ([str(RECORDINGS / "pyguard_trace.jsonl"), "--format", "openai", "--strict"], "format='pyguard'"),
        ([str(RECORDINGS / "pyguard_trace.jsonl"), "--format", "openai"], "no records that could be read"),
        ([str(RECORDINGS / "openai_runs.jsonl"), "--config", "missing.toml"], "missing.toml"),
    ],
)
def test_bad_input_exits_2_with_the_message(args: list[str], needle: str) -> None:
    result = CliRunner().invoke(main, ["replay", *args])
    assert result.exit_code == 2
    assert needle in result.output
    assert "Traceback" not in result.output


def test_malformed_trace_exits_2_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = (RECORDINGS / "pyguard_trace.jsonl").read_text().splitlines()
    lines[4] = lines[4][:-5]
    path.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(main, ["replay", str(path)])
    assert result.exit_code == 2 and f"{path}:5" in result.output


def test_bad_config_value_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text("base_budget = 0\n")
    result = CliRunner().invoke(main, ["replay", str(RECORDINGS / "openai_runs.jsonl"), "--config", str(path)])
    assert result.exit_code == 2 and "base_budget" in result.output
