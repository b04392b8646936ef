"""One agent run whose one tool returns SIZE characters, guarded and not: outcome, wall time and peak memory, as JSON.

``python benchmarks/large_result.py SIZE``  (default 50,000,000)

Each measurement runs in a fresh process of its own (the peak RSS is a process's), which starts the JVM, loads the
engine's compiled novelty kernel (as ``start_jvm(freeze_gc=True)`` does), runs one warm-up run with a 1,000-character
result, then the measured one: a scripted AiServices agent (the scenario tool ``size``) that calls the tool once and
answers.

- ``bare``: the agent on the scripted model alone, no pyguard in the loop: what the agent itself costs (its tool
  result lives in the JVM whatever pyguard does);
- ``guarded``: the same agent under ``Guard(trace_dir=...)``, its trace written as it goes.

Reported per process: the outcome, the run's wall seconds, the process's RSS before the run and its peak (VmHWM)
after, their difference, the most Java heap in use at once during the run (the heap pools' peaks, summed: an upper
bound) and the most Python memory allocated at once (tracemalloc). For the guarded run also the trace: its largest
line, whether the observation was recorded as a window (``whole_chars``), and whether ``load_runs`` reads it back.
Then the guard's share (guarded peak growth minus the bare one) and the target of issue 25: the guarded run's peak
growth at most twice the result (``2 * SIZE`` bytes: ASCII text). Linux only (/proc/self/status).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path


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


def _heap_pools() -> list:
    from jpype import JClass

    factory = JClass("java.lang.management.ManagementFactory")
    heap = JClass("java.lang.management.MemoryType").HEAP
    return [p for p in factory.getMemoryPoolMXBeans() if p.getType() == heap]


def _trace_facts(trace_dir: Path) -> dict:
    from pyguard.loading import load_runs

    [path] = trace_dir.glob("*.jsonl")
    longest = max(len(line) for line in path.read_bytes().splitlines())
    [record] = load_runs(path)
    observations = [o for e in record.events for o in e.observations if o.kind == "tool"]
    return {
        "trace_longest_line_bytes": longest,
        "trace_reads_back": record.end is not None,
        "trace_whole_chars": [o.whole_chars for o in observations],
    }


def measure(mode: str, size: int) -> dict:
    """One measured run in this process (``bare`` or ``guarded``)."""
    from pyguard.engine import shingles
    from pyguard.jvm import scripted_model, start_jvm

    start_jvm()
    shingles.backend()
    with tempfile.TemporaryDirectory() as tmp:
        if mode == "guarded":
            from pyguard.live.guard import Guard

            guard = Guard(trace_dir=tmp)

            def run(chars: int) -> tuple[str, str]:
                result = guard.run("aiservices", scripted_model(_scenario(chars)), "dump it")
                return result.outcome.value, result.reason
        else:
            from jpype import JClass

            agents = JClass("dev.pyguard.bridge.Agents")

            def run(chars: int) -> tuple[str, str]:
                agent = agents.build("aiservices", scripted_model(_scenario(chars)), None, 10, 100, None, None)
                out = json.loads(str(agent.runJson("dump it")))
                return out["status"], out["reason"] or ""

        run(1_000)
        for old in Path(tmp).glob("*.jsonl"):
            old.unlink()
        pools = _heap_pools()
        for pool in pools:
            pool.resetPeakUsage()
        rss = _status_mb("VmRSS")
        tracemalloc.start()
        t0 = time.monotonic()
        outcome, reason = run(size)
        seconds = time.monotonic() - t0
        _, python_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        peak = _status_mb("VmHWM")
        heap_peak = sum(p.getPeakUsage().getUsed() for p in pools)
        out = {
            "outcome": outcome,
            "reason": reason,
            "run_s": round(seconds, 2),
            "rss_before_mb": round(rss),
            "peak_rss_mb": round(peak),
            "peak_growth_mb": round(peak - rss),
            "java_heap_peak_mb": round(heap_peak / 1e6),
            "python_peak_alloc_mb": round(python_peak / 1e6),
        }
        if mode == "guarded":
            out |= _trace_facts(Path(tmp))
        return out


def main(size: int) -> dict:
    """Both measurements, each in a process of its own, and the comparison."""
    rows = {}
    for mode in ("bare", "guarded"):
        done = subprocess.run(
            [sys.executable, __file__, "--measure", mode, str(size)], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise SystemExit(f"the {mode} run failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
        rows[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    target_mb = round(2 * size / 1e6)
    growth = rows["guarded"]["peak_growth_mb"]
    return {
        "size_chars": size,
        **rows,
        "guard_share_mb": growth - rows["bare"]["peak_growth_mb"],
        "target_peak_growth_mb": target_mb,
        "within_target": growth <= target_mb,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--measure":
        print(json.dumps(measure(sys.argv[2], int(sys.argv[3]))))
    else:
        print(json.dumps(main(int(sys.argv[1]) if len(sys.argv) > 1 else 50_000_000)))
