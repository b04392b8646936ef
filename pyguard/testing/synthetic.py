"""Labelled synthetic runs: seeded event sequences of known shape, for tests, benchmarks and demos.

Each generator takes a seed and returns a :class:`LabelledRun`: the iteration events of one run (as the Java
sensor would report them: iteration 1 carries the user's task, iteration i+1 carries the results of iteration
i's tool calls, the last iteration answers), a label (``loop`` or ``legitimate``) and, for loops,
``loop_start``: the iteration whose response requested the first looping action (the first call that repeats
without anything new to gain). Runs are recordings: they do not react to the engine's decisions.

Kinds, legitimate: ``convergent`` (3-24 productive calls), ``polling`` (the same status call, its result
changing), ``pagination`` (pages of new items), ``rerun_after_change`` (the same test command after each edit,
its output changing). Loops: ``exact_repeat``, ``normalised_repeat`` (``12345``, ``SO-12345``, ``#12345``...),
``cycle`` (A, B[, C], A, B ...), ``oscillating`` (one tool flipping between two arguments), ``divergent`` (ever
new queries answered by boilerplate), ``error_storm`` (the same failing call, error texts varying). Plus
:func:`logistics_incident`, the reported incident: ``get_shipment_status`` 7 times, then 3 times with ``SO-``.
"""

from __future__ import annotations

import json
import random
from typing import Literal

from pydantic import BaseModel, ConfigDict

from pyguard.base.errors import InputError
from pyguard.base.events import IterationEvent
from pyguard.testing.synthetic_kinds import (
    KINDS,
    LEGITIMATE_KINDS,
    LOOP_KINDS,
    RunBuilder,
    productive_calls,
    sentence,
)

__all__ = [
    "LabelledRun",
    "KINDS",
    "LEGITIMATE_KINDS",
    "LOOP_KINDS",
    "generate",
    "labelled_set",
    "logistics_incident",
    "RunBuilder",
    "productive_calls",
    "sentence",
]


class LabelledRun(BaseModel):
    """One synthetic run with its ground truth."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    kind: str
    label: Literal["loop", "legitimate"]
    loop_start: int | None = None
    """Iteration whose response requested the first looping action (None for legitimate runs)."""
    seed: int
    description: str
    events: tuple[IterationEvent, ...]

    @property
    def run_id(self) -> str:
        return self.name


def generate(kind: str, seed: int = 0) -> LabelledRun:
    """One labelled run of ``kind`` (see :data:`KINDS`), deterministic in ``seed``."""
    if kind not in KINDS:
        raise InputError(f"unknown synthetic kind {kind!r}; choose one of: {', '.join(KINDS)}")
    label, gen, description = KINDS[kind]
    rng = random.Random(f"{kind}:{seed}")
    name = f"{kind}-{seed}"
    r = RunBuilder(name, f"Task {seed}: " + sentence(rng), rng)
    start = gen(rng, r)
    return LabelledRun(
        name=name, kind=kind, label=label, loop_start=start, seed=seed, description=description, events=tuple(r.events)
    )


def labelled_set(
    seeds: range | list[int] = range(5), kinds: list[str] | tuple[str, ...] | None = None
) -> list[LabelledRun]:
    """``generate(kind, seed)`` for every kind (default: all) and seed."""
    return [generate(k, s) for k in (kinds or tuple(KINDS)) for s in seeds]


def logistics_incident() -> LabelledRun:
    """The reported incident: ``get_shipment_status`` 7 times with ``12345``, then 3 times with ``SO-12345``,
    the status never changing."""
    rng = random.Random("logistics")
    r = RunBuilder("logistics-incident", "Where is my order 12345? It was due yesterday.", rng)
    start = None
    for k, order in enumerate(["12345"] * 7 + ["SO-12345"] * 3):
        i = r.call(
            "get_shipment_status",
            {"orderId": order},
            json.dumps({"orderId": order, "status": "IN_TRANSIT", "lastScan": "Memphis TN hub", "eta": "2024-05-03"}),
        )
        if k == 1:
            start = i
    r.answer("Your order is in transit.")
    return LabelledRun(
        name="logistics-incident",
        kind="logistics_incident",
        label="loop",
        loop_start=start,
        seed=0,
        description="get_shipment_status 7x identical, then 3x with the SO- prefix",
        events=tuple(r.events),
    )
