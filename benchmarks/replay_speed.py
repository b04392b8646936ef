"""Replay speed on recorded runs, loading included, on one core: model calls per second, source by source.

``python benchmarks/replay_speed.py --data DIR [--before TREE] [--sources a,b] [--json]``

``DIR`` is a prepared directory of real recordings (the ``real_replay`` layout: ``<source>/source.toml``). Each
source is loaded (:func:`pyguard.loading.load_runs`, as ``real_replay`` loads it) and its runs replayed through the
default policy in one process (:func:`pyguard.replay.replay_runs`: what ``pyguard replay --backend serial`` does),
in a fresh process per source and tree, so that no source's caches or loaded kernel help the next. Reported per
source: runs, model calls, loading and replay seconds (wall, and the process's CPU), and model calls per second with
the loading included, per wall second and per CPU second (on a shared machine the wall time is mostly waiting for
a core: compare the CPU figures there).

``--before TREE``: a checkout of an earlier pyguard (its folder holds ``pyguard/``), measured in the same run:
each source runs under the earlier tree, then this one, alternating, so that the machine's load changes both alike;
the ratio is this tree's calls per second over the earlier one's. The stops of every run must be the same in both
(else the ratio compares different work): ``same_stops`` says so per source.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREE = HERE.parent

_CHILD = r"""
import hashlib, json, sys, time
sys.path.insert(0, {suites!r})
from pathlib import Path
from _real_sources import load_source, manifests, source_files
from pyguard.replay import replay_runs
name = {name!r}
folder, spec = next((f, s) for n, f, s in manifests(Path({data!r})) if n == name)
c0, t0 = time.process_time(), time.perf_counter()
records = list(load_source(folder, spec, source_files(folder, spec)))
c1, t1 = time.process_time(), time.perf_counter()
report = replay_runs(records)
c2, t2 = time.process_time(), time.perf_counter()
stops = hashlib.sha256(json.dumps([[r.id, r.stop_at, r.reason, r.reflect_at] for r in report.runs]).encode()).hexdigest()
print(json.dumps({{"runs": len(records), "calls": sum(len(r.events) for r in records), "load_s": t1 - t0,
    "replay_s": t2 - t1, "load_cpu_s": c1 - c0, "replay_cpu_s": c2 - c1, "stops": stops[:16]}}))
"""


def _measure(tree: Path, data: Path, name: str) -> dict:
    code = _CHILD.format(suites=str(HERE / "suites"), data=str(data), name=name)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=str(tree), capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise SystemExit(f"{name} under {tree}: {out.stderr.strip()[-2000:]}")
    row = json.loads(out.stdout.strip().splitlines()[-1])
    total = row["load_s"] + row["replay_s"]
    row["calls_per_s"] = round(row["calls"] / total, 1) if total > 0 else None
    cpu = row["load_cpu_s"] + row["replay_cpu_s"]
    row["calls_per_cpu_s"] = round(row["calls"] / cpu, 1) if cpu > 0 else None
    for key in ("load_s", "replay_s", "load_cpu_s", "replay_cpu_s"):
        row[key] = round(row[key], 2)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, type=Path)
    parser.add_argument("--before", type=Path, help="an earlier checkout, measured in the same run")
    parser.add_argument("--sources", default="", help="comma-separated source names (default: all)")
    parser.add_argument("--before-label", default=None, help="what the earlier tree is (a commit), for the record")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE / "suites"))
    sys.path.insert(0, str(HERE))
    from _real_sources import manifests
    from run import commit, machine

    only = {s for s in args.sources.split(",") if s}
    names = [n for n, _f, _s in manifests(args.data) if not only or n in only]
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    host = machine()
    t0 = time.perf_counter()
    rows = {}
    for name in names:
        row: dict = {}
        if args.before is not None:
            row["before"] = _measure(args.before.resolve(), args.data, name)
        row["after"] = _measure(TREE, args.data, name)
        if "before" in row:
            b, a = row["before"], row["after"]
            row["ratio"] = round(a["calls_per_s"] / b["calls_per_s"], 2) if b["calls_per_s"] else None
            row["cpu_ratio"] = round(a["calls_per_cpu_s"] / b["calls_per_cpu_s"], 2) if b["calls_per_cpu_s"] else None
            row["same_stops"] = a["stops"] == b["stops"]
        rows[name] = row
        if not args.json:
            print(name, json.dumps(row), flush=True)

    def total(side: str) -> dict | None:
        picked = [r[side] for r in rows.values() if side in r]
        if not picked:
            return None
        calls = sum(r["calls"] for r in picked)
        seconds = sum(r["load_s"] + r["replay_s"] for r in picked)
        cpu = sum(r["load_cpu_s"] + r["replay_cpu_s"] for r in picked)
        return {
            "calls": calls,
            "seconds": round(seconds, 2),
            "cpu_seconds": round(cpu, 2),
            "calls_per_s": round(calls / seconds, 1),
            "calls_per_cpu_s": round(calls / cpu, 1),
        }

    host["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    result = {
        "suite": "replay_speed",
        "quick": False,
        "command": "python benchmarks/replay_speed.py " + " ".join(sys.argv[1:]),
        "date": started,
        "machine": host,
        "commit": commit(),
        "before_commit": args.before_label,
        "run_seconds": round(time.perf_counter() - t0, 1),
        "sources": rows,
        "before": total("before"),
        "after": total("after"),
    }
    if result["before"] and result["after"]:
        result["ratio"] = round(result["after"]["calls_per_s"] / result["before"]["calls_per_s"], 2)
        result["cpu_ratio"] = round(result["after"]["calls_per_cpu_s"] / result["before"]["calls_per_cpu_s"], 2)
    print(json.dumps(result, indent=2 if args.json else None))


if __name__ == "__main__":
    main()
