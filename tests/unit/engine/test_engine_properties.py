"""Property tests: for any event sequence, the engine's invariants hold."""

import json

from engine_support import FakeClock
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyguard.base.decisions import Action
from pyguard.base.events import IterationEvent, Observation, Outcome, ToolCall
from pyguard.engine import CapsConfig, Policy, PolicyConfig

TOOLS = ["get_status", "search", "list_page"]
ARGS = ['{"id": "12345"}', '{"id": "SO-12345"}', '{"page": 1}', '{"page": 2}', '{"q": "x"}', "{}", "not json"]
RESULTS = ["same", "in transit", "no results", "page one items", "error 503", "", "progress 10", "progress 20"]

step = st.tuples(
    st.lists(st.tuples(st.sampled_from(TOOLS), st.sampled_from(ARGS)), min_size=0, max_size=2),
    st.lists(st.tuples(st.sampled_from(RESULTS), st.booleans()), min_size=0, max_size=2),
    st.integers(0, 400),  # tokens
    st.floats(0, 5),  # seconds passing
)


def events(steps, run_id="r"):
    out = []
    for i, (calls, results, tokens, _) in enumerate(steps, 1):
        obs = tuple(
            Observation(tool_call_id=f"c{i - 1}_{k}", tool_name=TOOLS[k % 3], text=t, is_error=e)
            for k, (t, e) in enumerate(results)
        )
        tcs = tuple(ToolCall(id=f"c{i}_{k}", name=n, arguments=a) for k, (n, a) in enumerate(calls))
        if i < len(steps) and not tcs:
            tcs = (ToolCall(id=f"c{i}_0", name="search", arguments="{}"),)
        out.append(
            IterationEvent(
                run_id=run_id, index=i, tool_calls=tcs, observations=obs, input_tokens=tokens, output_tokens=10
            )
        )
    return out


caps = st.builds(
    CapsConfig,
    max_model_calls=st.none() | st.integers(1, 30),
    max_tool_calls=st.none() | st.integers(1, 30),
    max_total_tokens=st.none() | st.integers(1, 5000),
    max_wall_s=st.none() | st.floats(1, 50),
    max_identical_actions=st.none() | st.integers(1, 10),
)
configs = st.builds(
    PolicyConfig,
    base_budget=st.integers(1, 6),
    hard_cap=st.integers(6, 20),
    extension=st.integers(0, 5),
    max_reflections=st.integers(0, 2),
    caps=caps,
)


def play(config, steps):
    clock = FakeClock(0.0)  # elapsed time is then exactly the sum the oracle computes
    s = Policy(config, clock=clock).new_run("r")
    ds = []
    for ev, (_, _, _, dt) in zip(events(steps), steps, strict=False):
        clock.advance(dt)
        ds.append(s.observe(ev))
        assert s.budget <= s.settings.hard_cap
        if ds[-1].stops:
            break
    return s, ds


def first_cap_reached(config, steps):
    """The first iteration (with tools still requested) at which some hard cap is reached."""
    c = config.caps
    calls = tokens = 0
    elapsed = 0.0
    counts: dict[str, int] = {}
    from pyguard.engine.fingerprint import fingerprint

    for i, (ev, (_, _, _, dt)) in enumerate(zip(events(steps), steps, strict=False), 1):
        elapsed += dt
        calls += len(ev.tool_calls)
        tokens += (ev.input_tokens or 0) + (ev.output_tokens or 0)
        for tc in ev.tool_calls:
            k = fingerprint(tc.name, tc.arguments).exact_id
            counts[k] = counts.get(k, 0) + 1
        reached = (
            (c.max_model_calls is not None and i >= c.max_model_calls)
            or (c.max_tool_calls is not None and calls >= c.max_tool_calls)
            or (c.max_total_tokens is not None and tokens >= c.max_total_tokens)
            or (c.max_wall_s is not None and elapsed >= c.max_wall_s)
            or (c.max_identical_actions is not None and max(counts.values(), default=0) >= c.max_identical_actions)
        )
        if reached and not ev.is_final:
            return i
    return None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs, st.lists(step, min_size=1, max_size=30))
def test_stops_no_later_than_every_cap_and_within_hard_cap(config, steps):
    s, ds = play(config, steps)
    cap_at = first_cap_reached(config, steps)
    stopped_at = ds[-1].iteration if ds[-1].stops else None
    if cap_at is not None:
        assert stopped_at is not None and stopped_at <= cap_at
    if stopped_at is None:
        assert len(ds) == len(steps)
    assert len(ds) <= s.settings.hard_cap
    for d in ds:
        assert (d.action is Action.STOP) == (d.outcome is not None)
        assert (d.action is Action.REFLECT) == (d.reflection is not None)
    assert sum(d.action is Action.REFLECT for d in ds) <= config.max_reflections


@settings(max_examples=60, deadline=None)
@given(configs, st.lists(step, min_size=1, max_size=20))
def test_decisions_are_deterministic(config, steps):
    _, a = play(config, steps)
    _, b = play(config, steps)
    assert [d.model_dump() for d in a] == [d.model_dump() for d in b]


@settings(max_examples=80, deadline=None)
@given(
    configs,
    st.lists(step, min_size=1, max_size=20),
    st.sampled_from(["answer", "error", "cancel", "guard", "nothing", "rejected"]),
)
def test_a_run_ends_with_exactly_one_outcome(config, steps, how):
    s, ds = play(config, steps)
    kwargs = {
        "answer": dict(answer="a"),
        "error": dict(error="boom"),
        "cancel": dict(cancelled=True),
        "guard": dict(guard_error="x"),
        "nothing": dict(),
        "rejected": dict(answer="a", verified=False),
    }[how]
    end = s.finish(**kwargs)
    assert isinstance(end.outcome, Outcome)
    if ds[-1].stops:
        assert end.outcome is ds[-1].outcome and end.outcome is not Outcome.SUCCEEDED
    elif how == "answer":
        assert end.outcome is Outcome.SUCCEEDED
    json.dumps(end.model_dump(mode="json"))  # the evidence is serialisable
