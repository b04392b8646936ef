"""Replay (and anything else that is independent per run) past one core and past one machine.

    report = replay_parallel(records, config)                        # all local cores, processes
    report = replay_parallel("runs.parquet", config)                 # each worker reads its own row groups
    report = replay_parallel(records, config, backend="ray")         # a local Ray instance, or the cluster of
    report = replay_parallel(records, config, backend="ray", address="auto")   # ray.init(address=...)
    results = parallel_map(fn, payloads, backend="processes")        # the primitive, for tuning and the like

Replaying a run depends on that run only, so runs are cut into chunks and the chunks spread over workers; the
result is the same :class:`~pyguard.replay.ReplayReport` as :func:`pyguard.replay.replay_runs`, runs in input
order. Backends: ``"processes"`` (``concurrent.futures`` over a forkserver pool, the default: no JVM or thread
state is forked), ``"ray"`` (``ray`` extra: tasks on a Ray cluster; with no address and no running instance, Ray
starts a local one), ``"serial"`` (in this process; also what a single worker or a handful of runs gets). No
scheduler of pyguard's own: each backend's own pool schedules the chunks. A Parquet path is read by the workers
themselves (on a cluster, the path must be readable on every node).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Literal

from pyguard.base._extras import require
from pyguard.base.errors import ConfigError
from pyguard.base.events import RunRecord
from pyguard.engine import PolicyConfig
from pyguard.loading import load_runs, reads_columns
from pyguard.replay import ReplayReport, ReplayRun, replay_runs, summarise
from pyguard.store.parquet import iter_parquet

__all__: list[str] = []

Backend = Literal["processes", "ray", "serial"]
BACKENDS: tuple[str, ...] = ("processes", "ray", "serial")
_MIN_PARALLEL_RUNS = 256
"""Below this many runs the default stays in-process: starting workers costs more than it saves."""


def default_workers() -> int:
    """The local cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _ray(address: str | None) -> Any:
    ray = require("ray", extra="ray", feature="running replay on Ray")
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    return ray


def parallel_map(
    fn: Callable[[Any], Any],
    payloads: Iterable[Any],
    *,
    backend: Backend = "processes",
    workers: int | None = None,
    address: str | None = None,
    start_method: str = "forkserver",
) -> list[Any]:
    """``[fn(p) for p in payloads]``, spread over ``backend`` (``fn`` must be a module-level function and the
    payloads picklable). Results in payload order. ``start_method``: how worker processes start
    (``multiprocessing``'s forkserver by default; ``spawn`` makes them this process's own children)."""
    items = list(payloads)
    if backend not in BACKENDS:
        raise ConfigError(f"unknown backend {backend!r}; use one of {', '.join(BACKENDS)}")
    if workers is not None and workers < 1:
        raise ConfigError(f"workers={workers!r} must be a positive integer")
    if backend == "ray":
        ray = _ray(address)
        remote = ray.remote(fn)
        return ray.get([remote.remote(p) for p in items])
    n = workers or default_workers()
    if backend == "serial" or n == 1 or len(items) <= 1:
        return [fn(p) for p in items]
    ctx = multiprocessing.get_context(start_method)
    with ProcessPoolExecutor(max_workers=min(n, len(items)), mp_context=ctx) as pool:
        return list(pool.map(fn, items))


def _replay_chunk(payload: tuple[str, Any, dict | None, bool]) -> list[ReplayRun]:
    """One worker's share: ("records", [RunRecord...]) or ("parquet", (path, [row group...])), replayed through
    the policy (given as its dumped config)."""
    kind, data, config, keep = payload
    if kind == "parquet":
        path, groups = data
        records = [run.record for batch in iter_parquet(path, row_groups=groups) for run in batch]
    else:
        records = data
    report = replay_runs(records, PolicyConfig.model_validate(config) if config is not None else None)
    if keep:
        return report.runs
    return [r.model_copy(update={"decisions": []}) for r in report.runs]


def _chunks(items: Sequence[Any], parts: int) -> list[Sequence[Any]]:
    size = max(1, -(-len(items) // parts))
    return [items[i : i + size] for i in range(0, len(items), size)]


def replay_parallel(
    runs: Sequence[RunRecord] | str | os.PathLike[str],
    config: PolicyConfig | None = None,
    *,
    backend: Backend = "processes",
    workers: int | None = None,
    address: str | None = None,
    chunks_per_worker: int = 4,
    keep_decisions: bool = False,
    start_method: str = "forkserver",
    load_options: Mapping[str, Any] | None = None,
) -> ReplayReport:
    """Replay runs (RunRecords, or the path of a pyguard Parquet file or of anything :func:`load_runs` reads)
    through ``config`` on ``backend``; the same report as :func:`pyguard.replay.replay_runs`. Each ReplayRun's
    ``decisions`` are dropped unless ``keep_decisions`` (they are most of what travels back). ``load_options``
    (``strict``, ``terminal_tools``, ``labels``) are :func:`pyguard.loading.load_runs`' for a path: with any of them
    a Parquet file is loaded by it like every other format, not read row group by row group in the workers."""
    dumped = config.model_dump(mode="json") if config is not None else None
    n = workers or (default_workers() if backend != "ray" else 0)
    if isinstance(runs, str | os.PathLike):
        path = str(runs)
        options = {k: v for k, v in (load_options or {}).items() if v not in (None, False)}
        if reads_columns(path, **options):
            pq = require("pyarrow.parquet", extra="columnar", feature="Parquet traces")
            groups = list(range(pq.ParquetFile(path).num_row_groups))
            parts = max(1, (n or 1) * chunks_per_worker)
            payloads: list[tuple[str, Any, dict[str, Any] | None, bool]]
            payloads = [("parquet", (path, list(g)), dumped, keep_decisions) for g in _chunks(groups, parts) if g]
            results = parallel_map(
                _replay_chunk, payloads, backend=backend, workers=workers, address=address, start_method=start_method
            )
            replayed = [r for chunk in results for r in chunk]
            return ReplayReport(runs=replayed, summary=summarise(replayed))
        runs = load_runs(path, **options)
    records = list(runs)
    if backend == "processes" and workers is None and len(records) < _MIN_PARALLEL_RUNS:
        backend = "serial"
    parts = max(1, (n or 1) * chunks_per_worker)
    payloads = [("records", list(c), dumped, keep_decisions) for c in _chunks(records, parts)]
    results = parallel_map(
        _replay_chunk, payloads, backend=backend, workers=workers, address=address, start_method=start_method
    )
    replayed = [r for chunk in results for r in chunk]
    return ReplayReport(runs=replayed, summary=summarise(replayed))
