"""The kinds of labelled synthetic run (:data:`KINDS`): the builder of a run's events (:class:`RunBuilder`), the
made-up content they carry, and one generator per kind; :mod:`pyguard.testing.synthetic` draws runs from them (its
docstring describes the kinds).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any, Literal

from pyguard.base.events import IterationEvent, Observation, ToolCall

__all__: list[str] = []


_SYLLABLES = ["ka", "lo", "mi", "ra", "ten", "vo", "shi", "ber", "an", "qu", "el", "dor", "pa", "zin", "u", "ft"]


class RunBuilder:
    """Builds a run's events: ``call(...)`` requests tools in the next iteration, their results arrive in the one
    after; ``answer(...)`` ends the run. The building block of every generator here (and of other synthetic sets)."""

    def __init__(self, run_id: str, task: str, rng: random.Random) -> None:
        self.run_id, self.rng = run_id, rng
        self.events: list[IterationEvent] = []
        self._obs: list[Observation] = [Observation(kind="user", text=task)]
        self._context = len(task)

    @property
    def next_index(self) -> int:
        return len(self.events) + 1

    def _event(self, calls: tuple[ToolCall, ...], text: str | None) -> IterationEvent:
        i = self.next_index
        self._context += sum(len(o.text) for o in self._obs)
        out_tokens = 20 + sum(len(c.arguments) for c in calls) // 4 + (len(text) // 4 if text else 0)
        in_tokens = 200 + self._context // 4
        self._context += out_tokens * 4
        return IterationEvent(
            run_id=self.run_id,
            index=i,
            model="synthetic-model",
            input_tokens=in_tokens,
            output_tokens=out_tokens,
            total_tokens=in_tokens + out_tokens,
            finish_reason="TOOL_EXECUTION" if calls else "STOP",
            tool_calls=calls,
            observations=tuple(self._obs),
            text=text,
        )

    def calls(self, *specs: tuple[str, Any, str, bool]) -> int:
        """Request tools ``(name, args, result, is_error)``; returns the iteration index that requested them."""
        i = self.next_index
        calls = []
        obs = []
        for k, (name, args, result, is_error) in enumerate(specs):
            cid = f"call_{i}_{k}"
            raw = args if isinstance(args, str) else json.dumps(args)
            calls.append(ToolCall(id=cid, name=name, arguments=raw))
            obs.append(Observation(kind="tool", tool_call_id=cid, tool_name=name, text=result, is_error=is_error))
        self.events.append(self._event(tuple(calls), None))
        self._obs = obs
        return i

    def call(self, name: str, args: Any, result: str, is_error: bool = False) -> int:
        return self.calls((name, args, result, is_error))

    def answer(self, text: str) -> None:
        self.events.append(self._event((), text))
        self._obs = []


# ---- content ----------------------------------------------------------------------------------------------------


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 4)))


def sentence(rng: random.Random, n: int | None = None) -> str:
    """A made-up sentence of ``n`` words (6-16 when None)."""
    return " ".join(_word(rng) for _ in range(n or rng.randint(6, 16))).capitalize() + "."


def _text(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        s = sentence(rng)
        out.append(s)
        size += len(s) + 1
    return " ".join(out)


def _record(rng: random.Random, i: int) -> dict[str, Any]:
    return {
        "id": f"{_word(rng)}-{rng.randint(1000, 99999)}",
        "name": f"{_word(rng).title()} {_word(rng).title()}",
        "price": round(rng.uniform(1, 900), 2),
        "stock": rng.randint(0, 500),
        "note": sentence(rng, rng.randint(3, 8)),
    }


def _stamp(rng: random.Random) -> str:
    return f"2024-0{rng.randint(1, 9)}-{rng.randint(10, 28)}T{rng.randint(10, 23)}:{rng.randint(10, 59)}:{rng.randint(10, 59)}Z"


def productive_calls(r: RunBuilder, rng: random.Random, n: int, start: int = 0) -> None:
    """``n`` productive calls: distinct lookups with new content."""
    for k in range(start, start + n):
        tool = rng.choice(["search_docs", "read_page", "get_record"])
        if tool == "search_docs":
            args: dict[str, Any] = {"query": f"{_word(rng)} {_word(rng)} {k}"}
        elif tool == "read_page":
            args = {"url": f"https://docs.example.com/{_word(rng)}/{k}"}
        else:
            args = {"id": rng.randint(100000, 999999)}
        r.call(tool, args, _text(rng, rng.randint(150, 1500)))


# ---- legitimate -------------------------------------------------------------------------------------------------


def _convergent(rng: random.Random, r: RunBuilder) -> int | None:
    n = rng.randint(3, 24)
    for k in range(n):
        if rng.random() < 0.15:
            r.calls(
                ("search_docs", {"query": f"{_word(rng)} {k}a"}, _text(rng, rng.randint(150, 900)), False),
                ("get_record", {"id": rng.randint(100000, 999999)}, json.dumps(_record(rng, k)), False),
            )
        else:
            productive_calls(r, rng, 1, start=k)
    r.answer("Here is what I found: " + sentence(rng))
    return None


def _polling(rng: random.Random, r: RunBuilder) -> int | None:
    productive_calls(r, rng, rng.randint(0, 2))
    job = f"J-{rng.randint(100, 9999)}"
    r.call("start_job", {"kind": "export"}, json.dumps({"job_id": job, "status": "queued"}))
    polls = rng.randint(4, 20)
    progress = 0
    log: list[str] = []
    for k in range(polls):
        progress += rng.randint(1, 4)  # strictly increasing: every poll brings a changed status
        if rng.random() < 0.5:
            log.append(f"step {k}: {_word(rng)} {_word(rng)}")
        status = {"job_id": job, "status": "running", "progress": progress, "checked_at": _stamp(rng), "log": log[-3:]}
        r.call("get_job_status", {"job_id": job}, json.dumps(status))
    done = {"job_id": job, "status": "done", "progress": 100, "checked_at": _stamp(rng), "log": log[-3:]}
    r.call("get_job_status", {"job_id": job}, json.dumps(done))
    r.call("get_job_result", {"job_id": job}, _text(rng, 400))
    r.answer(f"The export {job} finished.")
    return None


def _pagination(rng: random.Random, r: RunBuilder) -> int | None:
    productive_calls(r, rng, rng.randint(0, 2))
    pages = rng.randint(3, 15)
    cursor_style = rng.random() < 0.5
    cursor: str | None = None
    for k in range(1, pages + 1):
        items = [_record(rng, j) for j in range(rng.randint(3, 10))]
        nxt = f"c{rng.getrandbits(40):x}" if k < pages else None
        body = {"items": items, "page": k, "next": nxt if cursor_style else (k + 1 if k < pages else None)}
        args = {"cursor": cursor} if cursor_style and cursor else ({} if cursor_style else {"page": k, "size": 10})
        r.call("list_orders", args, json.dumps(body))
        cursor = nxt
    r.answer(f"There are {pages * 6} orders in total.")
    return None


def _test_log(rng: random.Random, tests: list[str], failing: set[str]) -> str:
    lines = [f"collected {len(tests)} items"]
    for t in tests:
        lines.append(f"{t} {'FAILED' if t in failing else 'PASSED'}")
    for t in sorted(failing):
        lines.append(f"FAILED {t} - AssertionError: expected {rng.randint(0, 9)} got {rng.randint(10, 99)}")
    lines.append(f"{len(failing)} failed, {len(tests) - len(failing)} passed in {rng.uniform(0.2, 9):.2f}s")
    return "\n".join(lines)


def _rerun_after_change(rng: random.Random, r: RunBuilder) -> int | None:
    productive_calls(r, rng, rng.randint(0, 2))
    tests = [f"tests/test_{_word(rng)}.py::test_{_word(rng)}" for _ in range(rng.randint(8, 60))]
    failing = set(rng.sample(tests, rng.randint(2, min(6, len(tests)))))
    cmd = {"command": "pytest -q"}
    r.call("run_tests", cmd, _test_log(rng, tests, failing))
    while failing:
        fixed = rng.sample(sorted(failing), rng.randint(1, len(failing)))
        path = "src/" + _word(rng) + ".py"
        r.call("read_file", {"path": path}, _text(rng, rng.randint(200, 1200)))
        r.call("edit_file", {"path": path, "patch": sentence(rng)}, f"wrote {rng.randint(200, 9000)} bytes to {path}")
        failing -= set(fixed)
        r.call("run_tests", cmd, _test_log(rng, tests, failing))
    r.answer("All tests pass now.")
    return None


# ---- loops ------------------------------------------------------------------------------------------------------


def _exact_repeat(rng: random.Random, r: RunBuilder) -> int | None:
    productive_calls(r, rng, rng.randint(0, 5))
    tool, args = rng.choice(
        [
            ("get_shipment_status", {"orderId": str(rng.randint(10000, 99999))}),
            ("get_weather", {"city": _word(rng).title()}),
            ("lookup_customer", {"email": f"{_word(rng)}@example.com"}),
        ]
    )
    base = {"args": args, "status": sentence(rng, 5), "detail": _text(rng, rng.randint(80, 600))}
    # byte-identical results: a repeat whose result changes only in a timestamp is a poll, judged by the
    # polling allowance (the ``polling`` kinds), not a loop found at its second call
    rng.random()  # keeps the random stream of the runs recorded before polls were told apart
    start = None
    for k in range(rng.randint(6, 10)):
        body = base
        i = r.call(tool, args, json.dumps(body))
        if k == 1:
            start = i
    r.answer(sentence(rng))
    return start


def _id_variants(n: str) -> list[str]:
    return [n, f"SO-{n}", f"so-{n}", f"#{n}", f" {n} ", f"SO{n}", f"SO-0{n}"]


def _normalised_repeat(rng: random.Random, r: RunBuilder) -> int | None:
    productive_calls(r, rng, rng.randint(0, 5))
    n = str(rng.randint(10000, 99999))
    status = sentence(rng, 6)
    variants = _id_variants(n)
    start = None
    for k in range(rng.randint(6, 10)):
        v = variants[0] if k == 0 else rng.choice(variants[1:])
        key = rng.choice(["orderId", "order_id", "OrderID"])
        i = r.call("get_shipment_status", {key: v}, f"Order {v}: {status} Last scan: Memphis TN hub.")
        if k == 1:
            start = i
    r.answer(sentence(rng))
    return start


def _cycle(rng: random.Random, r: RunBuilder) -> int | None:
    productive_calls(r, rng, rng.randint(0, 5))
    period = rng.choice([2, 3])
    sku = f"SKU-{rng.randint(1000, 9999)}"
    tools = [
        ("get_inventory", {"sku": sku}),
        ("get_price", {"sku": sku}),
        ("check_supplier", {"sku": sku, "region": "EU"}),
    ]
    results = [_text(rng, rng.randint(80, 500)) for _ in range(period)]
    start = None
    for k in range(period * rng.randint(3, 4)):
        tool, args = tools[k % period]
        i = r.call(tool, args, results[k % period])
        if k == period:
            start = i
    r.answer(sentence(rng))
    return start


def _oscillating(rng: random.Random, r: RunBuilder) -> int | None:
    productive_calls(r, rng, rng.randint(0, 5))
    tool = rng.choice(["set_filter", "search_flights", "query_metrics"])
    values = [_word(rng), _word(rng) + "x"]
    results = [_text(rng, rng.randint(100, 700)) for _ in values]
    start = None
    for k in range(rng.randint(6, 10)):
        i = r.call(tool, {"value": values[k % 2]}, results[k % 2])
        if k == 2:
            start = i
    r.answer(sentence(rng))
    return start


def _divergent(rng: random.Random, r: RunBuilder) -> int | None:
    productive_calls(r, rng, rng.randint(0, 5))
    boiler = rng.choice(
        [
            "No results found for '{q}'. Try a broader query or check the spelling.",
            'Search for "{q}" returned 0 documents. Suggestions: use fewer words; try synonyms.',
            "We could not find anything matching {q}. " + _text(rng, 200),
        ]
    )
    start = None
    for k in range(rng.randint(7, 11)):
        q = f"{_word(rng)} {_word(rng)} {rng.randint(1, 999)}"
        i = r.call("search_kb", {"query": q}, boiler.format(q=q))
        if k == 1:
            start = i
    r.answer("I could not find it.")
    return start


def _error_storm(rng: random.Random, r: RunBuilder) -> int | None:
    productive_calls(r, rng, rng.randint(0, 5))
    tool = rng.choice(["charge_card", "fetch_invoice", "post_update"])
    args = {"account": f"AC-{rng.randint(1000, 9999)}", "amount": rng.randint(5, 500)}
    start = None
    for k in range(rng.randint(6, 10)):
        err = (
            f"Error 503 from upstream: service unavailable (request id req-{rng.getrandbits(24):06x}, "
            f"retry after {rng.randint(1, 30)}s, attempt {k + 1})"
        )
        call_args = dict(args, account=str(args["account"]).lower()) if rng.random() < 0.3 else args
        i = r.call(tool, call_args, err, True)
        if k == 1:
            start = i
    r.answer("The payment service is down.")
    return start


KINDS: dict[str, tuple[Literal["loop", "legitimate"], Callable[[random.Random, RunBuilder], int | None], str]] = {
    "convergent": ("legitimate", _convergent, "3-24 productive lookups, then an answer"),
    "polling": ("legitimate", _polling, "the same status call, its result changing each time"),
    "pagination": ("legitimate", _pagination, "pages (numbers or cursors) of new items"),
    "rerun_after_change": ("legitimate", _rerun_after_change, "the same test command after each edit"),
    "exact_repeat": ("loop", _exact_repeat, "the same call, the same result (timestamps aside)"),
    "normalised_repeat": ("loop", _normalised_repeat, "the same order id rewritten (SO-, #, case, key names)"),
    "cycle": ("loop", _cycle, "a cycle of 2 or 3 calls with unchanged results"),
    "oscillating": ("loop", _oscillating, "one tool flipping between two arguments"),
    "divergent": ("loop", _divergent, "ever new queries, each answered by the same boilerplate"),
    "error_storm": ("loop", _error_storm, "the same failing call, error texts varying"),
}
LEGITIMATE_KINDS: tuple[str, ...] = tuple(k for k, v in KINDS.items() if v[0] == "legitimate")
LOOP_KINDS: tuple[str, ...] = tuple(k for k, v in KINDS.items() if v[0] == "loop")
