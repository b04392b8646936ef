"""One guarded run whose one tool returns SIZE characters: its outcome, wall time and peak memory, as JSON.

``python benchmarks/large_result.py SIZE``  (run it once per size: the peak RSS is the process's)

A fresh process starts the JVM, loads the engine's compiled novelty kernel (as ``start_jvm(freeze_gc=True)`` does),
runs one warm-up guarded run with a 1,000-character result, then the measured one: a scripted AiServices agent (the
scenario tool ``size``) that calls the tool once and answers. Reported: the outcome and reason, the run's wall
seconds, the process's RSS before the run and its peak (VmHWM) after, their difference, and the most Python memory
allocated at once during the run (tracemalloc). Linux only (/proc/self/status).
"""

from __future__ import annotations

import json
import sys
import time
import tracemalloc


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def _scenario(size: int) -> dict:
    tool = {"name": "dump", "description": "dump a log", "parameters": {}, "size": size}
    return {
        "name": "large_result",
        "seed": 1,
        "toolset": "scenario",
        "tools": [tool],
        "turns": [{"tool_calls": [{"name": "dump", "arguments": {}}]}, {"answer": "done"}],
    }


def main(size: int) -> dict:
    from pyguard.engine import shingles
    from pyguard.guard import Guard
    from pyguard.jvm import scripted_model, start_jvm

    start_jvm()
    shingles.backend()
    guard = Guard()
    guard.run("aiservices", scripted_model(_scenario(1_000)), "dump it")
    rss = _status_mb("VmRSS")
    tracemalloc.start()
    t0 = time.monotonic()
    result = guard.run("aiservices", scripted_model(_scenario(size)), "dump it")
    seconds = time.monotonic() - t0
    _, python_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    peak = _status_mb("VmHWM")
    return {
        "size_chars": size,
        "outcome": result.outcome.value,
        "reason": result.reason,
        "run_s": round(seconds, 2),
        "rss_before_mb": round(rss),
        "peak_rss_mb": round(peak),
        "peak_growth_mb": round(peak - rss),
        "python_peak_alloc_mb": round(python_peak / 1e6),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]) if len(sys.argv) > 1 else 50_000_000)))
