"""Guarded agents on many threads in one JVM: throughput, the guard's latency, and leaks between runs.

``python benchmarks/run.py concurrency [--quick] [--json]`` (needs the bridge jars: ``mvn -q -f java/pom.xml package``).

For 1, 8 and 64 Python threads, each thread runs real LangChain4j AiServices agents on one shared in-process
scripted model (a 10-call scenario whose every result is new, so the guard lets it finish), each run with its own
GuardedChatModel and its own session of pyguard's engine (``pyguard.engine.Policy`` with the default config).

- ``iterations_per_s``: model calls of all runs / wall time;
- ``p50_guard_us`` / ``p99_guard_us``: the callback's round trip as Java sees it (the JPype crossing, waiting for the
  GIL, parsing, the engine's decision, the reply), over every model call;
- ``leaks``: runs whose events are not exactly their own (another run id, a missing, repeated or foreign index, or a
  Java event count different from Python's). Must be 0.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

CALLS = 10


def _scenario() -> dict:
    return {
        "name": "concurrency",
        "seed": 0,
        "tools": [
            {
                "name": "fetch_record",
                "description": "Fetch one record",
                "parameters": {"id": "integer"},
                "results": ["record {call}: " + " ".join(f"field{k}=value{k}-{{call}}" for k in range(8))],
            }
        ],
        "turns": [
            {"tool_calls": [{"name": "fetch_record", "arguments": {"id": "{turn}"}}], "repeat": CALLS - 1},
            {"answer": "all records fetched"},
        ],
    }


def _policy_factory():
    try:
        from pyguard.engine import Policy, PolicyConfig

        policy = Policy(PolicyConfig(), clock=time.monotonic)
        return "pyguard.engine default", lambda run_id: policy.new_run(run_id=run_id, task_type=None).observe
    except Exception:  # pragma: no cover - the engine is not importable: fall back to a trivial policy
        return "continue", lambda run_id: lambda event: None


def _one_level(n_threads: int, runs: int, model, make_observe) -> dict:
    from pyguard.jvm import build_agent, guard_model, run_built

    def one(i: int):
        run_id = f"t{n_threads}-r{i}"
        guarded = guard_model(model, make_observe(run_id), run_id=run_id, max_model_calls=CALLS + 5)
        result = run_built(build_agent("aiservices", guarded), f"task {i}", guarded)
        nanos = list(guarded.java.sensor().callbackNanos())
        return run_id, result, nanos

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=n_threads) as pool:
        results = list(pool.map(one, range(runs)))
    wall = time.perf_counter() - t0
    leaks = 0
    iterations = 0
    samples: list[int] = []
    statuses: dict[str, int] = {}
    for run_id, r, nanos in results:
        iterations += len(r.events)
        samples.extend(nanos)
        statuses[r.status] = statuses.get(r.status, 0) + 1
        own = all(e.run_id == run_id for e in r.events)
        contiguous = [e.index for e in r.events] == list(range(1, len(r.events) + 1))
        if not (own and contiguous and r.stats is not None and r.stats.events == len(r.events) == r.stats.model_calls):
            leaks += 1
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
    }


def run(quick: bool) -> dict:
    if quick:
        return measure(threads=(1, 8, 64), runs=lambda n: max(2 * n, 32), warmup=32)
    return measure(threads=(1, 8, 64), runs=lambda n: max(8 * n, 128), warmup=64)


def measure(*, threads, runs, warmup: int) -> dict:
    """``runs(n)`` runs at each thread count in ``threads`` (``run`` picks the sizes; tests use tiny ones)."""
    from pyguard.jvm import scripted_model, start_jvm

    start_jvm()
    model = scripted_model(_scenario())
    policy_name, make_observe = _policy_factory()
    if warmup:
        _one_level(min(4, max(threads)), warmup, model, make_observe)  # JIT, class loading, pydantic
    levels = [_one_level(n, runs(n), model, make_observe) for n in threads]
    return {"policy": policy_name, "calls_per_run": CALLS, "threads": levels}


def render(result: dict, console) -> None:
    from rich.table import Table

    t = Table(
        title=f"Guarded AiServices runs on many threads, one JVM ({result['policy']}, {result['calls_per_run']} calls/run)"
    )
    for col in ("threads", "runs", "iterations/s", "p50 guard µs", "p99 guard µs", "leaks"):
        t.add_column(col, justify="right")
    for lv in result["threads"]:
        t.add_row(
            str(lv["n"]),
            str(lv["runs"]),
            f"{lv['iterations_per_s']:.0f}",
            f"{lv['p50_guard_us']:.0f}",
            f"{lv['p99_guard_us']:.0f}",
            str(lv["leaks"]),
        )
    console.print(t)
