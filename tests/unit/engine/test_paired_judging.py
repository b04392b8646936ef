"""Judging a call's tool results before the next call (``observe_results``): the evidence judged when it exists, a
reflection answering one stall, futility and low-information streaks, and agents that revisit states as they go."""

from __future__ import annotations

import json

from engine_support import Script, drive, walk_rooms

from pyguard.base.decisions import Action
from pyguard.base.events import IterationEvent
from pyguard.engine import PolicyConfig, StallConfig


def _flags(decisions):
    return [(d.iteration, d.action.value, d.rule) for d in decisions if d.action is not Action.CONTINUE]


def _same_status(n: int, then: list | None = None) -> list[IterationEvent]:
    sc = Script()
    events = [
        sc.step(("get_status", {"id": "12345"}, "Order 12345: in transit, last scan Lyon hub.")) for _ in range(n)
    ]
    for call in then or []:
        events.append(sc.step(call))
    events.append(sc.answer())
    return events


def test_a_repeat_is_judged_on_the_call_that_returned_it_not_one_call_later():
    events = _same_status(8)
    _, late = drive(events, paired=False)
    _, early = drive(events)
    assert _flags(late)[0][:2] == (3, "reflect")  # call 2's result judged with call 3
    assert _flags(early)[0][:2] == (2, "reflect")  # call 2's result judged before call 3 is sent
    # the model reads the reflection in call 3 and asks for the same again: its result, the same, stops the run
    assert _flags(early)[-1][:2] == (3, "stop") and early[-1].evidence["signal"]["same_evidence"] is True
    assert _flags(late)[-1][0] > 3


def test_a_stall_long_after_its_reflection_is_a_new_first_signal_not_a_stop():
    sc = Script()
    events = [sc.step(("get_status", {"id": "1"}, "Order 1: in transit.")) for _ in range(2)]  # reflected on
    for k in range(4):  # then real work: new results
        events.append(sc.step(("get_invoice", {"id": str(k)}, f"Invoice {k}: {k * 37} EUR, paid on day {k + 3}.")))
    events += [sc.step(("get_status", {"id": "1"}, "Order 1: in transit.")) for _ in range(2)]  # the same stall, late
    events.append(sc.answer())
    _, ds = drive(events)
    flags = _flags(ds)
    assert [f[1] for f in flags] == ["reflect", "reflect"], flags  # two reflections, no stop
    assert not any(d.stops for d in ds)


def test_a_low_information_streak_never_stops_a_run():
    sc = Script()
    events = [sc.step(("grep", {"pattern": f"p{k}"}, "no matches")) for k in range(14)]
    events.append(sc.answer())
    _, ds = drive(events)
    assert not any(d.stops for d in ds), _flags(ds)
    assert any(d.rule == "low_gain_streak" for d in ds)


def _edit_then_check(sc: Script, k: int):
    edit = ("str_replace_editor", {"command": "str_replace", "path": "a.py", "old_str": "x", "new_str": f"y{k}"}, "ok")
    check = ("bash", {"command": "python -m pytest -q tests/test_a.py"}, "FAILED tests/test_a.py::test_a - boom")
    return [sc.step(edit), sc.step(check)]


def test_futility_that_persists_right_after_its_reflection_stops():
    sc = Script()
    events = [e for k in range(12) for e in _edit_then_check(sc, k)]
    events.append(sc.answer())
    _, ds = drive(events)
    flags = _flags(ds)
    assert flags[0][1:] == ("reflect", "fruitless_attempts"), flags
    assert ds[-1].stops and ds[-1].rule == "fruitless_attempts"
    assert ds[-1].iteration - flags[0][0] <= 2  # within the window after the reflection


def _grid_run(steps: int) -> list[IterationEvent]:
    """A navigation agent: one act(action) tool, four actions, rooms seen again as it explores."""
    sc = Script(task="Find the key.")
    moves = ["left", "right", "forward", "back"]
    rooms = ["a hall", "a corridor", "a hall", "a kitchen", "a corridor", "a cellar", "a kitchen", "a study"]
    events = []
    for k in range(steps):
        room = rooms[k % len(rooms)] if k < 16 else rooms[k % 3]
        events.append(sc.step(("act", {"action": moves[k % 4]}, json.dumps({"observation": f"You are in {room}."}))))
    events.append(sc.answer("I found the key."))
    return events


def test_an_agent_that_revisits_states_as_it_goes_is_reflected_on_not_stopped():
    events = _grid_run(30)  # shorter than the nothing_new window (a longer stretch of nothing new: the test below)
    _, ds = drive(events)
    assert not any(d.stops for d in ds), _flags(ds)
    # the same run judged like any other (the shape not read) is stopped
    cfg = PolicyConfig.model_validate({"stall": {"read_run_shape": False}})
    _, ds = drive(events, cfg)
    assert any(d.stops for d in ds)


def test_nothing_new_over_a_long_window_stops_an_agent_whose_revisits_are_expected():
    _, ds = drive(walk_rooms(80, None))
    flags = _flags(ds)
    assert ds[-1].stops and ds[-1].rule == "nothing_new", flags
    # the late signal: a reflection first, then the stop one call later (nothing new came after it)
    assert flags[-2][1:] == ("reflect", "nothing_new") and flags[-1][0] == flags[-2][0] + 1, flags
    assert ds[-1].iteration > StallConfig().nothing_new_window
    assert ds[-1].evidence["signal"]["kind"] == "second"


def test_an_agent_that_finds_something_new_now_and_then_is_not_stopped_by_nothing_new():
    _, ds = drive(walk_rooms(80, 11))  # a new room every 11 calls: 3 or more in any window of 35
    assert not any(d.stops for d in ds), _flags(ds)
    assert not any(d.rule == "nothing_new" for d in ds)


def test_an_a_b_oscillation_is_caught_within_two_cycles():
    sc = Script()
    events = [sc.step(("lookup", {"q": f"w{k}"}, f"record {k}: value {k * 91}")) for k in range(2)]
    start = len(events) + 1
    for _ in range(6):
        events.append(sc.step(("get_ticket", {"id": "T-1"}, '{"ticket": "T-1", "state": "open"}')))
        events.append(sc.step(("get_assignee", {"id": "T-1"}, '{"ticket": "T-1", "assignee": null}')))
    events.append(sc.answer())
    _, ds = drive(events)
    first = _flags(ds)[0]
    assert first[0] < start + 4, _flags(ds)


def test_replay_judges_results_before_the_next_call_when_the_policy_says_so():
    from pyguard.base.events import Outcome, RunEnd, RunRecord, RunStart
    from pyguard.replay import replay_run

    events = _same_status(8)
    record = RunRecord(
        start=RunStart(run_id="r1"),
        events=events,
        end=RunEnd(run_id="r1", outcome=Outcome.FAILED, iterations=len(events), success_label=False),
    )
    late = replay_run(record, PolicyConfig(judge_results_early=False))
    early = replay_run(record, PolicyConfig(judge_results_early=True))
    assert early.stop_at == 3 and late.stop_at is not None and late.stop_at > early.stop_at
    assert early.reflect_at == [2] and late.reflect_at == [3]
    assert early.tool_calls_saved == sum(len(e.tool_calls) for e in events[3:])
