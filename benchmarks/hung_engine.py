"""How long a hung engine holds the caller of ``guard.run``: the target is one callback deadline + 1 s per run.

``python benchmarks/hung_engine.py [--deadline-ms 10000] [--at 2] [--repeats 3]``

A fresh process starts the JVM and runs guarded AiServices runs of the scripted ``logistics_incident`` scenario whose
engine hangs at model call ``--at``: its decision blocks on an event set only after ``guard.run`` returned (so the run
returning at all shows the caller does not wait for the engine; nothing here sleeps). The first run is the process's
first (cold: JPype's proxies, the engine's first decision), then ``--repeats`` warm ones. For each, from Python's
monotonic clock:

- ``held_s``: ``guard.run``'s wall time; ``over_deadline_s``: that minus the deadline (the target: at most 1 s);
- ``before_hang_s``: from ``guard.run``'s start to the hung decision's start in Python (the agent's own time, the
  model calls and decisions before it);
- ``after_deadline_s``: from that start plus the deadline to ``guard.run``'s return: Java gives the run's guard up,
  stops the run, the wrap-up call, the footer and the trace. Java's deadline began before the decision reached Python
  (the crossing and the wait for the GIL are inside it), so this can be a little under zero.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from typing import Any


class _HangAt:
    """The run's real engine session, except that its decision about iteration ``at`` blocks until ``release``."""

    def __init__(self, inner: Any, at: int, release: threading.Event, marks: dict[str, float]) -> None:
        self._inner, self._at, self._release, self._marks = inner, at, release, marks

    def observe(self, event: Any) -> Any:
        if event.index == self._at:
            self._marks["hang"] = time.monotonic()
            self._release.wait()
        return self._inner.observe(event)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _one(deadline_ms: int, at: int, trace_dir: str) -> dict:
    from pyguard.jvm import scripted_model
    from pyguard.live.guard import Guard

    release, marks = threading.Event(), {}
    guard = Guard(callback_timeout_ms=deadline_ms, trace_dir=trace_dir)
    new_run = guard.policy.new_run
    guard.policy.new_run = lambda run_id, task_type=None: _HangAt(new_run(run_id, task_type), at, release, marks)  # type: ignore[method-assign]
    model = scripted_model("logistics_incident", seed=1)
    t0 = time.monotonic()
    try:
        result = guard.run("aiservices", model, "Where is order 12345?")
        t1 = time.monotonic()
    finally:
        release.set()
    deadline_s = deadline_ms / 1000
    hang = marks.get("hang")
    return {
        "outcome": result.outcome.value,
        "model_calls": int(model.calls()),
        "held_s": round(t1 - t0, 3),
        "over_deadline_s": round(t1 - t0 - deadline_s, 3),
        "before_hang_s": None if hang is None else round(hang - t0, 3),
        "after_deadline_s": None if hang is None else round(t1 - hang - deadline_s, 3),
    }


def main(deadline_ms: int, at: int, repeats: int) -> dict:
    from pyguard.jvm import start_jvm

    start_jvm()
    with tempfile.TemporaryDirectory() as tmp:
        runs = [_one(deadline_ms, at, tmp) for _ in range(1 + repeats)]
    worst = max(r["over_deadline_s"] for r in runs)
    return {
        "deadline_ms": deadline_ms,
        "hang_at_call": at,
        "cold": runs[0],
        "warm": runs[1:],
        "worst_over_deadline_s": worst,
        "target_over_deadline_s": 1.0,
        "within_target": worst <= 1.0,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deadline-ms", type=int, default=10_000)
    parser.add_argument("--at", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps(main(args.deadline_ms, args.at, args.repeats)))
