"""DuckDB summaries equal the in-Python check and calibration on the same runs, and the CLI uses them."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from store_support import guarded_runs, mixed_runs

pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")

from pyguard.base.errors import InputError  # noqa: E402
from pyguard.base.events import RunRecord, RunStart  # noqa: E402
from pyguard.calibrate import calibrate_runs, extract_runs, make_config  # noqa: E402
from pyguard.calibrate.parquet import calibrate_parquet, calibration_arrays  # noqa: E402
from pyguard.check import GateConfig, check_runs, policy_replayer  # noqa: E402
from pyguard.check.outcomes import resolve_runs  # noqa: E402
from pyguard.check.parquet import check_parquet, check_summary  # noqa: E402
from pyguard.check.summary import summarize  # noqa: E402
from pyguard.cli import main  # noqa: E402
from pyguard.store import read_parquet, write_parquet  # noqa: E402
from pyguard.store.synthetic import synthetic_table  # noqa: E402
from pyguard.trace import write_runs  # noqa: E402


@pytest.fixture
def mixed(tmp_path):
    records, decisions = mixed_runs()
    path = tmp_path / "runs.parquet"
    write_parquet(path, records, decisions=decisions, row_group_size=16)
    return records, path


def test_check_summary_equals_the_python_summary_including_replayed_recordings(mixed):
    records, path = mixed
    expected = summarize(resolve_runs(records, None, lambda: policy_replayer(None)))
    got = check_summary(path, lambda: policy_replayer(None))
    assert expected.replayed == got.replayed == 4  # the four OpenAI recordings
    assert got == expected
    assert check_parquet(
        path, GateConfig(max_stall_rate=0.1), make_replayer=lambda: policy_replayer(None)
    ) == check_runs(records, GateConfig(max_stall_rate=0.1), make_replayer=lambda: policy_replayer(None))


def test_check_summary_refuses_what_the_gate_refuses(tmp_path):
    records, _ = guarded_runs(1)
    cut = [e.model_copy(update={"run_id": "open"}) for e in records[0].events]
    write_parquet(tmp_path / "open.parquet", records + [RunRecord(start=RunStart(run_id="open"), events=cut)])
    with pytest.raises(InputError, match="'open' has no run_end footer"):
        check_summary(tmp_path / "open.parquet")
    star = records[0].model_copy(update={"start": records[0].start.model_copy(update={"task_type": "*"})})
    write_parquet(tmp_path / "star.parquet", [star])
    with pytest.raises(InputError, match="reserves"):
        check_summary(tmp_path / "star.parquet")
    write_parquet(tmp_path / "rec.parquet", mixed_runs()[0])
    with pytest.raises(InputError, match="need a policy replay"):
        check_summary(tmp_path / "rec.parquet")


@pytest.fixture
def synthetic(tmp_path):
    """Enough runs per task type for a calibration (the mixed set has too few)."""
    import pyarrow.parquet as pq

    path = tmp_path / "syn.parquet"
    pq.write_table(synthetic_table(400, seed=3), path, row_group_size=100)
    runs = read_parquet(path)
    return [r.record for r in runs], path


def test_calibration_arrays_equal_extract_runs(mixed):
    records, path = mixed
    a, b = extract_runs(records), calibration_arrays(path)
    assert sorted(a.task_types) == list(b.task_types)
    for name in b.task_types:
        one_a, one_b = a.select(a.task_types.index(name)), b.select(b.task_types.index(name))
        for column in ("iterations", "status", "token_run", "token_iter", "token_value"):
            assert np.array_equal(getattr(one_a, column), getattr(one_b, column)), (name, column)


def test_conversations_split_into_turns_and_labels_as_in_python(tmp_path):
    """Real-shaped recordings (conversations of 1-3 user turns, final tool calls, reward labels)."""
    from pathlib import Path

    from pyguard.loading import load_runs

    records = list(load_runs(Path(__file__).resolve().parents[2] / "data" / "mixed_runs.jsonl"))
    path = tmp_path / "mixed.parquet"
    write_parquet(path, records)
    a, b = extract_runs(records), calibration_arrays(path)
    assert a.multi_turn and set(a.multi_turn) == set(b.multi_turn)
    assert a.runs == b.runs and a.run_count == b.run_count == len(records)
    for name in b.task_types:
        one_a, one_b = a.select(a.task_types.index(name)), b.select(b.task_types.index(name))
        for column in ("iterations", "status", "token_run", "token_iter", "token_value", "run_index"):
            assert np.array_equal(getattr(one_a, column), getattr(one_b, column)), (name, column)
    replayer = lambda: policy_replayer(None)  # noqa: E731
    assert check_summary(path, replayer) == summarize(resolve_runs(records, None, replayer))


def test_calibrate_parquet_equals_calibrate_runs(synthetic):
    records, path = synthetic
    config = make_config(failure_cost=5000.0, bootstrap=50)
    report = calibrate_parquet(path, config)
    assert report == calibrate_runs(records, config)
    assert [t.task_type for t in report.task_types] == ["lookup", "refund", "triage"]


def test_cli_gives_the_same_answers_from_parquet_and_jsonl(tmp_path, synthetic):
    records, path = synthetic
    records = records[:150]
    write_runs(tmp_path / "runs.jsonl", records)
    write_parquet(tmp_path / "runs.parquet", records)
    runner = CliRunner()
    for args in (
        ["check", "--json", "--max-stall-rate", "0.5"],
        ["calibrate", "--json", "--failure-cost", "3000", "--bootstrap", "40"],
        ["replay", "--json"],
    ):
        outs = []
        for name in ("runs.jsonl", "runs.parquet"):
            res = runner.invoke(main, [args[0], str(tmp_path / name), *args[1:]])
            assert res.exit_code in (0, 1), res.output
            outs.append(json.loads(res.stdout))
        assert outs[0] == outs[1], args[0]


def test_cli_names_a_foreign_parquet_file(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"x": [1]}), tmp_path / "f.parquet")
    res = CliRunner().invoke(main, ["check", str(tmp_path / "f.parquet")])
    assert res.exit_code == 2 and "not pyguard runs" in res.output


def test_check_summary_counts_an_observe_mode_run_as_the_stop_it_recorded(tmp_path):
    # a guard in observe (or reflect) mode lets the run finish and records the stop it did not act on in the footer
    # (evidence["observed_stop"]); the check counts that run as the stop, at its iteration, whatever the run read
    records, _ = guarded_runs(1)
    watched = next(r for r in records if r.end is not None and r.end.outcome.value == "succeeded" and len(r.events) > 2)
    observed = {"outcome": "stalled", "iteration": 2, "rule": "cycle", "mode": "observe"}
    end = watched.end.model_copy(update={"evidence": {**watched.end.evidence, "observed_stop": observed}})
    runs = [r if r is not watched else r.model_copy(update={"end": end}) for r in records]
    path = tmp_path / "observed.parquet"
    write_parquet(path, runs)
    expected = summarize(resolve_runs(runs, "pyguard"))
    got = check_summary(path)
    assert got == expected
    watched_type = watched.task_type or "untyped"
    assert got.groups[watched_type].outcomes.get("stalled", 0) >= 1


def test_the_old_import_path_still_works_with_a_warning():
    import pyguard.store.summaries as old

    with pytest.warns(DeprecationWarning, match="pyguard.check.parquet"):
        assert old.check_parquet is check_parquet
    with pytest.warns(DeprecationWarning, match="pyguard.calibrate.parquet"):
        assert old.calibration_arrays is calibration_arrays
    with pytest.raises(AttributeError, match="nothing_here"):
        old.nothing_here  # noqa: B018
