"""`pyguard check` end to end through click: real trace files in, exit codes and report files out."""

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

import pyguard.cli.check as cli_check
from pyguard.base.events import Outcome, RunEnd
from pyguard.check.synthetic import synth_runs
from pyguard.cli import main
from pyguard.trace import write_runs

RECORDINGS = Path(__file__).parents[1] / "data" / "recordings"


def _trace(tmp_path, name, runs):
    path = tmp_path / name
    write_runs(path, runs)
    return path


def _run(*args):
    return CliRunner().invoke(main, ["check", *map(str, args)])


@pytest.fixture
def baseline_traces(tmp_path):
    return _trace(tmp_path, "base.jsonl", synth_runs(300, seed=100, with_events=True))


def test_passing_run_set_exits_0(tmp_path):
    path = _trace(tmp_path, "runs.jsonl", synth_runs(200, seed=1))
    result = _run(path, "--max-stall-rate", "0.3", "--max-expired-rate", "0.2", "--max-p95-iterations", "12")
    assert result.exit_code == 0, result.output
    assert "pyguard check passed" in result.output and "lookup" in result.output


def test_failing_threshold_exits_1_and_names_the_figure(tmp_path):
    path = _trace(tmp_path, "runs.jsonl", synth_runs(200, seed=2, stalled=0.3))
    result = _run(path, "--max-stall-rate", "0.1")
    assert result.exit_code == 1, result.output
    assert "FAIL stall_rate [lookup]" in result.output and "above the threshold 0.1" in result.output


def test_baseline_round_trip_same_behaviour_passes_doubled_stalls_fail(tmp_path, baseline_traces):
    baseline = tmp_path / "baseline.json"
    made = _run(baseline_traces, "--write-baseline", baseline, "--json")
    assert made.exit_code == 0, made.output
    assert json.loads(baseline.read_text())["groups"]["lookup"]["n"] == 300

    same = _trace(tmp_path, "same.jsonl", synth_runs(300, seed=103, with_events=True))
    ok = _run(same, "--baseline", baseline, "--json")
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output)["passed"] is True

    doubled = _trace(tmp_path, "doubled.jsonl", synth_runs(300, seed=104, with_events=True, stalled=0.2))
    md, junit = tmp_path / "out" / "check.md", tmp_path / "out" / "junit.xml"
    bad = _run(doubled, "--baseline", baseline, "--json", "--markdown", md, "--junit-xml", junit)
    assert bad.exit_code == 1, bad.output
    data = json.loads(bad.output)
    stalled = next(c for c in data["checks"] if c["name"] == "baseline.stalled_rate")
    assert stalled["passed"] is False and stalled["p_value"] < 0.05 and stalled["baseline"] < stalled["value"]
    assert stalled["message"] in md.read_text()
    cases = ET.parse(junit).getroot().findall(".//testcase")
    assert len(cases) == len(data["checks"])
    assert {c.get("name") for c in cases if c.find("failure") is not None} == {
        c["name"] for c in data["checks"] if not c["passed"]
    }


def test_the_shipped_example_trace_is_read(tmp_path):
    result = _run(RECORDINGS / "pyguard_trace.jsonl", "--json")
    assert result.exit_code == 0, result.output
    assert set(json.loads(result.output)["groups"]) >= {"incident", "lookup", "*"}


def test_openai_recordings_are_replayed_through_the_policy(monkeypatch, tmp_path):
    seen = {}

    def fake_policy_replayer(config_path):
        seen["config"] = config_path

        def replay(runs):
            return [
                RunEnd(
                    run_id=r.run_id,
                    outcome=Outcome.STALLED if len(r.events) > 2 else Outcome.SUCCEEDED,
                    iterations=min(len(r.events), 2),
                )
                for r in runs
            ]

        return replay

    monkeypatch.setattr(cli_check, "policy_replayer", fake_policy_replayer)
    policy = tmp_path / "policy.toml"
    policy.write_text("")
    result = _run(RECORDINGS / "openai_runs.jsonl", "--config", policy, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["replayed"] == data["runs"] > 0 and seen["config"] == policy


def test_openai_recordings_through_the_default_policy():
    result = _run(RECORDINGS / "openai_runs.jsonl", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["replayed"] == data["runs"] == 4


def test_a_bad_policy_file_is_bad_input(tmp_path):
    policy = tmp_path / "policy.toml"
    policy.write_text("this is = = not toml")
    result = _run(RECORDINGS / "openai_runs.jsonl", "--config", policy)
    assert result.exit_code == 2
    assert "policy.toml" in result.output and "not valid TOML" in result.output


@pytest.mark.parametrize(
    "content, message",
    [
        (
            '{"type": "run_start", "version": 1, "run_id": "a"}\n{"type": "iteration", "run_id": "a", "index": "x"}\n'
            '{"type": "run_end", "run_id": "a", "outcome": "succeeded"}\n',
            "runs.jsonl",
        ),
        ('{"type": "run_start", "version": 1, "run_id": "a"}\n', "'a' has no run_end footer"),
        ("plain text\n", "cannot tell the format"),
    ],
)
def test_malformed_runs_exit_2_with_a_clear_message(tmp_path, content, message):
    path = tmp_path / "runs.jsonl"
    path.write_text(content)
    result = _run(path, "--max-stall-rate", "0.1")
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_malformed_baseline_exits_2(tmp_path):
    path = _trace(tmp_path, "runs.jsonl", synth_runs(20, seed=3))
    baseline = tmp_path / "baseline.json"
    baseline.write_text('{"format": "pyguard-check-baseline", "version": 1, "groups": {"*": {"n": -1}}}')
    result = _run(path, "--baseline", baseline)
    assert result.exit_code == 2 and "baseline.json" in result.output and "groups.*.n" in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--max-stall-rate", "1.5"], "--max-stall-rate"),
        (["--max-p95-iterations", "0"], "--max-p95-iterations"),
        (["--format", "csv"], "--format"),
        (["--alpha", "0"], "--alpha"),
    ],
)
def test_bad_options_exit_2(tmp_path, args, message):
    path = _trace(tmp_path, "runs.jsonl", synth_runs(5, seed=4))
    result = _run(path, *args)
    assert result.exit_code == 2 and message in result.output


def test_missing_runs_path_exits_2(tmp_path):
    result = _run(tmp_path / "nope.jsonl")
    assert result.exit_code == 2 and "nope.jsonl" in result.output
