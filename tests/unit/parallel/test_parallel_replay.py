"""Replay spread over worker processes, or over a local Ray instance, gives exactly the serial report."""

from __future__ import annotations

import sys

import pytest

from pyguard.base.errors import ConfigError, MissingExtraError
from pyguard.base.events import RunEnd, RunRecord, RunStart
from pyguard.engine import PolicyConfig
from pyguard.parallel import parallel_map, replay_parallel
from pyguard.replay import replay_runs
from pyguard.testing.synthetic import labelled_set

TIGHT = PolicyConfig(base_budget=3, hard_cap=5)


def records() -> list[RunRecord]:
    out = []
    for lr in labelled_set(range(3)):
        out.append(
            RunRecord(
                start=RunStart(run_id=lr.name, task_type=lr.kind),
                events=list(lr.events),
                end=RunEnd(run_id=lr.name, outcome="succeeded", iterations=len(lr.events)),
            )
        )
    return out


def light(report) -> dict:
    return report.to_dict()


def test_processes_give_the_serial_report():
    runs = records()
    serial = replay_runs(runs, TIGHT)
    parallel = replay_parallel(runs, TIGHT, workers=2, chunks_per_worker=3)
    assert light(parallel) == light(serial)
    assert [r.end for r in parallel.runs] == [r.end for r in serial.runs]
    assert all(r.decisions == [] for r in parallel.runs)  # not shipped back unless asked
    kept = replay_parallel(runs[:6], TIGHT, backend="serial", keep_decisions=True)
    assert [r.decisions for r in kept.runs] == [r.decisions for r in serial.runs[:6]]


def test_a_parquet_file_is_read_by_the_workers(tmp_path):
    pytest.importorskip("pyarrow")
    from pyguard.store import write_parquet

    runs = records()
    write_parquet(tmp_path / "r.parquet", runs, row_group_size=10)
    assert light(replay_parallel(tmp_path / "r.parquet", TIGHT, workers=2)) == light(replay_runs(runs, TIGHT))
    assert light(replay_parallel(str(tmp_path / "r.parquet"), backend="serial")) == light(replay_runs(runs))


def test_bad_backend_and_workers_are_config_errors():
    with pytest.raises(ConfigError, match="unknown backend 'spark'"):
        parallel_map(abs, [1], backend="spark")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="workers=0"):
        parallel_map(abs, [1], workers=0)
    assert parallel_map(abs, [-1, -2, 3], backend="serial") == [1, 2, 3]


def test_missing_ray_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(MissingExtraError, match=r"extra 'ray'.*pip install 'pyguard\[ray\]'"):
        replay_parallel(records()[:2], backend="ray")


@pytest.fixture(scope="session")
def local_ray():
    """One small local Ray instance for the test session (2 CPUs)."""
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_ray_gives_the_serial_report(local_ray, tmp_path):
    runs = records()
    assert light(replay_parallel(runs, TIGHT, backend="ray", workers=2)) == light(replay_runs(runs, TIGHT))
    pytest.importorskip("pyarrow")
    from pyguard.store import write_parquet

    write_parquet(tmp_path / "r.parquet", runs, row_group_size=8)
    assert light(replay_parallel(tmp_path / "r.parquet", backend="ray", workers=2)) == light(replay_runs(runs))
