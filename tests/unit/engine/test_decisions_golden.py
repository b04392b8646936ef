"""Golden decisions: the engine's decisions and gains on a fixed corpus must not change.

The fixture ``data/decisions_golden.json`` was recorded from the engine before its performance work; any change
that is meant to be behaviour-preserving (a faster hash, a cache, fewer allocations) must keep this test green.
Recorded per run: every decision's iteration, action, rule, outcome and budget, a digest of the reason and the
reflection of every decision that is not a plain CONTINUE, the gains rounded to 3 decimals, and the outcome
``finish()`` gives. A gain that moves in the 4th decimal is fine; a changed decision is a behaviour change.

The corpus: every synthetic kind for many seeds (:func:`pyguard.testing.synthetic.labelled_set`) and the logistics
incident under the default policy (each call's tool results judged before the next call, ``judge_results_early``,
as the live guard and replay do) and under the same policy with the results judged with the next call; the same runs with volatile stamps (timestamps, UUIDs, durations) added to
every tool result; runs whose results are padded to 3-70 KB (large texts); and two other configurations (short
shingles, a small rotating novelty memory, no masking, no normalised repeats; a tight budget with caps).

A property test also holds the fast text preparation (the volatile-token regex rewritten for speed, the
shortcuts for collapsed and digit-free text, the echo-space removal) to its readable reference.

Regenerate (only when a behaviour change is intended, and say so in the commit)::

    python tests/unit/engine/test_decisions_golden.py --regenerate
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from masking_reference import mask_fields, mask_tokens

from pyguard.base.decisions import Action, Decision
from pyguard.base.events import Observation
from pyguard.engine import CapsConfig, NoveltyConfig, Policy, PolicyConfig, RunSession, StallConfig
from pyguard.engine.novelty import mask_volatile, prepare_text
from pyguard.engine.paired import judged_before_next
from pyguard.testing.synthetic import LabelledRun, labelled_set, logistics_incident

FIXTURE = Path(__file__).resolve().parent / "data" / "decisions_golden.json"

_WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
]


def _digest(*parts: str | None) -> str:
    return hashlib.blake2b("\x1f".join(p or "" for p in parts).encode(), digest_size=6).hexdigest()


def _map_tool_results(run: LabelledRun, suffix: str, fn) -> LabelledRun:
    events = []
    for ev in run.events:
        obs = tuple(fn(ev.index, k, o) if o.kind == "tool" else o for k, o in enumerate(ev.observations))
        events.append(ev.model_copy(update={"observations": obs, "run_id": run.name + suffix}))
    return run.model_copy(update={"name": run.name + suffix, "events": tuple(events)})


def volatile(run: LabelledRun) -> LabelledRun:
    """Every tool result gets a changing timestamp, request UUID, duration and epoch time (all masked)."""

    def stamp(index: int, k: int, o: Observation) -> Observation:
        rng = random.Random(f"{run.name}:{index}:{k}")
        when = f"2024-06-{rng.randint(10, 28)}T{rng.randint(10, 23)}:{rng.randint(10, 59)}:{rng.randint(10, 59)}Z"
        h = f"{rng.getrandbits(128):032x}"
        uuid = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
        extra = f"\n(served {when}, request {uuid}, took {rng.uniform(0.01, 3):.2f}s, at {rng.randint(1_500_000_000, 1_999_999_999)})"
        return o.model_copy(update={"text": o.text + extra})

    return _map_tool_results(run, "~volatile", stamp)


def padded(run: LabelledRun) -> LabelledRun:
    """Tool results padded with 0-70 KB of text determined by the result itself (equal results stay equal)."""

    def pad(index: int, k: int, o: Observation) -> Observation:
        rng = random.Random(o.text)
        size = rng.choice([0, 3_000, 20_000, 70_000])
        words = []
        n = 0
        while n < size:
            w = rng.choice(_WORDS) + str(rng.randint(0, 999))
            words.append(w)
            n += len(w) + 1
        return o.model_copy(update={"text": o.text + " " + " ".join(words)})

    return _map_tool_results(run, "~padded", pad)


@functools.cache
def cases() -> tuple[tuple[str, PolicyConfig, list[LabelledRun]], ...]:
    """(case name, policy config, runs) of the golden corpus."""
    return tuple(_cases())


def _cases() -> Iterator[tuple[str, PolicyConfig, list[LabelledRun]]]:
    base = labelled_set(range(20))
    small = [r for r in base if r.seed < 8]
    yield "default", PolicyConfig(), base + [logistics_incident()]
    yield "late", PolicyConfig(judge_results_early=False), base + [logistics_incident()]
    yield "volatile", PolicyConfig(), [volatile(r) for r in base if r.seed < 10]
    yield "padded", PolicyConfig(), [padded(r) for r in base if r.seed < 2]
    alt = PolicyConfig(
        novelty=NoveltyConfig(shingle_size=5, window_shingles=1024, mask_volatile=False),
        stall=StallConfig(normalised_repeats=False, low_gain_streak=2, changed_result_gain=0.25),
    )
    yield "alt", alt, small + [padded(r) for r in base if r.seed < 1] + [logistics_incident()]
    tight = PolicyConfig(
        base_budget=3,
        hard_cap=12,
        extension=2,
        max_reflections=2,
        stall_outcome="escalated",
        stop_on_fruitless_retry=False,
        caps=CapsConfig(max_total_tokens=12_000, max_identical_actions=5, max_tool_calls_per_tool={"run_tests": 4}),
    )
    yield "tight", tight, small + [volatile(r) for r in small]


def _decisions(session: RunSession, run: LabelledRun) -> Iterator[tuple[Decision, bool]]:
    """The session's decisions on ``run`` as the live guard and replay make them: each call's response, then (with
    ``judge_results_early``) its tool results before the next call, as the next call's request carries them
    (``True``: a decision on results); up to the first stop."""
    events = run.events
    for k, ev in enumerate(events):
        d = session.observe(ev)
        yield d, False
        after = events[k + 1].observations if k + 1 < len(events) else ()
        if d.stops or not (session.config.judge_results_early and judged_before_next(ev, after)):
            continue
        d = session.observe_results(ev.index, after)
        yield d, True


def record(config: PolicyConfig, run: LabelledRun) -> dict:
    """What the golden fixture keeps of one run (a decision on a call's results is marked ``"results"``)."""
    session = Policy(config, clock=lambda: 0.0).new_run(run.name, task_type=None)
    budgets, marked = [], []
    for d, on_results in _decisions(session, run):
        budgets.append(d.budget)
        if d.action is not Action.CONTINUE or d.rule is not None or d.outcome is not None:
            marked.append(
                [
                    d.iteration,
                    d.action.value,
                    d.rule,
                    d.outcome.value if d.outcome else None,
                    _digest(d.reason, d.reflection),
                    *(["results"] if on_results else []),
                ]
            )
        if d.stops:
            break
    end = session.finish()
    return {
        "n": len(budgets),
        "b": budgets,
        "x": marked,
        "g": [round(g, 3) for g in session.gains],
        "end": end.outcome.value,
    }


def record_all() -> dict[str, dict[str, dict]]:
    return {name: {run.name: record(config, run) for run in runs} for name, config, runs in cases()}


@pytest.fixture(scope="module")
def golden() -> dict:
    return json.loads(FIXTURE.read_text())


@pytest.mark.parametrize("case", ["default", "late", "volatile", "padded", "alt", "tight"])
def test_decisions_match_the_golden_fixture(golden, case):
    config, runs = next((c, r) for name, c, r in cases() if name == case)
    expected = golden[case]
    assert sorted(expected) == sorted(r.name for r in runs), "the corpus changed: regenerate the fixture"
    for run in runs:
        got, want = record(config, run), expected[run.name]
        assert got["x"] == want["x"], f"{case}/{run.name}: decisions changed"
        assert got["b"] == want["b"] and got["n"] == want["n"], f"{case}/{run.name}: budgets changed"
        assert got["end"] == want["end"], f"{case}/{run.name}: outcome changed"
        assert got["g"] == pytest.approx(want["g"], abs=1.5e-3), f"{case}/{run.name}: gains changed"


# ---- the fast paths agree with their readable specifications -------------------------------------------------

_PIECES = [
    "0",
    "1",
    "7",
    "a",
    "f",
    "g",
    "z",
    "t",
    " ",
    "-",
    ":",
    ".",
    ",",
    "+",
    "ms",
    "s",
    "\u00b5s",
    "sec",
    "\u0663",
    "\n",
    "\t",
    "\x1c",
    "\xa0",
    "\u2405",
    "K",
    "\u212a",
    "2024-05-01t12:00:03z",
    "12:00:01",
    "123e4567-e89b-12d3-a456-426614174000",
    "abcdefab-abcd-abcd-abcd-abcdefabcdef",
    "deadbeefcafe1",
    "1712345678",
    "1712345678123",
    " 0.53s",
]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES), max_size=24).map("".join),
    st.lists(st.sampled_from(["12345", "so-12345", "abc", " x  y ", "0.53s", "ab"]), max_size=3),
)
def test_volatile_masking_and_preparation_match_the_reference(text, echo):
    low = text.lower()
    assert mask_volatile(low) == mask_tokens(low)
    reference = " ".join(low.split())
    values = sorted({" ".join(e.lower().split()) for e in echo if len(e.strip()) >= 3}, key=len, reverse=True)
    for value in values:
        reference = reference.replace(value, "\u2405")
    for value in values:  # written another way: the normalised form, one optional separator between characters
        norm = re.sub(r"[\W_]+", "", value)
        m = re.fullmatch(r"[a-z]{0,4}(\d{3,})", norm)
        if m:  # an id: the prefix and the leading zeros dropped, three digits kept
            norm = m.group(1)[min(len(m.group(1)) - len(m.group(1).lstrip("0")), len(m.group(1)) - 3) :]
        if 3 <= len(norm) <= 64:
            reference = re.sub(r"[\W_]?".join(map(re.escape, norm)), "\u2405", reference)
    if values:
        reference = re.sub(r"\s*\u2405\s*", "\u2405", reference)
    assert prepare_text.__wrapped__(text, tuple(echo), True) == mask_tokens(mask_fields(reference))
    assert prepare_text.__wrapped__(text, tuple(echo), False) == reference


if __name__ == "__main__":
    if "--regenerate" not in sys.argv[1:]:
        sys.exit("usage: python tests/unit/engine/test_decisions_golden.py --regenerate")
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    data = record_all()
    FIXTURE.write_text(json.dumps(data, separators=(",", ":"), sort_keys=True) + "\n")
    print(f"wrote {FIXTURE} ({FIXTURE.stat().st_size} bytes, {sum(len(v) for v in data.values())} runs)")
