"""Every load option applies to every format, Parquet included (issue 32 point 8): ``replay``, ``check`` and
``calibrate`` on a Parquet file used to skip the one loader, so ``--labels``, ``--strict`` and ``--terminal-tools``
were silently ignored (labels marking every run failed: JSON Lines 0 successful, the same runs in Parquet 50).
Each test reads the same runs as OpenAI JSON Lines, as a pyguard trace and as Parquet, and asks for the same counts."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from pyguard.cli import main
from pyguard.loading import load_runs
from pyguard.store import write_parquet
from pyguard.trace import write_runs

pytest.importorskip("pyarrow")
pytest.importorskip("duckdb")


def _call(i: int, name: str) -> dict:
    return {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": "{}"}}


def _recording(i: int) -> dict:
    """Run i: even runs answer, odd ones end by calling ``wrap_it`` (terminal only when named so); labels on 1 in 3."""
    usage = {"prompt_tokens": 100 + i, "completion_tokens": 10, "total_tokens": 110 + i}
    messages: list[dict] = [
        {"role": "user", "content": f"task {i}"},
        {"role": "assistant", "content": None, "tool_calls": [_call(1, "lookup")], "usage": usage},
        {"role": "tool", "content": "found it", "tool_call_id": "c1"},
    ]
    if i % 2 == 0:
        messages.append({"role": "assistant", "content": "the answer", "usage": usage})
    else:
        messages.append({"role": "assistant", "content": None, "tool_calls": [_call(2, "wrap_it")], "usage": usage})
    run: dict = {"id": f"run-{i}", "task_type": "lookup", "messages": messages}
    if i % 3 == 0:
        run["success"] = i % 2 == 0
    return run


@pytest.fixture
def three_files(tmp_path):
    jsonl = tmp_path / "runs.jsonl"
    jsonl.write_text("".join(json.dumps(_recording(i)) + "\n" for i in range(12)))
    records = list(load_runs(str(jsonl)))
    trace, parquet = tmp_path / "trace.jsonl", tmp_path / "runs.parquet"
    write_runs(trace, records)
    write_parquet(parquet, records)
    return {"openai": jsonl, "pyguard": trace, "parquet": parquet}


def _check_counts(path, *options: str) -> dict:
    result = CliRunner().invoke(main, ["check", str(path), "--json", *options])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["groups"]["*"]["outcomes"]


def _replay_summary(path, *options: str) -> dict:
    result = CliRunner().invoke(main, ["replay", str(path), "--json", "--backend", "serial", *options])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    return {"runs": len(data["runs"]), "outcomes": sorted(str(r.get("outcome")) for r in data["runs"])}


def test_labels_give_the_same_counts_on_every_format(tmp_path, three_files):
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({f"run-{i}": False for i in range(12)}))
    counts = {fmt: _check_counts(p, "--labels", str(labels)) for fmt, p in three_files.items()}
    assert counts["openai"]["succeeded"] == 0 and counts["openai"]["failed"] > 0, counts
    assert counts["parquet"] == counts["openai"] == counts["pyguard"], counts
    unlabelled = _check_counts(three_files["parquet"])
    assert unlabelled["succeeded"] > 0  # the labels changed something: the test can fail
    replays = {fmt: _replay_summary(p, "--labels", str(labels)) for fmt, p in three_files.items()}
    assert replays["parquet"] == replays["openai"] == replays["pyguard"], replays


def test_terminal_tools_give_the_same_counts_on_every_format(three_files):
    counts = {fmt: _check_counts(p, "--terminal-tools", "wrap_it") for fmt, p in three_files.items()}
    assert counts["parquet"] == counts["openai"] == counts["pyguard"], counts
    assert counts["openai"]["expired"] == 0, counts  # wrap_it ends a run: none is cut off
    assert _check_counts(three_files["parquet"])["expired"] > 0  # without the option the odd runs are cut off


def test_calibrate_applies_the_options_to_parquet(tmp_path, three_files):
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({f"run-{i}": False for i in range(12)}))
    reports = {}
    for fmt, path in three_files.items():
        args = ["calibrate", str(path), "--json", "--failure-cost", "1000", "--labels", str(labels)]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        reports[fmt] = [
            (t["runs"], t["successes"], t["failures"], t["censored"]) for t in json.loads(result.stdout)["task_types"]
        ]
    assert reports["parquet"] == reports["openai"] == reports["pyguard"], reports
    assert reports["openai"][0][1] == 0  # every run labelled failed: no success


def test_strict_and_tolerant_loading_agree_on_every_format(tmp_path, three_files):
    import pyarrow.parquet as pq

    bad_jsonl = tmp_path / "bad.jsonl"
    lines = three_files["openai"].read_text().splitlines()
    bad = json.loads(lines[4])
    bad["messages"] = "not a list"
    bad_jsonl.write_text("\n".join([*lines[:4], json.dumps(bad), *lines[5:]]) + "\n")
    table = pq.read_table(three_files["parquet"])
    outcomes = table.column("outcome").to_pylist()
    outcomes[4] = "no such outcome"
    bad_parquet = tmp_path / "bad.parquet"
    pq.write_table(table.set_column(table.schema.get_field_index("outcome"), "outcome", [outcomes]), bad_parquet)

    tolerant = {fmt: _check_counts(p) for fmt, p in (("openai", bad_jsonl), ("parquet", bad_parquet))}
    assert sum(tolerant["openai"].values()) == sum(tolerant["parquet"].values()) == 11, tolerant
    for path in (bad_jsonl, bad_parquet):
        result = CliRunner().invoke(main, ["check", str(path), "--json", "--strict"])
        assert result.exit_code == 2, result.output
