"""load_runs: format detection, directories, mixed formats, unique ids."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pyguard.base.errors import InputError, TraceFormatError
from pyguard.loading import detect_format, load_runs, load_traces

RECORDINGS = Path(__file__).parents[2] / "data" / "recordings"
PYGUARD = RECORDINGS / "pyguard_trace.jsonl"
OPENAI = RECORDINGS / "openai_runs.jsonl"


def test_detects_each_format() -> None:
    assert detect_format(PYGUARD) == "pyguard"
    assert detect_format(OPENAI) == "openai"
    assert load_runs(PYGUARD) == load_runs(PYGUARD, format="pyguard")
    assert load_runs(OPENAI) == load_runs(OPENAI, format="openai")


def test_json_array_is_detected_as_openai(tmp_path: Path) -> None:
    objects = [json.loads(line) for line in OPENAI.read_text().splitlines()]
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(objects, indent=1))
    assert detect_format(path) == "openai"
    assert len(load_runs(path)) == 4


def test_ambiguous_first_record_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps({"type": "run_start", "messages": []}) + "\n")
    with pytest.raises(TraceFormatError, match="ambiguous"):
        load_runs(path)
    path.write_text(json.dumps({"hello": 1}) + "\n")
    with pytest.raises(TraceFormatError, match="cannot tell the format"):
        load_runs(path)


def test_directory_of_one_format(tmp_path: Path) -> None:
    shutil.copy(OPENAI, tmp_path / "a.jsonl")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.jsonl").write_text(
        json.dumps({"id": "extra", "messages": [{"role": "assistant", "content": "x"}]})
    )
    (tmp_path / ".hidden.jsonl").write_text("garbage")
    (tmp_path / "notes.txt").write_text("ignored")
    ids = [r.run_id for r in load_runs(tmp_path)]
    assert ids == ["lookup-ok", "loop-fail", "cutoff", "a[3]", "extra"]


def test_directory_mixing_formats_loads_each_file_in_its_own_format() -> None:
    runs = load_runs(RECORDINGS / "pyguard_trace.jsonl") + load_runs(RECORDINGS / "openai_runs.jsonl")
    mixed = load_runs([RECORDINGS / "pyguard_trace.jsonl", RECORDINGS / "openai_runs.jsonl"])
    assert [r.run_id for r in mixed] == [r.run_id for r in runs]


def test_explicit_format_overrides_detection_and_reports_mismatch() -> None:
    with pytest.raises(InputError, match="format='pyguard'"):
        load_runs(PYGUARD, format="openai", strict=True)
    with pytest.raises(InputError, match="no records that could be read"):
        load_runs(PYGUARD, format="openai")  # tolerant: every record skipped, and nothing left is an error
    with pytest.raises(TraceFormatError, match="format='openai'"):
        load_runs(OPENAI, format="pyguard")
    with pytest.raises(InputError, match="unknown format 'csv'"):
        load_runs(OPENAI, format="csv")


def test_duplicate_run_ids_across_files(tmp_path: Path) -> None:
    shutil.copy(PYGUARD, tmp_path / "a.jsonl")
    shutil.copy(PYGUARD, tmp_path / "b.jsonl")
    with pytest.raises(InputError, match="appears in"):
        load_runs(tmp_path, strict=True)
    runs = load_runs(tmp_path)  # tolerant: the second copy of each run is skipped and counted
    assert len(runs) == len(load_runs(PYGUARD)) and runs.skipped == {"duplicate run id": len(runs)}


def test_empty_inputs(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no .jsonl"):
        load_runs(tmp_path)
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(InputError, match="no records that could be read"):
        load_runs(tmp_path)
    assert load_runs(tmp_path / "empty.jsonl", format="pyguard") == []


def test_load_traces_reports_torn_tail(tmp_path: Path) -> None:
    data = PYGUARD.read_bytes()
    path = tmp_path / "t.jsonl"
    path.write_bytes(data[: len(data) - 30])
    (tf,) = load_traces(path)
    assert tf.torn_line == len(data.splitlines())
    assert [r.run_id for r in tf.incomplete] == ["inc-1"]
