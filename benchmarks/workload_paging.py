"""Two scripted families of issue 30, beside the waiting ones (:mod:`workload_waiting`):

- ``json_pages`` (legitimate): page through a large JSON result (``list_records(cursor)``, 5-10 pages of 40 records
  each, every page the same field names and shape, ~6 KB); the answer is on the last page. A reflection on low gain
  makes the scripted agent answer at once from what it has: an answer before the last page misses the key, a
  premature answer, a loss.
- ``ab_oscillation`` (looping): after some productive calls the agent alternates between two reads whose results never
  change (``get_ticket`` / ``get_assignee``, A, B, A, B, ...): a guard should catch it within two cycles (four calls
  from the loop's start).
"""

from __future__ import annotations

import json
from typing import Any

from workload_common import Builder, hexid, words

__all__ = ["json_pages", "ab_oscillation", "PAGE_RECORDS"]

PAGE_RECORDS = 40
"""Records per page."""


def _record(b: Builder, n: int) -> dict[str, Any]:
    rng = b.rng
    return {
        "id": f"rec-{hexid(rng, 10)}",
        "seq": n,
        "sku": f"SKU-{int(rng.integers(100000, 999999))}",
        "status": str(rng.choice(["active", "archived", "pending_review"])),
        "qty": int(rng.integers(1, 500)),
        "owner": words(rng, 2),
    }


def json_pages(b: Builder, spec: Any, expected: str) -> tuple[int, None]:
    rng = b.rng
    n = int(rng.integers(5, 11))
    pages: dict[str, str] = {}
    for p in range(n):
        items = [_record(b, p * PAGE_RECORDS + k) for k in range(PAGE_RECORDS)]
        last = p == n - 1
        if last:
            items[-1]["note"] = f"reconciliation key {expected}"
        body = {"page": p + 1, "items": items, "next_cursor": None if last else f"cur-{p + 2}"}
        pages["start" if p == 0 else f"cur-{p + 1}"] = json.dumps(body)
    b.tool(
        "list_records",
        "one page of the inventory records (cursor: 'start', then each page's next_cursor)",
        {"cursor": "string"},
        by_argument={"name": "cursor", "values": pages, "default": '{"error": "unknown cursor"}'},
    )
    for p in range(n):
        b.step(b.call("list_records", cursor="start" if p == 0 else f"cur-{p + 1}"))
    b.turns.append({"answer": f"I read all {n} pages. Final answer {expected}.", "output_tokens": 60})
    return n + 1, None


def ab_oscillation(b: Builder, spec: Any, expected: str) -> tuple[None, int]:
    rng = b.rng
    b.productive(int(rng.integers(1, 4)), 0.0)
    tid = f"T-{int(rng.integers(1000, 9999))}"
    ticket = json.dumps({"ticket": tid, "state": "open", "summary": words(rng, 6), "assignee": "unassigned"})
    owner = json.dumps({"ticket": tid, "assignee": None, "queue": words(rng, 1), "note": "no assignee set"})
    b.tool("get_ticket", "read a support ticket", {"ticket_id": "string"}, results=[ticket])
    b.tool("get_assignee", "read who a ticket is assigned to", {"ticket_id": "string"}, results=[owner])
    b.mark_loop()
    b.step(b.call("get_ticket", ticket_id=tid))
    b.step(b.call("get_assignee", ticket_id=tid))
    b.recovery = f"The ticket {tid} has no assignee and nothing changes; I stop here. Final answer {expected}."
    return None, b.calls_before_loop() + 1
