"""``pyguard tune``: the policy file reads back everywhere a policy is read, --json, the report, exit code 2."""

import json

import pytest
from click.testing import CliRunner

from pyguard.cli import main
from pyguard.engine import PolicyConfig
from pyguard.trace import write_runs
from pyguard.tune.synthetic import known_best_runs


@pytest.fixture(scope="module")
def runs_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("tune") / "runs.jsonl"
    write_runs(path, known_best_runs(60, seed=11))
    return path


def _invoke(*args):
    return CliRunner().invoke(main, ["tune", *map(str, args)], catch_exceptions=False)


def test_tune_writes_a_policy_that_replay_and_guard_read(runs_file, tmp_path):
    out, report = tmp_path / "tuned.toml", tmp_path / "report"
    res = _invoke(runs_file, "--quick", "--workers", 1, "--min-runs", 10, "--out", out, "--report", report, "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert {"held_out", "in_sample", "default", "types", "policy", "warnings", "folds"} <= set(data)
    assert data["held_out"]["false_stop_rate"]["value"] <= 0.01
    text = out.read_text()
    assert text.startswith("# Fitted by `pyguard tune`") and "Held-out" in text and "In-sample" in text
    config = PolicyConfig.from_toml(out)
    assert config == PolicyConfig.model_validate(data["policy"])
    assert set(config.task_types) == {"lookup", "ops", "research"}
    from pyguard.live.guard import Guard
    from pyguard.pytest_plugin.guarding import build_policy
    from pyguard.pytest_plugin.marker import MarkerArgs
    from pyguard.pytest_plugin.settings import PluginSettings

    assert Guard.from_toml(out) is not None
    assert build_policy(PluginSettings(policy=out), MarkerArgs()) == config  # --pyguard-policy
    replayed = CliRunner().invoke(main, ["replay", str(runs_file), "--config", str(out), "--json"])
    assert replayed.exit_code == 0, replayed.output
    md = (report / "report.md").read_text()
    assert "held-out" in md and "in-sample (optimistic)" in md
    assert sorted(p.name for p in report.glob("*.png")) == [
        "tradeoff_lookup.png",
        "tradeoff_ops.png",
        "tradeoff_research.png",
    ]


def test_bad_input_exits_2(runs_file, tmp_path):
    unlabelled = tmp_path / "unlabelled.jsonl"
    unlabelled.write_text(
        "\n".join(
            json.dumps({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]})
            for _ in range(3)
        )
        + "\n"
    )
    res = CliRunner().invoke(main, ["tune", str(unlabelled)])
    assert res.exit_code == 2 and "outcome label" in res.output
    res = CliRunner().invoke(main, ["tune", str(runs_file), "--max-false-stop-rate", "1.5"])
    assert res.exit_code == 2
    res = CliRunner().invoke(main, ["tune", str(tmp_path / "missing")])
    assert res.exit_code == 2 and "does not exist" in res.output


def test_the_summary_names_a_task_types_own_stall_settings(tmp_path):
    # the per-type case of test_tune_per_type_stall: "loopy" needs 4 reflections, "plain" keeps the starting ones
    from test_tune_search import _with_successful_loops

    runs = _with_successful_loops(3)
    typed = [
        r.model_copy(
            update={
                "start": r.start.model_copy(update={"task_type": "loopy" if i % 2 or i >= len(runs) - 3 else "plain"})
            }
        )
        for i, r in enumerate(runs)
    ]
    write_runs(tmp_path / "typed.jsonl", typed)
    # 4 reflections are loopy's lever when results are judged with the next call (test_tune_per_type_stall)
    late = tmp_path / "late.toml"
    late.write_text("judge_results_early = false\n")
    res = _invoke(tmp_path / "typed.jsonl", "--max-false-stop-rate", "0.02", "--config", late)
    assert res.exit_code == 0, res.output
    summary = " ".join(res.output.split())
    assert "stall settings: {'max_reflections': 4}" in summary
    assert "own stall settings for plain: the starting ones" in summary
