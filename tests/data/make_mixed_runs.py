"""Writes tests/data/mixed_runs.jsonl: a small, hand-made but real-shaped set of recorded agent runs in the OpenAI
chat-completions message format, the kind of file teams point ``pyguard replay|calibrate|check`` at.

    python tests/data/make_mixed_runs.py      # deterministic: the same file every time

What it holds (84 runs, five task types):

- ``order_support``: customer-support conversations of 1-3 user turns (a user message after an answer starts a new
  turn), usage on every call, ``success`` labels; a few loop on the same tracking call in their second turn.
- ``retail_purchase``: tau-bench-like runs that end in a final tool call (``purchase`` or
  ``transfer_to_human_agents``) with no answer text after it; ``reward`` labels (1.0 / 0.0).
- ``code_fix``: SWE-agent-like runs (``bash``, ``str_replace_editor``, ``submit``), 5-30 calls, ``resolved`` labels;
  a third of the runs come from a provider that reports no usage; runs that hit the recording's own step limit (30) end
  while still calling tools.
- ``web_research``: ReAct runs converted to tool calls (``search``, ``lookup``), no usage at all, ``reward`` labels.
- ``refund_escalation``: a task type with no successful run (``success: false`` everywhere).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

OUT = Path(__file__).with_name("mixed_runs.jsonl")
STEP_LIMIT = 30
"""The code_fix recording's own step limit: runs that reach it end mid-tool-call."""


class Run:
    def __init__(self, run_id: str, task_type: str, system: str, rng: random.Random, usage: bool = True) -> None:
        self.rng = rng
        self.usage = usage
        self.calls = 0
        self.obj: dict = {"id": run_id, "task_type": task_type, "messages": [{"role": "system", "content": system}]}
        self.context = len(system) // 4 + 60

    @property
    def messages(self) -> list[dict]:
        return self.obj["messages"]

    def _add(self, msg: dict) -> None:
        self.messages.append(msg)
        self.context += len(json.dumps(msg)) // 4

    def user(self, text: str) -> None:
        self._add({"role": "user", "content": text})

    def _usage(self, completion: int) -> dict | None:
        if not self.usage:
            return None
        prompt = self.context + self.rng.randint(0, 40)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def call(self, name: str, args: dict, result: str, text: str | None = None) -> None:
        self.calls += 1
        cid = f"call_{self.calls}_{self.rng.randrange(16**6):06x}"
        msg = {
            "role": "assistant",
            "content": text,
            "tool_calls": [{"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}],
        }
        usage = self._usage(self.rng.randint(18, 90))
        if usage:
            msg["usage"] = usage
        self._add(msg)
        if result is not None:
            self._add({"role": "tool", "tool_call_id": cid, "content": result})

    def final_call(self, name: str, args: dict) -> None:
        """A last assistant message that is a tool call with no result after it (the run ends with it)."""
        self.call(name, args, None)  # type: ignore[arg-type]

    def answer(self, text: str) -> None:
        self.calls += 1
        msg = {"role": "assistant", "content": text}
        usage = self._usage(len(text) // 4 + self.rng.randint(5, 30))
        if usage:
            msg["usage"] = usage
        self._add(msg)


def order_support(i: int, rng: random.Random) -> dict:
    order = 40000 + 37 * i
    r = Run(
        f"support-{i:02d}",
        "order_support",
        "You are the support assistant of an online shop. Use the tools; never invent order data.",
        rng,
    )
    r.user(f"Hi, where is my order {order}? It was due yesterday.")
    r.call(
        "get_order",
        {"order_id": str(order)},
        json.dumps({"order_id": str(order), "status": "shipped", "carrier": "DHL", "tracking": f"JD0{order}"}),
    )
    r.call(
        "track_shipment",
        {"tracking": f"JD0{order}"},
        json.dumps(
            {"events": [{"at": "2026-11-28T09:12Z", "where": "Leipzig hub", "what": "in transit"}], "eta": "2026-12-01"}
        ),
    )
    r.answer(f"Your order {order} left the Leipzig hub on 28 November and should arrive on 1 December.")
    ok = True
    turns = 1 + (i % 3 != 0) + (i % 4 == 1)
    if turns >= 2:
        r.user("Can you send it to my office instead? Hauptstrasse 5, 04109 Leipzig.")
        if i % 5 == 2:  # the agent loops on tracking instead of changing the address
            for _ in range(6 + i % 3):
                r.call(
                    "track_shipment",
                    {"tracking": f"JD0{order}"},
                    json.dumps(
                        {
                            "events": [{"at": "2026-11-28T09:12Z", "where": "Leipzig hub", "what": "in transit"}],
                            "eta": "2026-12-01",
                        }
                    ),
                )
            r.answer("I could not change the address; the parcel is still in transit.")
            ok = False
        else:
            r.call(
                "update_delivery_address",
                {"order_id": str(order), "address": "Hauptstrasse 5, 04109 Leipzig"},
                json.dumps({"ok": True, "fee_eur": 0}),
            )
            r.answer("Done: the parcel will go to Hauptstrasse 5. There is no fee.")
    if turns >= 3:
        r.user("Thanks. And can I still add a second charger to the order?")
        r.call("get_order", {"order_id": str(order)}, json.dumps({"order_id": str(order), "status": "shipped"}))
        r.answer("The order has shipped, so items can no longer be added; I can start a new order for you.")
    r.obj["success"] = ok
    return r.obj


def retail_purchase(i: int, rng: random.Random) -> dict:
    r = Run(
        f"retail-{i:02d}",
        "retail_purchase",
        "# Retail agent policy\nYou help users buy items. Confirm before "
        "a purchase. Transfer to a human agent when you cannot help.",
        rng,
    )
    r.user("I want the same hiking boots as last time but one size bigger.")
    r.call("find_user_id_by_email", {"email": f"user{i}@example.com"}, json.dumps(f"user_{i:03d}"))
    r.call(
        "get_user_details",
        {"user_id": f"user_{i:03d}"},
        json.dumps({"orders": [f"#W{700 + i}"], "payment_methods": ["credit_card_1"]}),
    )
    r.call(
        "get_order_details",
        {"order_id": f"#W{700 + i}"},
        json.dumps({"items": [{"product_id": "boots-9", "size": "42"}]}),
    )
    for k in range(i % 4):
        r.call(
            "get_product_details",
            {"product_id": "boots-9", "page": k + 1},
            json.dumps({"variants": [{"item_id": f"b9-{43 + k}", "size": str(43 + k), "available": k != 0}]}),
        )
    r.user("Yes, please buy size 43 with my credit card.") if i % 3 else None
    if i % 5 == 4:
        r.final_call("transfer_to_human_agents", {"summary": "size 43 out of stock, user wants a human"})
        r.obj["reward"] = 0.0
    else:
        r.final_call("purchase", {"item_id": "b9-43", "payment_method_id": "credit_card_1"})
        r.obj["reward"] = 1.0 if i % 6 != 1 else 0.0
    return r.obj


def code_fix(i: int, rng: random.Random) -> dict:
    r = Run(
        f"swe-{i:02d}",
        "code_fix",
        "You are a software engineer working in a repository. Run one command per step. Submit when the tests pass.",
        rng,
        usage=i % 3 != 1,
    )
    r.user(f"Fix issue #{1200 + i}: `parse_date('2026-02-30')` returns a date instead of raising ValueError.")
    r.call("bash", {"command": "ls src tests"}, "src/dates.py  src/__init__.py\ntests/test_dates.py")
    r.call(
        "bash",
        {"command": "grep -n 'def parse_date' -A 12 src/dates.py"},
        "14:def parse_date(text):\n15:    y, m, d = map(int, text.split('-'))\n16:    return Date(y, m, min(d, 28))",
    )
    solved = i % 4 != 3
    steps = 4 + (i * 5) % 13 if solved else STEP_LIMIT
    for s in range(steps - 3 if solved else steps - 2):
        if not solved and s % 3 == 2:
            r.call(
                "bash",
                {"command": "python -m pytest tests/test_dates.py -x -q"},
                "FAILED tests/test_dates.py::test_feb_30 - DID NOT RAISE <class 'ValueError'>\n1 failed, 11 passed",
            )
        elif s % 2 == 0:
            r.call(
                "str_replace_editor",
                {
                    "command": "str_replace",
                    "path": "src/dates.py",
                    "old_str": "min(d, 28)",
                    "new_str": f"_check_day(y, m, d)  # try {s}",
                },
                f"The file src/dates.py has been edited (attempt {s}).",
            )
        else:
            r.call(
                "bash",
                {"command": f"python -m pytest tests/test_dates.py -q -k case_{s}"},
                f"{11 + s % 2} passed in 0.{20 + s}s",
            )
    if solved:
        r.final_call("submit", {})
        r.obj["resolved"] = i % 5 != 4
    else:
        r.obj["resolved"] = False  # cut off by the recording's step limit, still calling tools
    return r.obj


def web_research(i: int, rng: random.Random) -> dict:
    r = Run(
        f"react-{i:02d}",
        "web_research",
        "Solve the question with interleaved Thought, Action and Observation "
        "steps. Actions: search[entity], lookup[keyword], finish[answer].",
        rng,
        usage=False,
    )
    r.user(f"Question {i}: Which river flows through the capital of the country that won the 19{50 + i} World Cup?")
    hops = 2 + i % 5
    for h in range(hops):
        r.call(
            "search" if h % 2 == 0 else "lookup",
            {"query": f"hop {h} of question {i}"},
            f"Observation {h + 1}: a paragraph about hop {h} of question {i} ...",
            text=f"Thought {h + 1}: I need to find hop {h}.",
        )
    if i % 6 == 5:  # the ReAct loop repeats one search until the step limit of the converted log
        for _ in range(4):
            r.call(
                "search",
                {"query": f"hop 0 of question {i}"},
                "Observation: Could not find that page.",
                text="Thought: let me search again.",
            )
    r.answer(f"Thought: the answer is river {i}. Action: finish[River {i}]")
    r.obj["reward"] = 0.0 if i % 6 == 5 or i % 4 == 2 else 1.0
    return r.obj


def refund_escalation(i: int, rng: random.Random) -> dict:
    r = Run(f"refund-{i:02d}", "refund_escalation", "You handle refund requests above 500 EUR.", rng)
    r.user(f"I need a refund of {600 + 25 * i} EUR for order {90000 + i}, the TV arrived broken.")
    r.call("get_order", {"order_id": str(90000 + i)}, json.dumps({"total_eur": 600 + 25 * i, "status": "delivered"}))
    for _k in range(1 + i % 4):
        r.call(
            "create_refund",
            {"order_id": str(90000 + i), "amount_eur": 600 + 25 * i},
            json.dumps({"error": "refunds above 500 EUR need a supervisor approval id"}),
        )
    r.answer("I have filed your refund; you will hear from us.")
    r.obj["success"] = False  # the refund was never created: no run of this type succeeds
    return r.obj


def build() -> list[dict]:
    rng = random.Random(20261130)
    runs: list[dict] = []
    for make, count in (
        (order_support, 20),
        (retail_purchase, 16),
        (code_fix, 20),
        (web_research, 18),
        (refund_escalation, 10),
    ):
        runs += [make(i, rng) for i in range(count)]
    return runs


if __name__ == "__main__":
    with OUT.open("w", encoding="utf-8") as f:
        for run in build():
            f.write(json.dumps(run, ensure_ascii=False) + "\n")
    print(f"wrote {OUT}")
