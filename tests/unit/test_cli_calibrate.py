"""``pyguard calibrate`` through click's CliRunner: JSON shape, --out, exit codes and messages."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from pyguard.calibrate.runs import RunStatus
from pyguard.calibrate.synthetic import SyntheticType, sample_runs, to_records
from pyguard.cli import main
from pyguard.trace import write_runs


def _reject_nan(value: str) -> float:
    raise AssertionError(f"JSON holds {value}")


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cal") / "runs.jsonl"
    a = sample_runs(SyntheticType(name="lookup", cancel_share=0.1), 60, np.random.default_rng(0))
    b = sample_runs(SyntheticType(name="incident", median_calls=7), 60, np.random.default_rng(1))
    write_runs(path, to_records(a, prefix="a") + to_records(b, prefix="b"))
    return path


def _openai_run(i: int, calls: int, status: RunStatus, usage: bool = True, task_type: str | None = "lookup") -> dict:
    messages: list[dict] = [{"role": "user", "content": f"task {i}"}]
    for k in range(1, calls + 1):
        final = k == calls and status is not RunStatus.CENSORED
        msg: dict = {"role": "assistant", "content": "answer" if final else None}
        if not final:
            msg["tool_calls"] = [{"id": f"c{k}", "type": "function", "function": {"name": "t", "arguments": "{}"}}]
        if usage:
            msg["usage"] = {"prompt_tokens": 300 * k, "completion_tokens": 20, "total_tokens": 300 * k + 20}
        messages.append(msg)
        if not final:
            messages.append({"role": "tool", "tool_call_id": f"c{k}", "content": f"result {k}"})
    run: dict = {"id": f"o{i}", "messages": messages}
    if task_type is not None:
        run["task_type"] = task_type
    if status is not RunStatus.CENSORED:
        run["success"] = status is RunStatus.SUCCESS
    return run


def _write_openai(path: Path, runs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    return path


def _invoke(*args: str):  # noqa: ANN202
    return CliRunner().invoke(main, ["calibrate", *args], env={"COLUMNS": "160"})


def test_json_output(trace: Path) -> None:
    result = _invoke(str(trace), "--failure-cost", "1", "--price-per-1k-tokens", "0.01", "--json", "--bootstrap", "100")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout, parse_constant=_reject_nan)
    assert [t["task_type"] for t in data["task_types"]] == ["incident", "lookup"]
    for t in data["task_types"]:
        assert t["runs"] == 60 and 0 < t["successes"] <= 60
        assert len(t["c"]) == len(t["expected_cost"]) == t["horizon"]
        assert t["ci_low"] <= t["recommended_max_iterations"] <= t["ci_high"]
        assert t["expected_cost"][t["recommended_max_iterations"] - 1] == pytest.approx(min(t["expected_cost"]))


def test_same_seed_same_json(trace: Path) -> None:
    args = (str(trace), "--failure-cost", "2", "--json", "--bootstrap", "50", "--seed", "7")
    assert _invoke(*args).stdout == _invoke(*args).stdout


def test_table_and_report(trace: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = _invoke(
        str(trace), "--failure-cost", "1", "--price-per-1k-tokens", "0.01", "--out", str(out), "--bootstrap", "50"
    )
    assert result.exit_code == 0, result.output
    assert "lookup" in result.stdout and "E[cost]" in result.stdout and "c(N*)" in result.stdout
    for name in (
        "report.md",
        "calibration.json",
        "CalibratedLimits.java",
        "calibration.properties",
        "pyguard.toml",
        "plots/c_lookup.png",
        "plots/cost_lookup.png",
        "plots/c_incident.png",
        "plots/cost_incident.png",
    ):
        assert (out / name).is_file(), name
    assert "maxToolCallingRoundTrips" in (out / "CalibratedLimits.java").read_text()
    assert "[tool.pyguard.task_types.lookup]" in (out / "pyguard.toml").read_text()


def test_openai_format(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    runs = [
        _openai_run(i, int(rng.integers(2, 7)), RunStatus(int(rng.choice([0, 1, 1, 1, 2]))), task_type=None)
        for i in range(40)
    ]
    path = _write_openai(tmp_path / "o.jsonl", runs)
    result = _invoke(str(path), "--format", "openai", "--failure-cost", "5000", "--json", "--bootstrap", "50")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout, parse_constant=_reject_nan)
    assert [t["task_type"] for t in data["task_types"]] == ["(untyped)"]  # runs without a type form one group
    assert data["cost_unit"] == "tokens"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--failure-cost", "-3"), "failure cost must be a positive finite number"),
        ((), "missing --failure-cost"),
        (("--failure-cost", "1", "--price-per-1k-tokens", "-1"), "price per 1k tokens"),
        (("--failure-cost", "1", "--bootstrap", "5"), "bootstrap"),
    ],
)
def test_bad_arguments_exit_2(trace: Path, args: tuple[str, ...], message: str) -> None:
    result = _invoke(str(trace), *args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.output


def test_bad_runs_exit_2(tmp_path: Path) -> None:
    ok = [_openai_run(i, 3, RunStatus.SUCCESS) for i in range(3)]
    cases = {
        "single": ([ok[0]], "'lookup' has 1 run(s)"),
        "no tokens": ([_openai_run(i, 3, RunStatus.SUCCESS, usage=False) for i in range(4)], "has token counts"),
    }
    for name, (runs, message) in cases.items():
        path = _write_openai(tmp_path / f"{name.replace(' ', '_')}.jsonl", runs)
        result = _invoke(str(path), "--failure-cost", "1")
        assert result.exit_code == 2, name
        assert message in result.stderr, (name, result.stderr)
        assert "Traceback" not in result.output


def test_a_type_without_successes_says_no_cap_pays_off(tmp_path: Path) -> None:
    path = _write_openai(tmp_path / "fail.jsonl", [_openai_run(i, 3, RunStatus.FAILURE) for i in range(4)])
    result = _invoke(str(path), "--failure-cost", "1", "--json")
    assert result.exit_code == 0, result.output
    (t,) = json.loads(result.stdout)["task_types"]
    assert t["recommended_max_iterations"] is None and t["policy"] is None
    assert "no cap pays off" in t["no_cap"]


def test_mixed_formats_and_missing_path_exit_2(trace: Path, tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(trace.read_bytes())
    _write_openai(folder / "b.jsonl", [_openai_run(i, 3, RunStatus.SUCCESS) for i in range(3)])
    result = _invoke(str(folder), "--failure-cost", "1")  # each file is read in its own format
    assert result.exit_code == 0, result.stderr
    result = _invoke(str(tmp_path / "nope.jsonl"), "--failure-cost", "1")
    assert result.exit_code == 2 and "does not exist" in result.stderr
