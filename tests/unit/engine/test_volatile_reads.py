"""A read whose result changes only in volatile fields (a timestamp, a request id) is a poll when it re-samples one
thing; when it takes turns with other reads that came back unchanged too (A, B, A, B), it is a cycle
(:func:`pyguard.engine.waits.takes_turns`); a poll nothing marks as one (no wait, no "pending") earns one reflection
(``unmarked_poll``), never a stop by itself. Judged late (with the next call) and early (before it)."""

from __future__ import annotations

import json

import pytest
from engine_support import Script, drive

from pyguard.base.decisions import Action
from pyguard.base.events import IterationEvent
from pyguard.engine import PolicyConfig
from pyguard.engine.fingerprint import fingerprint
from pyguard.engine.waits import takes_turns


def _stamped(text: str, k: int) -> str:
    """``text`` with a footer that changes at every call: a time, a request id, a duration (all masked)."""
    return f"{text}\n(served 2026-12-02T07:{k:02d}:{(7 * k) % 60:02d}Z, request 5ae51d41-96cc-e0cf-5220-{k:012x}, took 0.{k}1s)"


def _drive(events: list[IterationEvent], *, early: bool):
    """The decisions of the default policy with the switch set to ``early``, fed as the guard feeds them."""
    return drive(events, PolicyConfig(judge_results_early=early), paired=early)[1]


def _flags(decisions):
    return [(d.iteration, d.rule) for d in decisions if d.action is not Action.CONTINUE]


def _ab(calls: int) -> list[IterationEvent]:
    """One tool flipping between two arguments, each result the same every time but for its stamped footer."""
    sc = Script()
    results = {"eu": "Flights to Lisbon: TP 1234 at 09:10, FR 88 at 12:40.", "us": "Flights to Boston: none left."}
    events = [
        sc.step(("search_flights", {"region": r}, _stamped(results[r], k))) for k, r in enumerate(["eu", "us"] * calls)
    ]
    return [*events, sc.answer()]


@pytest.mark.parametrize("early", [False, True])
def test_an_ab_oscillation_with_stamped_results_is_a_cycle_within_two_cycles(early):
    events = _ab(5)
    flags = _flags(_drive(events, early=early))
    # A, B, A, B: the round back to B is the first point where the whole state repeated (plain results flag it
    # there too); before, the stamps made each return a poll and the allowance of 10 hid the loop
    assert flags, "the stamped A/B oscillation went unflagged"
    first_call, rule = flags[0]
    assert rule == "cycle"
    assert first_call <= (6 if early else 7)  # judged early: at call 6's results at the latest (two cycles from 3)


@pytest.mark.parametrize("early", [False, True])
def test_an_unmarked_poll_earns_one_reflection_and_is_still_a_poll(early):
    """The same read, only its stamps changing, nothing saying "pending" and no wait between: one reflection at the
    third read, then polls within the allowance (no stop, no second reflection) until the result changes."""
    sc = Script()
    status = json.dumps({"job_id": "J-7", "state": "ACTIVE", "shards": 4})
    events = [sc.step(("get_job", {"id": "J-7"}, _stamped(status, k))) for k in range(8)]
    events.append(sc.step(("get_job", {"id": "J-7"}, json.dumps({"job_id": "J-7", "state": "COMPLETE", "rows": 9}))))
    events.append(sc.answer())
    decisions = _drive(events, early=early)
    assert _flags(decisions) == [(3 if early else 4, "unmarked_poll")]  # the third read's result
    assert not any(d.stops for d in decisions)
    reflection = next(d for d in decisions if d.action is Action.REFLECT)
    assert "wait between reads" in reflection.reason or "wait between reads" in (reflection.reflection or "")


@pytest.mark.parametrize("early", [False, True])
def test_a_marked_poll_earns_no_reflection(early):
    """The same stamped read saying "pending": a poll within the allowance, as before."""
    sc = Script()
    status = json.dumps({"job_id": "J-7", "status": "PENDING"})
    events = [*(sc.step(("get_job", {"id": "J-7"}, _stamped(status, k))) for k in range(8)), sc.answer()]
    assert _flags(_drive(events, early=early)) == []


def test_a_stamped_read_between_new_work_is_not_a_cycle():
    """Status, a new lookup, status, another new lookup: the run does other work between the reads (no turns)."""
    sc = Script()
    status = "Deploy d-77: 3 of 5 hosts updated."
    events = []
    for k in range(5):
        events.append(sc.step(("deploy_status", {"id": "d-77"}, _stamped(status, k))))
        events.append(
            sc.step(("read_log", {"host": f"h{k}"}, f"host h{k}: " + " ".join(f"line{k}{j}" for j in range(40))))
        )
    events.append(sc.answer())
    for early in (False, True):
        assert [f for f in _flags(_drive(events, early=early)) if f[1] == "cycle"] == []


def test_reads_with_a_wait_between_are_polls_even_taking_turns():
    sc = Script()
    status = json.dumps({"job_id": "J-9", "state": "ACTIVE"})
    events = []
    for k in range(6):
        events.append(sc.step(("get_job", {"id": "J-9"}, _stamped(status, k))))
        events.append(sc.step(("sleep", {"seconds": 10}, "ok")))
    events.append(sc.answer())
    for early in (False, True):
        assert _flags(_drive(events, early=early)) == []


def test_takes_turns():
    a, b, c = (fingerprint(t, '{"x": 1}') for t in ("a", "b", "c"))
    history = [(1, a), (2, b), (3, a), (4, c), (5, a)]
    repeats = {(3, a.exact_id)}
    assert not takes_turns(history, repeats, a, 1, 3)  # b in between was new
    assert takes_turns(history, repeats | {(2, b.exact_id)}, a, 1, 3)
    assert not takes_turns(history, repeats, a, 3, 5)  # c in between was new
    assert not takes_turns(history, repeats, a, 4, 5)  # nothing in between: re-sampled in a row
    assert not takes_turns(history, repeats, None, 1, 3) and not takes_turns(history, repeats, a, None, 3)
