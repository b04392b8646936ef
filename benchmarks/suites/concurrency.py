"""Guarded agents on many threads in one JVM: throughput, the guard's latency, and leaks between runs.

``python benchmarks/run.py concurrency [--quick] [--json]`` (needs the bridge jars: ``mvn -q -f java/pom.xml package``).

For 1, 8 and 64 Python threads, each thread runs real LangChain4j AiServices agents on one shared in-process
scripted model (a 10-call scenario whose every result is new, so the guard lets it finish), each run with its own
GuardedChatModel and its own session of pyguard's engine (``pyguard.engine.Policy`` with the default config).

- ``iterations_per_s``: model calls of all runs / wall time;
- ``p50_guard_us`` / ``p99_guard_us``: the callback's round trip as Java sees it (the JPype crossing, waiting for the
  GIL, parsing, the engine's decision, the reply), over every model call;
- ``leaks``: runs whose events are not exactly their own (another run id, a missing, repeated or foreign index, or a
  Java event count different from Python's). Must be 0;
- ``gc_full_collections`` / ``gc_full_pause_ms``: Python's full (generation 2) garbage collections during the level and
  their summed pause: every thread waits for the GIL while one runs;
- ``lane``: the same guarded runs through a bridge Python lane of width 1 (``dev.pyguard.bridge.PythonLane``:
  callbacks enter Python one at a time, in arrival order; off by default), measured right after, for an A/B in one
  process;
- ``frozen``: the same guarded runs after ``gc.freeze()`` (every object alive after the warm-up and the levels
  before moved out of the collector's reach, as a long-running service can do once it has started), measured right
  after, then unfrozen;
- ``unguarded_iterations_per_s``: the same agents on the bare scripted model (no guard at all): the ceiling the Java
  side of an iteration (AiServices, the scripted model, tools) and the per-run Python around it leave on this machine.

The JVM starts with ``start_jvm()``'s default, which freezes the start-up before any level (``startup_frozen`` in
the result says how many objects); ``PYGUARD_BENCH_FREEZE_GC=0`` starts it with ``freeze_gc=False`` (the collector
left alone, pyguard's default before 2026-12-02), ``=1`` with ``freeze_gc=True``.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numpy as np

CALLS = 10


def scenario(calls: int = CALLS, latency_ms: tuple[int, int] | None = None) -> dict:
    """A ``calls``-call scenario whose every result is new (the guard lets it finish); ``latency_ms``: the scripted
    model takes (least, most) ms per call (concurrency_latency.py), else it answers at once."""
    timing = {} if latency_ms is None else {"latency_ms": list(latency_ms)}
    return {
        "name": "concurrency" if latency_ms is None else f"latency{latency_ms[0]}-{latency_ms[1]}",
        "seed": 0,
        **timing,
        "tools": [
            {
                "name": "fetch_record",
                "description": "Fetch one record",
                "parameters": {"id": "integer"},
                "results": ["record {call}: " + " ".join(f"field{k}=value{k}-{{call}}" for k in range(8))],
            }
        ],
        "turns": [
            {"tool_calls": [{"name": "fetch_record", "arguments": {"id": "{turn}"}}], "repeat": calls - 1},
            {"answer": "all records fetched"},
        ],
    }


def start() -> int:
    """Start the JVM with ``start_jvm()``'s default (``PYGUARD_BENCH_FREEZE_GC=0``: ``freeze_gc=False``, ``=1``:
    ``freeze_gc=True``); returns how many objects that froze."""
    from pyguard.jvm import start_jvm

    asked = os.environ.get("PYGUARD_BENCH_FREEZE_GC", "").strip()
    start_jvm(freeze_gc=None if asked not in ("0", "1") else asked == "1")
    return gc.get_freeze_count()


@contextmanager
def frozen_collector() -> Iterator[None]:
    """``gc.freeze()`` for the block (what a service does once it has started: ``start_jvm(freeze_gc=True)``),
    unfrozen after unless the process had frozen its start-up itself (``unfreeze()`` thaws everything)."""
    opted_in = gc.get_freeze_count() > 0
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        if not opted_in:
            gc.unfreeze()


def policy_factory():
    try:
        from pyguard.engine import Policy, PolicyConfig

        policy = Policy(PolicyConfig(), clock=time.monotonic)
        return "pyguard.engine default", lambda run_id: policy.new_run(run_id=run_id, task_type=None).observe
    except Exception:  # pragma: no cover - the engine is not importable: fall back to a trivial policy
        return "continue", lambda run_id: lambda event: None


def _unguarded(n_threads: int, runs: int, model) -> float:
    """Iterations per second of the same agents on the bare model (no sensor, no callback)."""
    from pyguard.jvm import build_agent, run_built

    def one(i: int) -> None:
        run_built(build_agent("aiservices", model), f"task {i}")

    before = int(model.calls())
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=n_threads) as pool:
        list(pool.map(one, range(runs)))
    wall = time.perf_counter() - t0
    return round((int(model.calls()) - before) / wall, 1)


def _lane(width: int | None) -> None:
    """The bridge's shared Python lane with ``width`` places (0: none; None: the default)."""
    from pyguard.jvm._java import jclass

    lane = jclass("dev.pyguard.bridge.PythonLane")
    lane.setShared(lane(lane.DEFAULT_WIDTH if width is None else width, lane.DEFAULT_PATIENCE_MS))


class FullCollections:
    """Counts Python's generation-2 collections and sums their pauses while it is active (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.count = 0
        self.pause_s = 0.0
        self._t0 = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            self.count += 1
            self.pause_s += time.perf_counter() - self._t0

    def __enter__(self) -> FullCollections:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


def _one_level(n_threads: int, runs: int, model, make_observe) -> dict:
    from pyguard.jvm import build_agent, guard_model, run_built

    def one(i: int) -> tuple[str, int, bool, list[int]]:
        """One run, checked at once and kept as a summary (as a service would: no run's events outlive it)."""
        run_id = f"t{n_threads}-r{i}"
        guarded = guard_model(model, make_observe(run_id), run_id=run_id, max_model_calls=CALLS + 5)
        r = run_built(build_agent("aiservices", guarded), f"task {i}", guarded)
        nanos = list(guarded.java.sensor().callbackNanos())
        own = all(e.run_id == run_id for e in r.events)
        contiguous = [e.index for e in r.events] == list(range(1, len(r.events) + 1))
        ok = own and contiguous and r.stats is not None and r.stats.events == len(r.events) == r.stats.model_calls
        return r.status, len(r.events), ok, nanos

    t0 = time.perf_counter()
    with FullCollections() as full, ThreadPoolExecutor(max_workers=n_threads) as pool:
        results = list(pool.map(one, range(runs)))
    wall = time.perf_counter() - t0
    leaks = 0
    iterations = 0
    samples: list[int] = []
    statuses: dict[str, int] = {}
    for status, n_events, ok, nanos in results:
        iterations += n_events
        samples.extend(nanos)
        statuses[status] = statuses.get(status, 0) + 1
        leaks += not ok
    us = np.asarray(samples, dtype=float) / 1e3
    return {
        "n": n_threads,
        "runs": runs,
        "iterations": iterations,
        "wall_s": round(wall, 3),
        "iterations_per_s": round(iterations / wall, 1),
        "p50_guard_us": round(float(np.percentile(us, 50)), 1),
        "p99_guard_us": round(float(np.percentile(us, 99)), 1),
        "leaks": leaks,
        "statuses": statuses,
        "gc_full_collections": full.count,
        "gc_full_pause_ms": round(full.pause_s * 1e3, 1),
    }


def run(quick: bool) -> dict:
    if quick:
        return measure(threads=(1, 8, 64), runs=lambda n: max(2 * n, 32), warmup=32)
    return measure(threads=(1, 8, 64), runs=lambda n: max(8 * n, 128), warmup=64)


def measure(*, threads, runs, warmup: int) -> dict:
    """``runs(n)`` runs at each thread count in ``threads`` (``run`` picks the sizes; tests use tiny ones)."""
    from pyguard.jvm import scripted_model

    startup_frozen = start()
    model = scripted_model(scenario())
    policy_name, make_observe = policy_factory()
    if warmup:
        _one_level(min(4, max(threads)), warmup, model, make_observe)  # JIT, class loading, pydantic
    levels = []
    keep = ("iterations_per_s", "p50_guard_us", "p99_guard_us", "leaks", "gc_full_collections", "gc_full_pause_ms")
    try:
        for n in threads:
            _lane(None)
            level = _one_level(n, runs(n), model, make_observe)
            _lane(1)
            lane = _one_level(n, runs(n), model, make_observe)
            level["lane"] = {k: lane[k] for k in keep}
            _lane(None)
            with frozen_collector():
                frozen = _one_level(n, runs(n), model, make_observe)
            level["frozen"] = {k: frozen[k] for k in keep}
            level["unguarded_iterations_per_s"] = _unguarded(n, runs(n), model)
            levels.append(level)
    finally:
        _lane(None)
    return {"policy": policy_name, "calls_per_run": CALLS, "startup_frozen": startup_frozen, "threads": levels}


def render(result: dict, console) -> None:
    from rich.table import Table

    t = Table(
        title=f"Guarded AiServices runs on many threads, one JVM ({result['policy']}, {result['calls_per_run']} calls/run)"
    )
    cols = ("threads", "runs", "iterations/s", "p50 guard µs", "p99 guard µs", "leaks")
    for col in (*cols, "full GCs (ms)", "lane: it/s", "p99 µs", "frozen: it/s", "p99 µs", "unguarded it/s"):
        t.add_column(col, justify="right")
    for lv in result["threads"]:
        lane = lv["lane"]
        t.add_row(
            str(lv["n"]),
            str(lv["runs"]),
            f"{lv['iterations_per_s']:.0f}",
            f"{lv['p50_guard_us']:.0f}",
            f"{lv['p99_guard_us']:.0f}",
            str(lv["leaks"] + lane["leaks"] + lv["frozen"]["leaks"]),
            f"{lv['gc_full_collections']} ({lv['gc_full_pause_ms']:.0f})",
            f"{lane['iterations_per_s']:.0f}",
            f"{lane['p99_guard_us']:.0f}",
            f"{lv['frozen']['iterations_per_s']:.0f}",
            f"{lv['frozen']['p99_guard_us']:.0f}",
            f"{lv['unguarded_iterations_per_s']:.0f}",
        )
    console.print(t)
