"""The ``nothing_new`` rule (a long window in which almost no result was new to the run) and how a reflection
answers it (:mod:`pyguard.engine.answered`)."""

from __future__ import annotations

from pyguard.base.decisions import Action
from pyguard.engine.answered import MAX_REFLECTIONS, may_reflect, persisting
from pyguard.engine.conditions import StallSubject, StopHit
from pyguard.engine.fingerprint import fingerprint
from pyguard.engine.nothing_new import NothingNew
from pyguard.engine.stall_report import stall_hit
from pyguard.engine.steps import ActionResult


def _result(key: str) -> ActionResult:
    return ActionResult(action=fingerprint("act", '{"command": "n"}'), text=key, novelty=0.0, result_key=key)


def _window_hits(keys: list[str], window: int = 5, max_new: int = 1) -> list[int]:
    rule = NothingNew(window, max_new)
    return [i for i, k in enumerate(keys, start=1) if rule.observe(i, [_result(k)]) is not None]


def test_a_full_window_with_at_most_max_new_new_results_is_a_hit():
    # a, b, c are new; from call 4 on only old results come back: the window 2..6 holds one new result (b)
    assert _window_hits(["a", "b", "c", "a", "b", "c", "a"]) == [7]
    rule = NothingNew(3, 0)
    found = [rule.observe(i, [_result("a")]) for i in range(1, 5)]
    assert found[:3] == [None, None, None]  # call 1's "a" was new to the run
    hit = found[3]
    assert hit is not None and hit.rule == "nothing_new" and hit.action is Action.REFLECT
    assert (hit.evidence["since"], hit.evidence["new"]) == (2, 0)


def test_something_new_now_and_then_keeps_the_window_open():
    assert _window_hits(["a", "b", "a", "c", "a", "d", "a", "e", "a", "f"]) == []


def test_a_call_without_tool_results_neither_fills_nor_breaks_the_window():
    rule = NothingNew(3, 0)
    rule.observe(1, [_result("a")])
    assert rule.observe(2, []) is None
    assert rule.observe(3, [_result("a")]) is None
    assert rule.observe(4, [_result("a")]) is None  # the window: calls 1, 3, 4 (call 1's result was new)
    hit = rule.observe(5, [_result("a")])
    assert hit is not None and hit.evidence["since"] == 3


def _late(i: int, since: int) -> StopHit:
    return stall_hit("nothing_new", "nothing new", {"since": since}, StallSubject(i, "act"), Action.REFLECT)


def _cycle(i: int) -> StopHit:
    return stall_hit("cycle", "a cycle", {}, StallSubject(i, "act", ids=("x",)))


def test_nothing_new_stops_when_its_window_holds_a_reflection_whatever_it_answered():
    # a reflection on a cycle after call 20; at call 40 the window (since call 6) holds it: the model read it and
    # nothing new came since
    stops = persisting(20, [_cycle(20)], 40, [_late(40, 6)], revisits=True)
    assert [h.rule for h in stops] == ["nothing_new"] and stops[0].action is Action.STOP
    # a reflection before the window began answered something else: a new first signal
    assert persisting(4, [_cycle(4)], 40, [_late(40, 6)], revisits=True) == []


def test_under_revisits_only_nothing_new_persists():
    assert persisting(20, [_cycle(20)], 21, [_cycle(21)], revisits=True) == []
    assert [h.rule for h in persisting(20, [_cycle(20)], 21, [_cycle(21)])] == ["cycle"]


def test_nothing_new_earns_one_reflection_of_its_own_when_the_turns_are_used_up():
    found = [_late(60, 26)]
    assert not may_reflect(MAX_REFLECTIONS, 10, 60)  # any other finding: no reflection left
    assert may_reflect(MAX_REFLECTIONS, 10, 60, MAX_REFLECTIONS, found, {"cycle"})
    assert not may_reflect(MAX_REFLECTIONS, 10, 60, MAX_REFLECTIONS, found, {"cycle", "nothing_new"})  # once a turn
    assert not may_reflect(MAX_REFLECTIONS, 59, 60, MAX_REFLECTIONS, found, {"cycle"})  # still answering the last
    assert not may_reflect(0, None, 60, 0, found, set())  # reflections switched off
