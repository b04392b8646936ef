"""Replay, check and calibrate on many runs: Parquet (DuckDB summaries, workers reading their own row groups)
against JSON Lines traces (every run loaded into Python objects, as before).

``python benchmarks/run.py scale``: check and calibrate on 1,000,000 runs in Parquet; the three tasks on the
first 100,000 of them in Parquet and in JSON Lines, side by side (loading a million runs' Python objects from JSON
Lines needs several GB, and replaying a million runs takes about ten minutes on two cores: set
``PYGUARD_SCALE_REPLAY_ALL=1`` to replay the 1,000,000 too). ``--quick``: 5,000 and 2,000 runs.

Runs are synthetic (:func:`pyguard.store.synthetic.synthetic_table`): three task types, about 7 model calls per
run with a tool call and its result each, a quarter of them looping. Each step runs in a fresh process and
reports its wall time, its peak resident memory (``VmHWM``) and, for replay, its worker processes' peak
(``ru_maxrss`` of the children: an upper bound, since a spawned worker's figure starts from its parent's memory at
the time it started, which for the JSON Lines path includes the loaded runs), and runs per second:

- ``check``: the gate's summary per task type (outcomes, iteration histogram, tokens). Parquet: DuckDB on the
  file (:func:`pyguard.check.parquet.check_parquet`); JSONL: ``load_traces`` then ``check_runs``, as ``pyguard check``.
- ``calibrate``: c(n), expected cost, N* with 1,000 bootstrap resamples per task type. Parquet: DuckDB builds the
  columns (:func:`pyguard.calibrate.parquet.calibrate_parquet`); JSONL: ``load_runs`` then ``calibrate_runs``.
- ``replay``: every run through the default policy on all local cores (:func:`pyguard.parallel.replay_parallel`,
  worker processes). Parquet: the workers read their row groups; JSONL: the runs are loaded, then shipped.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import resource
import time
from pathlib import Path
from typing import Any

SIZES = {False: {"parquet": 1_000_000, "jsonl": 100_000}, True: {"parquet": 5_000, "jsonl": 2_000}}
"""Runs in the large Parquet file, and in the side-by-side comparison (Parquet and JSON Lines)."""
ROW_GROUP = 50_000
WORKDIR = Path(os.environ.get("PYGUARD_SCALE_DIR", "/tmp/pyguard-scale"))
TASKS = ("check", "calibrate", "replay")
IN_PROCESS = False
"""Tests set this: run each step in this process (no fresh process, so its memory figure is not the step's)."""
BOOTSTRAP = 1000
"""Bootstrap resamples of the calibration (pyguard calibrate's default)."""
REPLAY_WORKERS: int | None = None
"""Worker processes for replay (None: all local cores)."""


def _jsonl_from_table(table: Any, path: Path) -> None:
    """The same runs as a pyguard JSONL trace, written straight from the Arrow rows."""

    def clean(d: dict) -> dict:
        return {k: v for k, v in d.items() if v is not None}

    with open(path, "w", encoding="utf-8") as f:
        for batch in table.to_batches(max_chunksize=10_000):
            for row in batch.to_pylist():
                rid = row["run_id"]
                start = clean({k: row[k] for k in ("task_type", "task", "agent_style", "started_at_ms")})
                f.write(json.dumps({"type": "run_start", "version": 1, "run_id": rid, **start}) + "\n")
                for e in row["events"]:
                    e = clean(e)
                    e["tool_calls"] = [clean(c) for c in e["tool_calls"]]
                    e["observations"] = [clean(o) for o in e["observations"]]
                    f.write(json.dumps({"type": "iteration", "run_id": rid, **e}) + "\n")
                end = clean(
                    {
                        k: row[k]
                        for k in (
                            "outcome",
                            "reason",
                            "answer",
                            "iterations",
                            "tool_calls",
                            "input_tokens",
                            "output_tokens",
                            "total_tokens",
                            "censored",
                        )
                    }
                )
                f.write(json.dumps({"type": "run_end", "run_id": rid, **end}) + "\n")


def _prepare(sizes: dict[str, int], workdir: Path) -> dict:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from pyguard.store.parquet import run_schema
    from pyguard.store.synthetic import synthetic_batches

    workdir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    calls, small = 0, []
    with pq.ParquetWriter(workdir / "runs.parquet", run_schema(), compression="zstd") as writer:
        for table in synthetic_batches(sizes["parquet"], seed=0, batch=min(ROW_GROUP, sizes["parquet"])):
            writer.write_table(table, row_group_size=ROW_GROUP)
            calls += pc.sum(table.column("iterations")).as_py()
            if sum(t.num_rows for t in small) < sizes["jsonl"]:
                small.append(table)
    t1 = time.perf_counter()
    head = pa.concat_tables(small).slice(0, sizes["jsonl"])
    pq.write_table(
        head, workdir / "small.parquet", row_group_size=max(1, min(ROW_GROUP, sizes["jsonl"] // 8)), compression="zstd"
    )
    _jsonl_from_table(head, workdir / "runs.jsonl")
    t2 = time.perf_counter()
    return {
        "parquet_runs": sizes["parquet"],
        "jsonl_runs": sizes["jsonl"],
        "model_calls_per_run": round(calls / sizes["parquet"], 2),
        "parquet_mb": round((workdir / "runs.parquet").stat().st_size / 1e6, 1),
        "small_parquet_mb": round((workdir / "small.parquet").stat().st_size / 1e6, 1),
        "jsonl_mb": round((workdir / "runs.jsonl").stat().st_size / 1e6, 1),
        "generate_parquet_s": round(t1 - t0, 2),
        "write_jsonl_s": round(t2 - t1, 2),
    }


def _peak_rss_mb() -> float:
    """This process's own peak resident memory (VmHWM: reset at exec, unlike ru_maxrss, which a spawned process
    inherits from its parent)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:  # pragma: no cover - not Linux
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _step(task: str, fmt: str, path: str) -> dict:
    """One measured step (runs in its own process). Returns its figures and a digest of its answer."""
    from pyguard.calibrate import make_config

    config = make_config(failure_cost=20_000.0, bootstrap=BOOTSTRAP)
    t0 = time.perf_counter()
    if fmt == "parquet":
        if task == "check":
            from pyguard.check.parquet import check_parquet

            report = check_parquet(path)
            digest = {
                "runs": report.summary.overall.n,
                "stalled": report.summary.overall.figures()["outcomes"]["stalled"],
            }
        elif task == "calibrate":
            from pyguard.calibrate.parquet import calibrate_parquet

            cal = calibrate_parquet(path, config)
            digest = {t.task_type: t.recommended_max_iterations for t in cal.task_types}
        else:
            from pyguard.parallel import replay_parallel

            rep = replay_parallel(
                path, workers=REPLAY_WORKERS, start_method="spawn"
            )  # spawn: workers are ours, their peak memory counts
            digest = {"runs": rep.summary.runs, "stopped": rep.summary.stopped}
    else:
        from pyguard.loading import load_runs, load_traces

        if task == "check":
            from pyguard.check import check_runs

            records = [r.record for tf in load_traces(path) for r in tf.runs]
            report = check_runs(records, fmt="pyguard")
            digest = {
                "runs": report.summary.overall.n,
                "stalled": report.summary.overall.figures()["outcomes"]["stalled"],
            }
        elif task == "calibrate":
            from pyguard.calibrate import calibrate_runs

            cal = calibrate_runs(load_runs(path), config)
            digest = {t.task_type: t.recommended_max_iterations for t in cal.task_types}
        else:
            from pyguard.parallel import replay_parallel

            rep = replay_parallel(load_runs(path), workers=REPLAY_WORKERS, start_method="spawn")
            digest = {"runs": rep.summary.runs, "stopped": rep.summary.stopped}
    wall = time.perf_counter() - t0
    return {
        "wall_s": wall,
        "peak_rss_mb": _peak_rss_mb(),
        "workers_peak_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
        "answer": digest,
    }


def _child(conn: Any, task: str, fmt: str, path: str) -> None:
    try:
        conn.send(("ok", _step(task, fmt, path)))
    except BaseException as exc:  # report, do not hang the parent
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def _measure(task: str, fmt: str, path: Path, runs: int) -> dict:
    if IN_PROCESS:
        payload = _step(task, fmt, str(path))
        return _row(task, fmt, runs, payload)
    return _row(task, fmt, runs, _in_child(_child, task, fmt, str(path)))


def _row(task: str, fmt: str, runs: int, payload: dict) -> dict:
    return {
        "task": task,
        "format": fmt,
        "runs": runs,
        "wall_s": round(payload["wall_s"], 2),
        "runs_per_s": round(runs / payload["wall_s"]),
        "peak_rss_mb": round(payload["peak_rss_mb"]),
        "workers_peak_rss_mb": round(payload["workers_peak_rss_mb"]),
        "answer": payload["answer"],
    }


def _prepare_child(conn: Any, sizes: dict, workdir: str) -> None:
    try:
        conn.send(("ok", _prepare(sizes, Path(workdir))))
    except BaseException as exc:
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def _in_child(target: Any, *args: Any) -> Any:
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=target, args=(child, *args))
    proc.start()
    child.close()
    status, payload = parent.recv()
    proc.join()
    if status != "ok":
        raise RuntimeError(f"scale: {payload}")
    return payload


def run(quick: bool) -> dict:
    from pyguard.parallel import default_workers

    sizes = SIZES[quick]
    workdir = WORKDIR / ("quick" if quick else "full")
    # The data is made in its own process so this one stays small: a spawned step inherits its parent's peak.
    data = _prepare(sizes, workdir) if IN_PROCESS else _in_child(_prepare_child, sizes, str(workdir))
    big = (
        ("check", "calibrate", "replay")
        if quick or os.environ.get("PYGUARD_SCALE_REPLAY_ALL")
        else ("check", "calibrate")
    )
    steps = [_measure(task, "parquet", workdir / "runs.parquet", sizes["parquet"]) for task in big]
    for task in TASKS:
        steps.append(_measure(task, "parquet", workdir / "small.parquet", sizes["jsonl"]))
        steps.append(_measure(task, "jsonl", workdir / "runs.jsonl", sizes["jsonl"]))
    for f in ("runs.parquet", "small.parquet", "runs.jsonl"):
        (workdir / f).unlink(missing_ok=True)
    speedup = {}
    for task in TASKS:  # same runs, same count: the two formats side by side
        p = next(s for s in steps if s["task"] == task and s["format"] == "parquet" and s["runs"] == sizes["jsonl"])
        j = next(s for s in steps if s["task"] == task and s["format"] == "jsonl")
        speedup[task] = round(p["runs_per_s"] / j["runs_per_s"], 1) if j["runs_per_s"] else None
    return {
        "command": "python benchmarks/run.py scale" + (" --quick" if quick else ""),
        "workers": default_workers(),
        "data": data,
        "steps": steps,
        "parquet_vs_jsonl_runs_per_s": speedup,
    }


def render(result: dict, console: Any) -> None:
    from rich.table import Table

    d = result["data"]
    table = Table(
        title=f"scale: {d['parquet_runs']:,} runs in Parquet ({d['parquet_mb']} MB); {d['jsonl_runs']:,} in "
        f"Parquet ({d['small_parquet_mb']} MB) and JSON Lines ({d['jsonl_mb']} MB); "
        f"{result['workers']} worker(s)"
    )
    for col in ("task", "format", "runs", "wall s", "runs/s", "peak MB", "workers' peak MB"):
        table.add_column(col, justify="left" if col in ("task", "format") else "right")
    for s in result["steps"]:
        table.add_row(
            s["task"],
            s["format"],
            f"{s['runs']:,}",
            f"{s['wall_s']:.2f}",
            f"{s['runs_per_s']:,}",
            str(s["peak_rss_mb"]),
            str(s["workers_peak_rss_mb"] or "-"),
        )
    console.print(table)
    console.print(
        f"Parquet vs JSON Lines on the same {d['jsonl_runs']:,} runs, ratio of runs per second: "
        f"{result['parquet_vs_jsonl_runs_per_s']}"
    )
