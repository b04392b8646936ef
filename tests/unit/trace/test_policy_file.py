"""Heavy headers (issue 33, point 6): a Guard's trace header holds the policy's digest and its settings, the whole
policy written once per trace folder; readers put the whole policy back from the file beside the trace, and replay
still judges a run by the stop conditions its header recorded."""

from __future__ import annotations

import json
import warnings

import pytest

from pyguard.base.events import IterationEvent, Outcome, RunEnd, RunStart, ToolCall
from pyguard.engine import PolicyConfig
from pyguard.loading import load_runs
from pyguard.replay import replay_runs
from pyguard.trace import read_trace
from pyguard.trace.policy_file import policy_digest
from pyguard.trace.records import TraceWarning
from pyguard.trace.writer import open_run_trace


def _heavy() -> PolicyConfig:
    """A policy of about 1 MB: 5,000 task types, and a stop condition (a model-call cap of 2)."""
    task_types = {f"type-{i:04d}": {"base_budget": 3, "hard_cap": 40 + i % 7} for i in range(5_000)}
    return PolicyConfig.model_validate(
        {"base_budget": 6, "task_types": task_types, "stop": {"kind": "model_calls", "limit": 2}}
    )


def _write(folder, run_id: str, config: PolicyConfig, task_type: str | None = "type-0003") -> None:
    start = RunStart(run_id=run_id, task_type=task_type, policy=config.model_dump(mode="json"))
    writer = open_run_trace(folder / f"{run_id}.jsonl", start)
    for i in range(1, 4):
        writer.iteration(
            IterationEvent(
                run_id=run_id,
                index=i,
                tool_calls=(ToolCall(id=f"c{i}", name="lookup", arguments=f'{{"page": {i}}}'),),
            )
        )
    writer.end(RunEnd(run_id=run_id, outcome=Outcome.SUCCEEDED, iterations=3, answer="done"))
    writer.close()


def test_the_header_holds_the_digest_and_settings_and_the_policy_is_written_once(tmp_path):
    config = _heavy()
    whole = config.model_dump(mode="json")
    assert len(json.dumps(whole)) > 500_000
    for run_id in ("r1", "r2", "r3"):
        _write(tmp_path, run_id, config)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert [f for f in files if f.startswith("policy-")] == [f"policy-{policy_digest(whole)[7:23]}.toml"]
    header = json.loads((tmp_path / "r1.jsonl").read_text().splitlines()[0])["policy"]
    assert len(json.dumps(header)) < 2_000  # not the whole policy in every header
    assert header["digest"] == policy_digest(whole) and header["base_budget"] == 6
    assert header["task_type"] == whole["task_types"]["type-0003"] and header["stop"] == whole["stop"]
    assert PolicyConfig.from_toml(tmp_path / header["file"]) == config  # the file is a policy TOML as it is
    (run,) = read_trace(tmp_path / "r2.jsonl").runs
    assert PolicyConfig.model_validate(run.record.start.policy) == config  # readers put the whole policy back
    records = load_runs(tmp_path)
    assert len(records) == 3 and records[0].start.policy is records[1].start.policy  # read once, shared


def test_replay_judges_by_the_recorded_stop_with_or_without_the_policy_file(tmp_path):
    config = _heavy()
    _write(tmp_path, "r1", config)
    (run,) = replay_runs(load_runs(tmp_path)).runs
    assert run.stop_at == 2 and run.rule == "cap:model_calls"
    (tmp_path / json.loads((tmp_path / "r1.jsonl").read_text().splitlines()[0])["policy"]["file"]).unlink()
    with pytest.warns(TraceWarning, match="policy file the trace headers name is missing"):
        records = load_runs(tmp_path)
    assert records[0].start.policy["digest"].startswith("sha256:")
    (run,) = replay_runs(records).runs
    assert run.stop_at == 2  # the header's own stop condition


def test_an_altered_policy_file_is_not_taken_for_the_recorded_one(tmp_path):
    config = _heavy()
    _write(tmp_path, "r1", config)
    (policy_file,) = tmp_path.glob("policy-*.toml")
    policy_file.write_text(policy_file.read_text().replace("base_budget = 6", "base_budget = 7", 1))
    with pytest.warns(TraceWarning, match="does not match the digest"):
        (run,) = read_trace(tmp_path / "r1.jsonl").runs
    assert "digest" in run.record.start.policy


def test_a_policy_without_tables_stays_whole_in_the_header(tmp_path):
    small = {"base_budget": 4, "hard_cap": 9}
    writer = open_run_trace(tmp_path / "r.jsonl", RunStart(run_id="r", policy=small))
    writer.close()
    assert json.loads((tmp_path / "r.jsonl").read_text())["policy"] == small
    assert not list(tmp_path.glob("policy-*"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_trace(tmp_path / "r.jsonl").runs[0].record.start.policy == small
