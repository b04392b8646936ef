"""RunShape: an environment-step agent's shape is read from the run (one step tool, a small action vocabulary,
observations that recur amid new ones), never from its source."""

from __future__ import annotations

import json

from pyguard.engine.fingerprint import fingerprint
from pyguard.engine.run_shape import MIN_CALLS, RunShape


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
