"""The scale benchmark suite runs (tiny sizes, in-process) and returns well-formed JSON; Parquet and JSON Lines
give the same answers. No timing is asserted."""

import json
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("duckdb")

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def scale(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(BENCH))
    import suites.scale as scale

    monkeypatch.setattr(scale, "SIZES", {True: {"parquet": 600, "jsonl": 240}, False: {"parquet": 600, "jsonl": 240}})
    monkeypatch.setattr(scale, "WORKDIR", tmp_path)
    monkeypatch.setattr(scale, "IN_PROCESS", True)
    monkeypatch.setattr(scale, "REPLAY_WORKERS", 1)
    monkeypatch.setattr(scale, "BOOTSTRAP", 40)
    return scale


def test_scale_runs_and_its_json_is_well_formed(scale):
    result = json.loads(json.dumps(scale.run(quick=True), allow_nan=False))
    assert result["command"] == "python benchmarks/run.py scale --quick"
    assert result["data"]["parquet_runs"] == 600 and result["data"]["jsonl_runs"] == 240
    assert result["data"]["parquet_mb"] > 0 and result["data"]["jsonl_mb"] > result["data"]["small_parquet_mb"]
    steps = result["steps"]
    assert [(s["task"], s["format"], s["runs"]) for s in steps] == [
        ("check", "parquet", 600),
        ("calibrate", "parquet", 600),
        ("replay", "parquet", 600),
        ("check", "parquet", 240),
        ("check", "jsonl", 240),
        ("calibrate", "parquet", 240),
        ("calibrate", "jsonl", 240),
        ("replay", "parquet", 240),
        ("replay", "jsonl", 240),
    ]
    for s in steps:
        assert s["wall_s"] >= 0 and s["runs_per_s"] > 0 and s["peak_rss_mb"] > 0
    same = [s for s in steps if s["runs"] == 240]
    for task in ("check", "calibrate", "replay"):  # the two formats give the same answer on the same runs
        answers = [s["answer"] for s in same if s["task"] == task]
        assert answers[0] == answers[1], task
    assert next(s for s in steps if s["task"] == "check" and s["runs"] == 600)["answer"]["runs"] == 600
    assert set(result["parquet_vs_jsonl_runs_per_s"]) == {"check", "calibrate", "replay"}
    assert not list(Path(scale.WORKDIR).rglob("*.parquet"))  # the data is removed afterwards
