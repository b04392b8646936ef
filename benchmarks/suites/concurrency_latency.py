"""What the guard adds to each model call when 64 agents each wait on a slow model (a service, not a saturated loop).

``python benchmarks/run.py concurrency_latency [--quick] [--json]`` (needs the bridge jars).

Each level runs ``agents`` Python threads at once (their starts spread over the model's least latency), each
playing ``runs`` real LangChain4j AiServices runs of a 10-call scenario (every result new, so the guard lets each
run finish) on a scripted model that takes ``latency_ms`` per call (the scenario's ``latency_ms``: the Java thread
sleeps as it would waiting on a real model; 500 ms each call, then 500-1000 ms drawn per call). The same agents run
three times in the same process, one phase after the other: **unguarded** (the bare scripted model), **guarded**
(each run its own GuardedChatModel and engine session, ``pyguard.engine.Policy`` with the default config, the
collector as the JVM's start left it) and guarded with everything alive after the warm-up **frozen** too
(``gc.freeze()``; docs/performance.md). Per level:

- ``guard_us``: p50 / p99 / max of the guard's callback round trip as Java sees it, over every model call (the JPype
  crossing, waiting for the GIL among 64 threads, parsing, the engine's decision, the reply): what the guard adds
  to the model call, since the model call waits for it;
- ``per_call_ms``: p50 / p99 of each run's wall time divided by its model calls, guarded and unguarded (the model's
  latency, the agent's own Java work, the guard's share in the guarded phase); ``added_ms``: guarded minus
  unguarded at p50 and p99 (noisy on a loaded machine: two phases, two sets of sleeps);
- ``gc_full_collections`` / ``gc_full_pause_ms``: Python's full collections during the phase and their summed pause;
- ``leaks``: guarded runs whose events are not exactly their own (must be 0).

The JVM starts with ``start_jvm()``'s default, which freezes the start-up (since 2026-12-02: the guarded phase is
then what a user gets without asking); ``PYGUARD_BENCH_FREEZE_GC=0`` starts it with ``freeze_gc=False`` (the
collector left alone, the default before), ``=1`` with ``freeze_gc=True``.
"""

from __future__ import annotations

import gc
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from suites.concurrency import FullCollections, frozen_collector, policy_factory, scenario, start

CALLS = 10
TARGET_P99_MS = 5.0


def _phase(agents: int, runs: int, model, make_observe, calls: int, stagger_s: float) -> dict:
    """``agents`` threads, ``runs`` runs each, agent ``a`` starting ``a / agents * stagger_s`` after the first (so
    model calls arrive spread over time as a service's do, not in one wave); ``make_observe`` None: unguarded."""
    from pyguard.jvm import build_agent, guard_model, run_built

    def agent(a: int) -> list[tuple[float, int, list[int], bool]]:
        time.sleep(a / agents * stagger_s)
        out = []
        for i in range(runs):
            run_id = f"a{a}-r{i}"
            if make_observe is None:
                built = build_agent("aiservices", model)
                t0 = time.perf_counter()
                r = run_built(built, f"task {a}.{i}")
                wall = time.perf_counter() - t0
                out.append((wall, len(r.events) or calls, [], True))
                continue
            guarded = guard_model(model, make_observe(run_id), run_id=run_id, max_model_calls=calls + 5)
            built = build_agent("aiservices", guarded)
            t0 = time.perf_counter()
            r = run_built(built, f"task {a}.{i}", guarded)
            wall = time.perf_counter() - t0
            nanos = list(guarded.java.sensor().callbackNanos())
            ok = all(e.run_id == run_id for e in r.events) and len(r.events) == calls == len(nanos)
            out.append((wall, len(r.events), nanos, ok))
        return out

    t0 = time.perf_counter()
    with FullCollections() as full, ThreadPoolExecutor(max_workers=agents) as pool:
        results = [x for per_agent in pool.map(agent, range(agents)) for x in per_agent]
    wall = time.perf_counter() - t0
    per_call_ms = np.asarray([w / n for w, n, _, _ in results], dtype=float) * 1e3
    nanos = [v for _, _, ns, _ in results for v in ns]
    out = {
        "runs": len(results),
        "model_calls": sum(n for _, n, _, _ in results),
        "wall_s": round(wall, 3),
        "per_call_ms": {
            "p50": round(float(np.percentile(per_call_ms, 50)), 3),
            "p99": round(float(np.percentile(per_call_ms, 99)), 3),
        },
    }
    if make_observe is not None:
        us = np.asarray(nanos, dtype=float) / 1e3
        out["guard_us"] = {
            "p50": round(float(np.percentile(us, 50)), 1),
            "p99": round(float(np.percentile(us, 99)), 1),
            "max": round(float(us.max()), 1),
        }
        out["leaks"] = sum(not ok for _, _, _, ok in results)
        out["gc_full_collections"] = full.count
        out["gc_full_pause_ms"] = round(full.pause_s * 1e3, 1)
    return out


def measure(*, agents: int, levels: list[tuple[tuple[int, int], int]], calls: int = CALLS, warmup: int = 16) -> dict:
    """``levels``: ((least, most model latency in ms), runs per agent) pairs, each measured unguarded, guarded, and
    guarded with everything alive then frozen."""
    from pyguard.jvm import scripted_model

    start()
    policy_name, make_observe = policy_factory()
    if warmup:  # class loading, the JIT, pydantic: on a model that answers at once
        _phase(4, max(1, warmup // 4), scripted_model(scenario(calls, (0, 0))), make_observe, calls, 0.0)
    out = []
    for latency_ms, runs in levels:
        model = scripted_model(scenario(calls, latency_ms))
        stagger_s = latency_ms[0] / 1e3
        gc.collect()
        bare = _phase(agents, runs, model, None, calls, stagger_s)
        guarded = _phase(agents, runs, model, make_observe, calls, stagger_s)
        with frozen_collector():
            frozen = _phase(agents, runs, model, make_observe, calls, stagger_s)
        level = {
            "latency_ms": list(latency_ms),
            "agents": agents,
            "runs_per_agent": runs,
            "unguarded": bare,
            "guarded": guarded,
            "frozen": frozen,
            "target_p99_ms": TARGET_P99_MS,
        }
        for g in (guarded, frozen):
            p99_ms = g["guard_us"]["p99"] / 1e3
            g["added_ms"] = {q: round(g["per_call_ms"][q] - bare["per_call_ms"][q], 3) for q in ("p50", "p99")}
            g["met"] = p99_ms <= TARGET_P99_MS
        out.append(level)
    return {
        "calls_per_run": calls,
        "policy": policy_name,
        "startup_frozen": gc.get_freeze_count(),
        "levels": out,
    }


def run(quick: bool) -> dict:
    if quick:
        return measure(agents=4, levels=[((20, 30), 1)], calls=3, warmup=4)
    return measure(agents=64, levels=[((500, 500), 3), ((500, 1000), 2)])


def render(result: dict, console) -> None:
    from rich.table import Table

    t = Table(
        title=f"The guard's added latency per model call, {result['calls_per_run']}-call AiServices runs "
        f"on a slow scripted model ({result['policy']})"
    )
    cols = ("model latency", "agents", "guard", "model calls", "guard p50 µs", "guard p99 µs", "guard max µs")
    for col in (*cols, "full GCs (ms)", "per call p50 / p99 ms", "unguarded", "added p50 / p99 ms", "p99 target"):
        t.add_column(col, justify="right")
    for lv in result["levels"]:
        b = lv["unguarded"]
        lo, hi = lv["latency_ms"]
        for name in ("guarded", "frozen"):
            g = lv[name]
            t.add_row(
                f"{lo} ms" if lo == hi else f"{lo}-{hi} ms",
                str(lv["agents"]),
                "default GC" if name == "guarded" else "GC frozen",
                str(g["model_calls"]),
                f"{g['guard_us']['p50']:.0f}",
                f"{g['guard_us']['p99']:.0f}",
                f"{g['guard_us']['max']:.0f}",
                f"{g['gc_full_collections']} ({g['gc_full_pause_ms']:.0f})",
                f"{g['per_call_ms']['p50']:.1f} / {g['per_call_ms']['p99']:.1f}",
                f"{b['per_call_ms']['p50']:.1f} / {b['per_call_ms']['p99']:.1f}",
                f"{g['added_ms']['p50']:.2f} / {g['added_ms']['p99']:.2f}",
                f"{lv['target_p99_ms']:.0f} ms: {'met' if g['met'] else 'missed'}",
            )
    console.print(t)
