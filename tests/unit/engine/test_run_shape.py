"""RunShape: an environment-step agent's shape is read from the run (one step tool, a small action vocabulary,
observations that recur amid new ones), never from its source."""

from __future__ import annotations

import json

from pyguard.engine.fingerprint import fingerprint
from pyguard.engine.run_shape import MAX_ACTION_CHARS, MIN_CALLS, RunShape


def _feed(steps):
    shape = RunShape()
    out = []
    for tool, args, result in steps:
        out.append(shape.observe([fingerprint(tool, json.dumps(args))], [result]))
    return out


def test_a_grid_navigation_agent_revisiting_rooms_is_recognised():
    moves = ["left", "right", "left", "forward", "forward", "left", "right", "forward", "pickup"]
    rooms = ["room A", "room B", "room A", "room C", "room D", "room E", "room D", "room F", "key"]
    out = _feed([("act", {"action": m}, r) for m, r in zip(moves, rooms, strict=True)])
    assert not any(out[: MIN_CALLS - 1])
    assert out[-1]


def test_a_coding_agents_one_shell_tool_is_not_an_environment():
    cmds = [f"cat src/module_{k}.py | sed -n '{k},{k + 40}p'" for k in range(10)] + ["pytest -q tests/test_x.py"] * 4
    out = _feed([("bash", {"command": c}, f"output {k % 5}") for k, c in enumerate(cmds)])
    assert not any(out)


def test_a_lookup_agent_with_several_tools_is_not_an_environment():
    steps = []
    for k in range(12):
        steps.append(("search" if k % 2 else "lookup", {"q": f"w{k % 3}"}, f"r{k % 4}"))
    assert not any(_feed(steps))


def test_a_step_agent_that_never_sees_anything_new_is_not_read_as_exploring():
    # the same two observations from the start: revisits, but never after a new one: a state the run is stuck in
    out = _feed([("act", {"action": "left" if k % 2 else "right"}, f"room {k % 2}") for k in range(12)])
    assert not any(out)


def test_a_text_game_with_a_few_long_commands_is_still_an_environment():
    # directions and short commands, and now and then a long one ("COOK SLICED RED HOT PEPPER WITH STOVE"): one long
    # command used to make the whole run a tool-calling agent's, whose revisits are read as loops
    long = "COOK SLICED GREEN HOT PEPPER WITH STOVE"
    moves = ["N", long, "S", "N", "E", "W", "E", "TAKE KNIFE", "N", "S", "N", "S"]
    rooms = ["street", "cooked", "yard", "street", "kitchen", "hall", "kitchen", "knife", "pantry", "kitchen", "a", "b"]
    assert len(fingerprint("act", json.dumps({"command": long})).canonical) - len("act()") > MAX_ACTION_CHARS
    out = _feed([("act", {"command": m}, r) for m, r in zip(moves, rooms, strict=True)])
    assert out[-1]


def test_the_shape_is_the_runs_a_new_turn_keeps_it():
    from engine_support import Script

    from pyguard.engine import Policy, PolicyConfig

    sc = Script()
    rooms = ["room A", "room B", "room A", "room C", "room D", "room E", "room D", "room F"]
    moves = ["left", "right", "left", "forward", "forward", "left", "right", "forward"]
    events = [sc.step(("act", {"action": m}, r)) for m, r in zip(moves, rooms, strict=True)]
    events.append(sc.answer("I cannot parse that."))
    sc.user("Reply with one command.")  # the harness answers a reply it could not pass to the game: a new turn
    events.append(sc.step(("act", {"action": "left"}, "room G")))
    session = Policy(PolicyConfig(judge_results_early=True)).new_run(events[0].run_id)
    for k, e in enumerate(events):
        session.observe(e)
        if not e.is_final and k + 1 < len(events):
            session.observe_results(e.index, events[k + 1].observations)
    assert session.turn == 2 and session._shape.revisits_expected
