"""Shared pieces of the frontier workload's generators: the scenario builder and realistic text.

Everything here is a pure function of a ``numpy.random.Generator``, so a task is the same for the same seed.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

__all__ = [
    "Builder",
    "WORDS",
    "CITIES",
    "STATUS",
    "TOOLS",
    "words",
    "iso",
    "ident",
    "record",
    "geometric_extra",
    "hexid",
    "Clock",
    "expand",
]

WORDS = (
    "alpha amber atlas birch cedar cobalt delta ember falcon garnet harbor indigo juniper kepler lumen maple nectar "
    "onyx pixel quartz raven sable tundra umber vector willow xenon yarrow zephyr basalt canyon dune estuary fjord "
    "glacier heath island jetty karst lagoon mesa nebula oasis prairie quarry ridge savanna terrace upland valley"
).split()
CITIES = [
    "Newark",
    "Memphis",
    "Louisville",
    "Reno",
    "Dallas",
    "Ontario",
    "Allentown",
    "Indianapolis",
    "Atlanta",
    "Tacoma",
]
STATUS = ["IN_TRANSIT", "HELD", "DELIVERED", "PENDING", "EXCEPTION", "RETURNED", "PICKED", "PACKED"]
TOOLS = {
    "get_order": "orderId",
    "get_customer": "customerId",
    "get_invoice": "invoiceId",
    "search_docs": "query",
    "query_inventory": "sku",
    "get_shipment": "trackingNumber",
    "read_file": "path",
    "get_ticket": "ticketId",
}
_FIELDS = [
    "owner",
    "region",
    "status",
    "amount",
    "carrier",
    "warehouse",
    "note",
    "priority",
    "sku",
    "qty",
    "due",
    "contact",
    "tier",
    "channel",
    "batch",
    "reason",
]


def words(rng: np.random.Generator, n: int) -> str:
    return " ".join([WORDS[i] for i in rng.integers(0, len(WORDS), size=n).tolist()])


def iso(rng: np.random.Generator) -> str:
    return (
        f"2024-{rng.integers(1, 13):02d}-{rng.integers(1, 29):02d}T{rng.integers(0, 24):02d}:"
        f"{rng.integers(0, 60):02d}:{rng.integers(0, 60):02d}Z"
    )


def ident(rng: np.random.Generator, prefix: str) -> str:
    return f"{prefix}{rng.integers(10000, 99999)}"


def hexid(rng: np.random.Generator, n: int = 12) -> str:
    return "".join(rng.choice(list("0123456789abcdef"), size=n))


def record(rng: np.random.Generator, key: str) -> str:
    """A JSON-ish record: fixed field names, new values, a volatile fetch time; 150-900 characters."""
    fields = [_FIELDS[i] for i in rng.permutation(len(_FIELDS))[: int(rng.integers(4, 10))].tolist()]
    body: dict[str, Any] = {"id": key}
    for f in fields:
        if f in ("amount", "qty"):
            body[str(f)] = int(rng.integers(1, 5000))
        elif f == "status":
            body[str(f)] = str(rng.choice(STATUS))
        elif f in ("region", "warehouse"):
            body[str(f)] = str(rng.choice(CITIES))
        else:
            body[str(f)] = words(rng, int(rng.integers(2, 14)))
    body["fetched_at"] = iso(rng)
    return json.dumps(body)


def geometric_extra(rng: np.random.Generator, base: int, p: float, cap: int) -> int:
    return int(min(cap, base + rng.geometric(p) - 1))


class Clock:
    """Monotone wall-clock timestamps for volatile fields (``checked_at``), a few seconds apart."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.t = int(rng.integers(0, 86400 - 7200))
        self.day = f"2026-11-{rng.integers(1, 29):02d}"

    def tick(self, lo: int = 3, hi: int = 40) -> str:
        self.t += int(self.rng.integers(lo, hi))
        h, rem = divmod(self.t, 3600)
        return f"{self.day}T{h:02d}:{rem // 60:02d}:{rem % 60:02d}Z"


def expand(turns: list[dict]) -> list[dict]:
    """Turns with ``repeat`` expanded: one entry per model call."""
    out = []
    for t in turns:
        body = {k: v for k, v in t.items() if k != "repeat"}
        out.extend([body] * t.get("repeat", 1))
    return out


class Builder:
    """Accumulates the turns and tools of one scenario (or of one conversation segment, sharing its tools).

    A looping builder also records ``loop_at`` (the index in ``turns`` of the turn that starts the loop), optionally
    ``try_first`` (what the agent tries after a reflection before answering) and ``recovery`` (its answer)."""

    def __init__(self, rng: np.random.Generator, tools: dict[str, dict] | None = None) -> None:
        self.rng = rng
        self.turns: list[dict] = []
        self.tools: dict[str, dict] = {} if tools is None else tools
        self.loop_at: int | None = None
        self.try_first: list[dict] = []
        self.recovery: str | None = None

    def tool(self, name: str, description: str, parameters: dict[str, str], **how: Any) -> dict:
        t = self.tools.get(name)
        if t is None:
            t = {"name": name, "description": description, "parameters": parameters, **how}
            self.tools[name] = t
        return t

    def call(self, name: str, **arguments: Any) -> dict:
        return {"name": name, "arguments": arguments}

    def step(self, *calls: dict, **extra: Any) -> None:
        self.turns.append({"tool_calls": list(calls), **extra})

    def mark_loop(self) -> None:
        """The next turn appended starts the loop."""
        self.loop_at = len(self.turns)

    def productive(self, n_calls: int, parallel_share: float) -> None:
        """``n_calls`` model calls, each requesting 1 (or 2) lookups with fresh arguments and fresh results."""
        for _ in range(n_calls):
            calls = []
            for _ in range(2 if self.rng.random() < parallel_share else 1):
                name = str(self.rng.choice(list(TOOLS)))
                param = TOOLS[name]
                t = self.tool(
                    name,
                    f"{name.replace('_', ' ')} by {param}",
                    {param: "string"},
                    by_argument={"name": param, "values": {}, "default": "not found"},
                )
                key = ident(self.rng, name.split("_")[-1][:3].upper() + "-")
                while key in t["by_argument"]["values"]:
                    key = ident(self.rng, name.split("_")[-1][:3].upper() + "-")
                t["by_argument"]["values"][key] = record(self.rng, key)
                calls.append({"name": name, "arguments": {param: key}})
            self.turns.append({"tool_calls": calls})

    def calls_before_loop(self) -> int:
        """Model calls played before the loop's first call."""
        assert self.loop_at is not None
        return sum(t.get("repeat", 1) for t in self.turns[: self.loop_at])

    def oracle_turns(self, answer: str) -> list[dict]:
        """The loop-free run: everything before the loop, what the agent tries after a reflection, then the answer."""
        assert self.loop_at is not None
        return expand(self.turns[: self.loop_at]) + list(self.try_first) + [{"answer": answer}]
