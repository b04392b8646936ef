"""Conversations for the frontier workload: a retail customer-service agent answering 3-6 user messages in one run,
each message 1-4 tool calls (look the customer up, read an order, change an address, exchange, cancel...) and an
answer; the same read (the customer's details) often comes back in a later message. In the looping variant one message sends the agent round in circles (the same read again, or the same refused
write with its arguments reworded) until a reflection brings it back; the conversation then goes on.

:func:`conversation` returns the segments of a scenario's ``conversation`` (one per user message), the answer key of
each message, and for the looping variant the loop-free segments an oracle would play.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from workload_common import Builder, expand

__all__ = ["Conversation", "conversation"]

_FIRST = ["Yusuf", "Mei", "Olivia", "Raj", "Sofia", "Lucas", "Aisha", "Noah", "Emma", "Ivan", "Chen", "Fatima"]
_LAST = ["Rossi", "Garcia", "Kovacs", "Nguyen", "Silva", "Müller", "Khan", "Lopez", "Ito", "Brown"]
_STREETS = ["Elm Street", "Lakeview Drive", "Maple Avenue", "Hillcrest Road", "Cedar Lane", "Park Place"]
_CITIES = [
    ("Austin", "TX", "78701"),
    ("Denver", "CO", "80202"),
    ("Seattle", "WA", "98101"),
    ("Columbus", "OH", "43215"),
    ("Charlotte", "NC", "28202"),
    ("Phoenix", "AZ", "85004"),
]
_PRODUCTS = [
    ("Wireless Earbuds", ["black", "white", "blue"]),
    ("Desk Lamp", ["brass", "matte black", "white"]),
    ("Hiking Backpack", ["green", "grey", "red"]),
    ("Water Bottle", ["750 ml", "1 l", "500 ml"]),
    ("Office Chair", ["mesh", "leather", "fabric"]),
    ("Mechanical Keyboard", ["linear", "tactile", "clicky"]),
]


def _address(rng: np.random.Generator) -> dict[str, str]:
    city, state, zipc = _CITIES[int(rng.integers(len(_CITIES)))]
    return {"address1": f"{rng.integers(10, 9999)} {rng.choice(_STREETS)}", "city": city, "state": state, "zip": zipc}


@dataclass
class _Ctx:
    rng: np.random.Generator
    user_id: str
    email: str
    name: str
    payment: list[dict]
    orders: dict[str, dict]
    products: dict[str, dict]
    reads: dict[str, list[str]] = field(default_factory=dict)

    def order_json(self, oid: str) -> str:
        return json.dumps(self.orders[oid])

    def read(self, b: Builder, oid: str) -> dict:
        self.reads.setdefault(oid, []).append(self.order_json(oid))
        return b.call("get_order_details", order_id=oid)


def _context(rng: np.random.Generator) -> _Ctx:
    first, last = str(rng.choice(_FIRST)), str(rng.choice(_LAST))
    user_id = f"{first.lower()}_{last.lower()}_{rng.integers(1000, 9999)}"
    payment = [
        {
            "id": f"credit_card_{rng.integers(1000000, 9999999)}",
            "source": "credit_card",
            "last_four": f"{rng.integers(1000, 9999)}",
        },
        {
            "id": f"gift_card_{rng.integers(1000000, 9999999)}",
            "source": "gift_card",
            "balance": int(rng.integers(10, 300)),
        },
    ]
    products, orders = {}, {}
    address = _address(rng)
    for _i, status in enumerate(["pending", "delivered", "pending"]):
        oid = f"#W{rng.integers(1000000, 9999999)}"
        items = []
        for _ in range(int(rng.integers(1, 4))):
            name, options = _PRODUCTS[int(rng.integers(len(_PRODUCTS)))]
            pid = str(rng.integers(10**9, 10**10))
            variants = {
                str(rng.integers(10**9, 10**10)): {
                    "option": o,
                    "price": float(rng.integers(15, 400)) + 0.99,
                    "available": bool(rng.random() < 0.8),
                }
                for o in options
            }
            products[pid] = {"name": name, "product_id": pid, "variants": variants}
            item_id = next(iter(variants))
            items.append(
                {
                    "name": name,
                    "product_id": pid,
                    "item_id": item_id,
                    "options": variants[item_id]["option"],
                    "price": variants[item_id]["price"],
                }
            )
        orders[oid] = {
            "order_id": oid,
            "user_id": user_id,
            "address": dict(address),
            "items": items,
            "status": status,
            "payment_history": [
                {
                    "transaction_type": "payment",
                    "amount": round(sum(x["price"] for x in items), 2),
                    "payment_method_id": payment[0]["id"],
                }
            ],
        }
    return _Ctx(
        rng,
        user_id,
        f"{first.lower()}.{last.lower()}{rng.integers(10, 99)}@example.com",
        f"{first} {last}",
        payment,
        orders,
        products,
    )


def _oid(ctx: _Ctx, role: str) -> str:
    """The customer's orders, by the role they were created for: pending, delivered, (another pending one) to cancel."""
    return list(ctx.orders)[{"pending": 0, "delivered": 1, "cancel": 2}[role]]


# Each intent: (ctx, builder of the segment, answer key) -> (user message, answer); it appends the segment's steps.


def _status(ctx: _Ctx, b: Builder, key: str) -> tuple[str, str]:
    oid = _oid(ctx, "pending")
    b.step(b.call("find_user_id_by_email", email=ctx.email))
    b.step(ctx.read(b, oid))
    return (
        f"Hi, I'm {ctx.name} ({ctx.email}). Where is my order {oid}?",
        f"Your order {oid} is still pending: it has not shipped yet. Reference {key}.",
    )


def _address_change(ctx: _Ctx, b: Builder, key: str) -> tuple[str, str]:
    oid = _oid(ctx, "pending")
    new = _address(ctx.rng)
    b.step(b.call("get_user_details", user_id=ctx.user_id))
    b.step(b.call("modify_pending_order_address", order_id=oid, **new))
    ctx.orders[oid]["address"] = new
    return (
        f"I just moved. Please ship {oid} to {new['address1']}, {new['city']}, {new['state']} {new['zip']}.",
        f"Done: {oid} will ship to {new['address1']}, {new['city']}. Reference {key}.",
    )


def _product(ctx: _Ctx, b: Builder, key: str) -> tuple[str, str]:
    oid = _oid(ctx, "delivered")
    item = ctx.orders[oid]["items"][0]
    b.step(b.call("get_product_details", product_id=item["product_id"]))
    return (
        f"The {item['name']} from my last delivery, which other options does it come in?",
        f"The {item['name']} comes in {', '.join(v['option'] for v in ctx.products[item['product_id']]['variants'].values())}. Reference {key}.",
    )


def _exchange(ctx: _Ctx, b: Builder, key: str) -> tuple[str, str]:
    oid = _oid(ctx, "delivered")
    item = ctx.orders[oid]["items"][0]
    other = list(ctx.products[item["product_id"]]["variants"])[-1]
    b.step(ctx.read(b, oid))
    b.step(b.call("get_product_details", product_id=item["product_id"]))
    b.step(
        b.call(
            "exchange_delivered_order_items",
            order_id=oid,
            item_ids=item["item_id"],
            new_item_ids=other,
            payment_method_id=ctx.payment[1]["id"],
        )
    )
    ctx.orders[oid]["status"] = "exchange requested"
    return (
        f"Please exchange that {item['name']} for another option; charge the difference to my gift card.",
        f"The exchange for {oid} is requested; the difference goes to your gift card. Reference {key}.",
    )


def _cancel(ctx: _Ctx, b: Builder, key: str) -> tuple[str, str]:
    oid = _oid(ctx, "cancel")
    b.step(ctx.read(b, oid))
    b.step(b.call("cancel_pending_order", order_id=oid, reason="ordered by mistake"))
    ctx.orders[oid]["status"] = "cancelled"
    return (
        f"And please cancel {oid}, I ordered it by mistake.",
        f"{oid} is cancelled; the refund takes 5-7 days. Reference {key}.",
    )


def _payment(ctx: _Ctx, b: Builder, key: str) -> tuple[str, str]:
    oid = _oid(ctx, "pending")
    b.step(ctx.read(b, oid))
    b.step(b.call("get_user_details", user_id=ctx.user_id))
    return (
        f"Which card did I pay {oid} with, and what is my gift card balance?",
        f"You paid with the card ending {ctx.payment[0]['last_four']}; the gift card has ${ctx.payment[1]['balance']}. Reference {key}.",
    )


_INTENTS = [_address_change, _product, _exchange, _cancel, _payment]
_VERIFIES = (_product, _exchange, _cancel)
"""Intents that do not read the customer's details themselves: an agent often re-reads them first (the same call and
result as in an earlier message: legitimate in a new message, a loop within one)."""


def _tools(ctx: _Ctx, tools: dict[str, dict], loop_reads: dict[str, str]) -> None:
    b = Builder(ctx.rng, tools)
    user = {
        "user_id": ctx.user_id,
        "name": ctx.name,
        "email": ctx.email,
        "payment_methods": ctx.payment,
        "orders": list(ctx.orders),
    }
    b.tool(
        "find_user_id_by_email",
        "find a user id by email",
        {"email": "string"},
        cases=[{"when": {"email": ctx.email}, "result": ctx.user_id}, {"error": "Error: user not found"}],
    )
    b.tool(
        "get_user_details",
        "get a user's details",
        {"user_id": "string"},
        cases=[{"when": {"user_id": ctx.user_id}, "result": json.dumps(user)}, {"error": "Error: user not found"}],
    )
    order_cases = [{"when": {"order_id": oid}, "results": reads} for oid, reads in ctx.reads.items()]
    order_cases += [{"when": {"order_id": oid}, "result": text} for oid, text in loop_reads.items()]
    order_cases += [
        {"when": {"order_id": oid}, "result": ctx.order_json(oid)}
        for oid in ctx.orders
        if oid not in ctx.reads and oid not in loop_reads
    ]
    b.tool(
        "get_order_details",
        "get an order's details",
        {"order_id": "string"},
        cases=order_cases + [{"error": "Error: order not found"}],
    )
    b.tool(
        "get_product_details",
        "get a product's details",
        {"product_id": "string"},
        cases=[{"when": {"product_id": pid}, "result": json.dumps(p)} for pid, p in ctx.products.items()]
        + [{"error": "Error: product not found"}],
    )
    b.tool(
        "modify_pending_order_address",
        "change the address of a pending order",
        {"order_id": "string", "address1": "string", "city": "string", "state": "string", "zip": "string"},
        cases=[
            {
                "when_matches": {"zip": "^[0-9]{5}$"},
                "result": '{"order_id": "{arg:order_id}", "status": "pending", '
                '"address": {"address1": "{arg:address1}", "city": "{arg:city}", "state": "{arg:state}", "zip": "{arg:zip}"}}',
            },
            {"error": "Error: invalid address: zip code '{arg:zip}' is not valid"},
        ],
    )
    b.tool(
        "exchange_delivered_order_items",
        "exchange items of a delivered order",
        {"order_id": "string", "item_ids": "string", "new_item_ids": "string", "payment_method_id": "string"},
        results=[
            '{"order_id": "{arg:order_id}", "status": "exchange requested", "exchange_items": ["{arg:item_ids}"], '
            '"exchange_new_items": ["{arg:new_item_ids}"], "exchange_payment_method_id": "{arg:payment_method_id}"}'
        ],
    )
    b.tool(
        "cancel_pending_order",
        "cancel a pending order",
        {"order_id": "string", "reason": "string"},
        results=[
            '{"order_id": "{arg:order_id}", "status": "cancelled", "cancel_reason": "{arg:reason}", '
            '"refund": "5-7 business days"}'
        ],
    )


@dataclass
class Conversation:
    segments: list[dict]
    keys: list[str]
    oracle_segments: list[dict] | None
    loop_from_call: int | None
    answer_at: int


def conversation(
    rng: np.random.Generator, tools: dict[str, dict], keys: list[str], loop_in: int | None, recover_probability: float
) -> Conversation:
    """A conversation of ``len(keys)`` user messages; ``loop_in`` is the message (0-based) whose turn loops, or None."""
    ctx = _context(rng)
    intents = [_status] + [_INTENTS[int(i)] for i in rng.permutation(len(_INTENTS))[: len(keys) - 1]]
    segments, oracle, loop_reads = [], [], {}
    calls = 0
    loop_from_call = None
    for j, (intent, key) in enumerate(zip(intents, keys, strict=False)):
        b = Builder(rng, tools)
        if j > 0 and intent in _VERIFIES and rng.random() < 0.5:  # looks the customer up again before acting
            b.step(b.call("get_user_details", user_id=ctx.user_id))
        user, answer = intent(ctx, b, key)
        premature = {
            "recover_probability": recover_probability,
            "answer": "Based on what I found so far: {last_result}",
        }
        seg: dict[str, Any] = {"user": user, "turns": b.turns, "on_reflection": premature}
        oracle_turns = expand(b.turns) + [{"answer": answer, "output_tokens": 50}]
        if j == loop_in:
            b.mark_loop()  # the work of the message is done; instead of answering, the agent goes round in circles
            shape = rng.choice(["reread", "alias", "refused"])
            if shape == "reread":
                b.step(b.call("get_user_details", user_id=ctx.user_id))
            elif shape == "alias":
                oid = _oid(ctx, "pending").lstrip("#")
                loop_reads[oid] = ctx.order_json("#" + oid)
                b.step(b.call("get_order_details", order_id=oid))
            else:  # the same refused write, its address reworded each time
                oid = _oid(ctx, "delivered")
                addr = ctx.orders[oid]["address"]
                b.step(
                    b.call(
                        "modify_pending_order_address",
                        order_id=oid,
                        address1=addr["address1"],
                        city=addr["city"],
                        state=addr["state"],
                        zip=f"{addr['zip']}-{{turn}}",
                    )
                )
            seg = {
                "user": user,
                "turns": b.turns,
                "loop_from": b.loop_at,
                "on_reflection": {
                    "recover_probability": recover_probability,
                    "answer": f"Sorry for the wait. {answer}",
                },
            }
            loop_from_call = calls + b.calls_before_loop() + 1
        else:
            b.turns.append({"answer": answer, "output_tokens": 50})
        calls += len(oracle_turns)
        segments.append(seg)
        oracle.append({"user": user, "turns": oracle_turns, "on_reflection": premature})
    _tools(ctx, tools, loop_reads)
    return Conversation(
        segments=segments,
        keys=list(keys),
        oracle_segments=oracle if loop_in is not None else None,
        loop_from_call=loop_from_call,
        answer_at=calls,
    )
