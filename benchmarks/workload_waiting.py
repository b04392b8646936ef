"""The frontier's waiting families (issue 22): legitimate tasks whose status reads come back *identical* until the job
is done, so nothing in the results themselves says the run is progressing.

- ``wait_poll``: submit a job, then read its status with a ``sleep`` call between reads; the status text is the same
  (``{"job_id": ..., "state": "ACTIVE", "shards": 4}``, no timestamp, no request id, no "pending" word) until it says
  ``COMPLETE`` after 2-8 reads. The wait between the reads is what makes them polls.
- ``pending_poll``: submit a job, then read its status with nothing in between; the status is the same
  ``{"job_id": ..., "status": "PENDING"}`` until it says ``DONE`` after 2-8 reads. A result that says "pending" is a
  poll, not a repeated state.

Both are legitimate: a guard that stops either loses a task the agent would have finished. They are measured apart
from the default mix (``frontier``'s ``waiting`` block), so the main figures stay comparable.
"""

from __future__ import annotations

import json
from typing import Any

from workload_common import Builder, geometric_extra, hexid, words

__all__ = ["wait_poll", "pending_poll", "pending_sleep_poll", "MAX_READS"]

MAX_READS = 8
"""The most status reads a task needs (within the engine's polling allowance of 10)."""


def _tools(b: Builder, job: str, statuses: list[str]) -> None:
    b.tool("submit_job", "submit a batch job", {"query": "string"}, results=[json.dumps({"job_id": job})])
    b.tool("get_job_status", "get the status of a batch job", {"job_id": "string"}, results=statuses)


def _status_call() -> dict[str, Any]:
    return {
        "name": "get_job_status",
        "arguments": {"job_id": "unknown"},
        "arguments_from": {"job_id": '"job_id": "([^"]+)"'},
    }


def _when_done(done_word: str, expected: str) -> list[dict[str, Any]]:
    """Answer when the status read in the request says ``done_word``."""
    answer = {"answer": f"The job finished: {{last_result}}. Final answer {expected}.", "output_tokens": 60}
    return [{"contains": done_word, "then": answer}]


def wait_poll(b: Builder, spec: Any, expected: str) -> tuple[int, None]:
    reads = geometric_extra(b.rng, 2, 0.35, MAX_READS)
    job = f"job-{hexid(b.rng, 8)}"
    shards = int(b.rng.integers(2, 9))
    active = json.dumps({"job_id": job, "state": "ACTIVE", "shards": shards})
    complete = json.dumps({"job_id": job, "state": "COMPLETE", "shards": shards, "rows": int(b.rng.integers(10, 9000))})
    _tools(b, job, [active] * (reads - 1) + [complete])
    b.tool("sleep", "wait the given number of seconds before going on", {"seconds": "integer"}, results=["ok"])
    b.step(b.call("submit_job", query=f"rebuild the {words(b.rng, 1)} index"))
    b.step(_status_call())
    sleep = b.call("sleep", seconds=int(b.rng.choice([5, 10, 30])))
    b.step(sleep, on_result=_when_done("COMPLETE", expected))  # the request after a status read: done, or wait
    b.loop_at = 1  # status, sleep, status, sleep, ... until COMPLETE
    return 2 * reads + 1, None  # submit, then a read and a sleep per read; the answer after the last read


def pending_poll(b: Builder, spec: Any, expected: str) -> tuple[int, None]:
    reads = geometric_extra(b.rng, 2, 0.35, MAX_READS)
    job = f"job-{hexid(b.rng, 8)}"
    pending = json.dumps({"job_id": job, "status": "PENDING"})
    done = json.dumps({"job_id": job, "status": "DONE", "output": f"s3://jobs/{hexid(b.rng, 6)}.csv"})
    _tools(b, job, [pending] * (reads - 1) + [done])
    b.step(b.call("submit_job", query=f"export the {words(b.rng, 1)} table"))
    b.step(_status_call(), on_result=_when_done("DONE", expected))
    return reads + 2, None


def pending_sleep_poll(b: Builder, spec: Any, expected: str) -> tuple[int, None]:
    """Submit a job, then read its status with a ``sleep`` between reads; the status says "pending" (the same text each
    time) until it says "succeeded" after 2-8 reads: both signs of a poll at once, neither a repeated state."""
    reads = geometric_extra(b.rng, 2, 0.35, MAX_READS)
    job = f"job-{hexid(b.rng, 8)}"
    pending = json.dumps({"job_id": job, "status": "pending", "message": "the job is queued"})
    done = json.dumps({"job_id": job, "status": "succeeded", "output": f"gs://exports/{hexid(b.rng, 6)}.parquet"})
    _tools(b, job, [pending] * (reads - 1) + [done])
    b.tool("sleep", "wait the given number of seconds before going on", {"seconds": "integer"}, results=["ok"])
    b.step(b.call("submit_job", query=f"export the {words(b.rng, 1)} partition"))
    b.step(_status_call())
    sleep = b.call("sleep", seconds=int(b.rng.choice([5, 15, 60])))
    b.step(sleep, on_result=_when_done("succeeded", expected))
    b.loop_at = 1  # status, sleep, status, sleep, ... until succeeded
    return 2 * reads + 1, None
