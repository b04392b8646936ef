"""real_replay --quick runs on the committed fixtures and prints one well-formed JSON object (shape, not values)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_quick_real_replay_json_shape() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "real_replay", "--quick", "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    result = json.loads(out.stdout)
    assert result["suite"] == "real_replay" and result["quick"] is True
    assert set(result["sources"]) == {
        "fireact",
        "intercode-bash",
        "medagentbench",
        "mini-swe-agent",
        "tau2-gemma",
        "tau2-telecom",
    }
    for source in result["sources"].values():
        assert source["runs"] == source["successes"] + source["failures"] + source["unlabelled"] > 0
        assert set(source["policies"]) == {"pyguard", "repeat", "openhands"}
        for figures in source["policies"].values():
            for key in (
                "false_stop_rate",
                "failed_calls_saved",
                "capped_stopped",
                "false_stop_rules",
                "false_stop_examples",
            ):
                assert key in figures
            rate = figures["false_stop_rate"]
            assert rate is None or 0.0 <= rate <= 1.0
    assert set(result["mean"]) == {"pyguard", "repeat", "openhands"}
    assert set(result["worst_false_stops"]["pyguard"]) == {"source", "false_stop_rate"}


def test_the_trade_off_runs_every_policy_file_and_draws_its_plot(tmp_path: Path) -> None:
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "real_data" / "tradeoff.py"),
            "--data",
            str(ROOT / "tests" / "data" / "real"),
            "--out",
            str(tmp_path),
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    points = json.loads(out.stdout)
    policies = sorted(p.stem for p in (ROOT / "benchmarks" / "real_data" / "policies").glob("*.toml"))
    assert [p["policy"] for p in points] == policies and "2-default" in policies
    for p in points:
        assert set(p["sources"]) == {
            "fireact",
            "intercode-bash",
            "medagentbench",
            "mini-swe-agent",
            "tau2-gemma",
            "tau2-telecom",
        }
        assert set(p["mean"]) >= {"false_stop_rate", "failed_calls_saved", "capped_stopped"}
    assert (tmp_path / "real_tradeoff.png").stat().st_size > 1000
