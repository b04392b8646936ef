"""A tool result longer than the engine's window: the Java sensor sends its window and its size, the run decides as
it would on the whole text, and its trace records the window explicitly and replays to the same decisions."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from pyguard.base.decisions import Action
from pyguard.base.events import IterationEvent, Observation
from pyguard.cli import main
from pyguard.engine import Policy, PolicyConfig
from pyguard.engine.paired import judged_before_next
from pyguard.engine.window import WINDOW_CHARS, observed_text
from pyguard.jvm import scripted_model
from pyguard.live.guard import Guard
from pyguard.loading import load_runs

SIZE = 300_000  # the scenario tool ``size`` returns "x" * SIZE
CALLS = 6


def _scenario() -> dict:
    tool = {"name": "dump", "description": "dump a log", "parameters": {}, "size": SIZE}
    call = {"tool_calls": [{"name": "dump", "arguments": {}}]}
    return {
        "name": "big_repeats",
        "seed": 1,
        "toolset": "scenario",
        "tools": [tool],
        "turns": [call] * CALLS + [{"answer": "done"}],
    }


def _decide(events: list[IterationEvent]) -> list[tuple]:
    """The engine's decisions on ``events`` as the live guard records them: each call's response, then its tool
    results before the next call (a decision on them that is not a plain continue replaces the call's)."""
    session = Policy(PolicyConfig()).new_run(events[0].run_id)
    out = []
    for k, event in enumerate(events):
        d = session.observe(event)
        after = events[k + 1].observations if k + 1 < len(events) else ()
        if not d.stops and judged_before_next(event, after):
            judged = session.observe_results(event.index, after)
            d = judged if judged.action is not Action.CONTINUE else d
        out.append((d.action, d.rule, d.reason, d.iteration))
        if d.stops:
            break
    return out


def _whole(event: IterationEvent) -> IterationEvent:
    """``event`` with each windowed observation's whole text (what the sensor sent before it windowed)."""
    observations = tuple(
        Observation(kind=o.kind, tool_call_id=o.tool_call_id, tool_name=o.tool_name, text="x" * o.chars)
        if o.whole_chars is not None
        else o
        for o in event.observations
    )
    return event.model_copy(update={"observations": observations})


def test_a_long_result_arrives_as_its_window_and_decides_as_the_whole_text_would(jvm, tmp_path):
    result = Guard(trace_dir=tmp_path).run("aiservices", scripted_model(_scenario()), "dump it")
    events = list(result.record.events)
    tool_obs = [o for e in events for o in e.observations if o.kind == "tool"]
    assert tool_obs, result.summary()
    for o in tool_obs:
        assert o.whole_chars == SIZE and o.chars == SIZE
        assert o.text == observed_text("x" * SIZE) and len(o.text) <= WINDOW_CHARS
    live = [(d.action, d.rule, d.reason, d.iteration) for d in result.decisions]
    assert live == _decide(events)
    assert live == _decide([_whole(e) for e in events])  # the same decisions as on the whole text
    assert result.outcome.value == "stalled", result.summary()  # the repeats are seen through the window

    # the trace says so explicitly, holds no line the size of the result, and reads and replays alike
    assert result.trace_path is not None
    trace = Path(result.trace_path).read_bytes()
    assert b'"whole_chars":300000' in trace
    iterations = [line for line in trace.splitlines() if line.startswith(b'{"type":"iteration"')]
    assert len(iterations) == len(events) and max(map(len, iterations)) < WINDOW_CHARS + 4096
    [record] = load_runs(result.trace_path)
    assert record.events == events
    assert _decide(record.events) == live
    out = CliRunner().invoke(main, ["replay", str(result.trace_path), "--json"])
    assert out.exit_code == 0, out.output
    [run] = json.loads(out.output)["runs"]
    assert run["stop_at"] == result.decisions[-1].iteration
