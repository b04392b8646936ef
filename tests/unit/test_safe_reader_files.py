"""One safe reader for every file a user hands pyguard (issue 33): policies (TOML and ``[tool.pyguard]``), scenarios,
task files for ``calibrate --live``, labels, baselines and escalation handles are read with the same depth, size and
integer limits as recordings; a hostile file is refused with one message naming the file and the limit (exit status
2 in the CLI), never a RecursionError and a traceback, in time linear in its size (a 100,000-part dotted key cost
``tomllib`` 21 s before)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pyguard.base.errors import ConfigError, HandleError, InputError
from pyguard.base.safe_reader import MAX_DEPTH, load_toml_text, toml_nesting
from pyguard.check.baseline import read_baseline
from pyguard.cli import main
from pyguard.engine import PolicyConfig
from pyguard.escalation import EscalationHandle
from pyguard.jvm.scenarios import load_scenario
from pyguard.live.calibration.tasks import load_tasks
from pyguard.trace.labels import load_labels

RECORDINGS = Path(__file__).parents[1] / "data" / "recordings"
LIMIT = f"limit of {MAX_DEPTH} levels"

HOSTILE_TOML = {
    "nested_arrays": "base_budget = " + "[" * 500 + "]" * 500 + "\n",
    "nested_inline_tables": "x = " + "{a = " * 20_000 + "1" + "}" * 20_000 + "\n",
    "dotted_header": "[" + ".".join(f"k{i}" for i in range(100_000)) + "]\nx = 1\n",
    "dotted_key": ".".join(f"k{i}" for i in range(100_000)) + " = 1\n",
    "numeric_dotted_header": "[" + ".".join(str(i) for i in range(50_000)) + "]\n",
}


def _deep_json(levels: int) -> str:
    return '{"turns": ' + "[" * levels + "]" * levels + "}"


@pytest.mark.parametrize("kind", sorted(HOSTILE_TOML))
@pytest.mark.parametrize("as_pyproject", [False, True])
def test_a_hostile_policy_exits_2_with_one_line_naming_the_file_and_the_limit(tmp_path, kind, as_pyproject):
    text = HOSTILE_TOML[kind]
    path = tmp_path / ("pyproject.toml" if as_pyproject else "policy.toml")
    if as_pyproject:
        text = text.replace("[", "[tool.pyguard.", 1) if text.startswith("[") else "[tool.pyguard]\n" + text
    path.write_text(text)
    result = CliRunner().invoke(main, ["replay", str(RECORDINGS / "openai_runs.jsonl"), "--config", str(path)])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)  # no traceback
    message = result.output.strip()
    assert "\n" not in message and str(path) in message and LIMIT in message, message


def test_a_policy_with_a_huge_integer_or_over_the_size_limit_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "policy.toml"
    path.write_text("base_budget = " + "9" * 5_000 + "\n")
    with pytest.raises(ConfigError, match="an integer is longer than the limit of 4300 digits"):
        PolicyConfig.from_toml(path)
    monkeypatch.setattr("pyguard.base.safe_reader.MAX_FILE_BYTES", 1_000)
    path.write_text("base_budget = 8\n" + "# padding\n" * 200)
    with pytest.raises(ConfigError, match=r"policy\.toml' is larger than the limit of 1000 bytes"):
        PolicyConfig.from_toml(path)


def test_a_real_policy_reads_as_before():
    text = '[stall]\nwindow = 4\n[task_types."a.b"]\nbase_budget = 3\nhard_cap = 9\nx = [1.5, 2.25, {a.b.c = 3}]\n'
    assert toml_nesting(text) <= 6
    assert load_toml_text(text, source="t")["task_types"]["a.b"]["x"][2] == {"a": {"b": {"c": 3}}}


def test_a_scenario_nested_1000_deep_is_refused_naming_the_file_and_the_limit(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text(_deep_json(1_000))
    with pytest.raises(InputError, match=rf"scenario file '{path}'.*{LIMIT}|scenario file.*recursion limit"):
        load_scenario(path)
    path.write_text(_deep_json(300))  # within Python's recursion limit, over pyguard's
    with pytest.raises(InputError, match=rf"scenario file '{path}' is nested more than {MAX_DEPTH} levels"):
        load_scenario(path)
    deep: list = []
    for _ in range(2_000):
        deep = [deep]
    with pytest.raises(InputError, match=LIMIT):
        load_scenario({"turns": deep})  # a scenario given as a dict: refused before json.dumps recurses


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_a_task_file_nested_too_deep_is_refused_naming_it(tmp_path, suffix):
    path = tmp_path / f"tasks{suffix}"
    path.write_text(HOSTILE_TOML["nested_inline_tables"] if suffix == ".toml" else _deep_json(300))
    with pytest.raises(InputError, match=rf"task set '{path}'.*{LIMIT}"):
        load_tasks(path)
    result = CliRunner().invoke(
        main, ["calibrate", "--live", str(path), "--failure-cost", "10", "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 2 and LIMIT in result.output and "\n" not in result.output.strip(), result.output


def test_labels_nested_too_deep_are_refused_naming_the_file(tmp_path):
    path = tmp_path / "labels.json"
    path.write_text('{"run-1": ' + "[" * 300 + "]" * 300 + "}")
    with pytest.raises(InputError, match=rf"labels file '{path}'.*{LIMIT}"):
        load_labels(path)


def test_a_baseline_nested_too_deep_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "base.json"
    path.write_text('{"format": "pyguard-check-baseline", "x": ' + "[" * 300 + "]" * 300 + "}")
    with pytest.raises(InputError, match=rf"the baseline '{path}'.*{LIMIT}"):
        read_baseline(path)


def test_an_escalation_handle_nested_too_deep_is_refused_naming_the_limit():
    text = json.dumps({"kind": "pyguard.escalation", "version": 1, "x": "X"}).replace('"X"', "[" * 300 + "]" * 300)
    with pytest.raises(HandleError, match=rf"the escalation handle.*{LIMIT}"):
        EscalationHandle.from_json(text)
