"""`pyguard demo`: the first Quickstart command."""

from __future__ import annotations

import json

from click.testing import CliRunner

from pyguard.cli import main


def test_demo_json_shows_the_guard_stopping_the_loop_honestly(jvm, tmp_path):
    out = CliRunner().invoke(main, ["demo", "--json", "--trace-dir", str(tmp_path)])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["scenario"] == "logistics_incident"
    u, g, stubborn = data["unguarded"], data["guarded"], data["guarded_reflection_ignored"]
    for side in (u, g, stubborn):
        assert {"outcome", "model_calls", "tool_calls", "total_tokens", "answer"} <= side.keys()
    assert g["model_calls"] <= 6 and stubborn["model_calls"] <= 6
    assert g["total_tokens"] < 0.5 * u["total_tokens"]
    assert data["guarded_token_share"] == round(g["total_tokens"] / u["total_tokens"], 4)
    assert g["reflections_after"], "the guard reflects at the first stall"
    assert stubborn["outcome"] == "stalled"  # stopped by the guard: never reported as succeeded
    assert u["outcome"] in {"succeeded", "expired"}
    assert g["trace"] and stubborn["trace"]
    # where the guard acted, and the tokens billed: the run's calls plus the wrap-up's
    assert stubborn["stopped_after"] == stubborn["model_calls"] and stubborn["stop_rule"]
    assert len(stubborn["reflection_rules"]) == len(stubborn["reflections_after"]) >= 1
    assert stubborn["answer_source"] == "wrap_up" and stubborn["answer"]
    assert stubborn["wrap_up_tokens"] and stubborn["wrap_up_tokens"] > 0
    assert stubborn["billed_tokens"] == stubborn["calls_tokens"] + stubborn["wrap_up_tokens"]
    assert g["billed_tokens"] == g["calls_tokens"] and g["wrap_up_tokens"] is None


def test_demo_table_over_http(jvm):
    out = CliRunner().invoke(main, ["demo", "--over-http"], env={"COLUMNS": "80"})
    assert out.exit_code == 0, out.output
    assert "unguarded" in out.output and "stalled" in out.output
    assert max(len(line) for line in out.output.splitlines()) <= 80
    assert "answer (wrap-up: one last call without tools after the stop" in out.output
