import pytest

from pyguard.base.errors import ConfigError
from pyguard.base.events import IterationEvent, Outcome, ToolCall
from pyguard.engine.caps import (
    CostCap,
    IdenticalActionCap,
    ModelCallCap,
    TokenCap,
    ToolCallCap,
    WallClockCap,
)
from pyguard.engine.conditions import AllOf, AnyOf, FunctionCondition, RunState
from pyguard.engine.config import CapsConfig, Price
from pyguard.engine.stop import build_condition
from pyguard.engine.usage import UsageState, UsageTracker


def at(usage: UsageState) -> RunState:
    return RunState(run_id="r", iteration=usage.model_calls, usage=usage)


def ev(i, calls=(), model="m", inp=100, out=10):
    return IterationEvent(
        run_id="r",
        index=i,
        model=model,
        input_tokens=inp,
        output_tokens=out,
        tool_calls=tuple(ToolCall(name=n, arguments=a) for n, a in calls),
    )


def test_tracker_counts_everything():
    t = UsageTracker({"m": Price(input_per_mtok=1.0, output_per_mtok=2.0)})
    t.update(ev(1, [("a", '{"x":1}'), ("b", "{}")]), 1.0)
    s = t.update(ev(2, [("a", '{ "x": 1 }')], model="other"), 2.5)
    assert (s.model_calls, s.tool_calls, dict(s.tool_calls_by_tool)) == (2, 3, {"a": 2, "b": 1})
    assert (s.input_tokens, s.output_tokens, s.total_tokens) == (200, 20, 220)
    assert s.cost == pytest.approx(100 / 1e6 + 20 / 1e6) and s.unpriced_calls == 1
    assert s.most_identical == 2 and s.elapsed_s == 2.5
    t.reset()
    assert t.state == UsageState()


def test_star_price_covers_other_models():
    t = UsageTracker({"*": Price(input_per_mtok=1e6, output_per_mtok=0)})
    assert t.update(ev(1, model="anything", inp=3), 0).cost == pytest.approx(3.0)


@pytest.mark.parametrize(
    "cap, state, fires, name",
    [
        (ModelCallCap(3), UsageState(model_calls=2), False, None),
        (ModelCallCap(3), UsageState(model_calls=3), True, "model_calls"),
        (ToolCallCap(5), UsageState(tool_calls=5), True, "tool_calls"),
        (ToolCallCap(2, "send"), UsageState(tool_calls_by_tool={"send": 2}), True, "tool_calls:send"),
        (ToolCallCap(2, "send"), UsageState(tool_calls_by_tool={"other": 9}), False, None),
        (TokenCap(100, "input"), UsageState(input_tokens=100), True, "input_tokens"),
        (TokenCap(100, "output"), UsageState(output_tokens=99), False, None),
        (TokenCap(100), UsageState(total_tokens=150), True, "total_tokens"),
        (CostCap(1.0), UsageState(cost=1.2), True, "cost"),
        (WallClockCap(30), UsageState(elapsed_s=29.9), False, None),
        (WallClockCap(30), UsageState(elapsed_s=30), True, "wall_clock"),
        (IdenticalActionCap(3), UsageState(most_identical=3, most_identical_action="a()"), True, "identical_actions"),
    ],
)
def test_each_cap(cap, state, fires, name):
    hit = cap.check(at(state))
    assert (hit is not None) is fires
    if hit is not None:
        assert hit.rule == f"cap:{name}" and hit.evidence["cap"] == name and hit.message
        assert hit.outcome is Outcome.EXPIRED and hit.leaves() == (hit,)


def names(hit):
    return [] if hit is None else [h.evidence["cap"] for h in hit.leaves()]


def test_or_and_compose_and_flatten():
    a, b, c = ModelCallCap(2), TokenCap(100), CostCap(1.0)
    either = a | b | c
    assert isinstance(either, AnyOf) and len(either.conditions) == 3
    both = a & b
    assert isinstance(both, AllOf)
    s = at(UsageState(model_calls=2, total_tokens=50))
    assert names(either.check(s)) == ["model_calls"]
    assert both.check(s) is None
    s2 = at(UsageState(model_calls=2, total_tokens=100))
    assert names(both.check(s2)) == ["model_calls", "total_tokens"]
    assert names((a & b | c).check(s2)) == ["model_calls", "total_tokens"]
    assert len(((a | b) | (c | a)).conditions) == 4  # flattened, nothing dropped


def test_function_condition_and_bad_values():
    cap = FunctionCondition("even", lambda s: "even calls" if s.usage.model_calls % 2 == 0 else None)
    assert cap.check(at(UsageState(model_calls=1))) is None
    hit = cap.check(at(UsageState(model_calls=2)))
    assert hit is not None and hit.message == "even calls" and hit.rule == "cap:even"
    with pytest.raises(ConfigError, match="-1"):
        ModelCallCap(-1)
    with pytest.raises(ConfigError, match="'weird'"):
        TokenCap(10, "weird")
    with pytest.raises(ConfigError, match="3"):
        ModelCallCap(1) | 3  # type: ignore[operator]
    with pytest.raises(ConfigError, match="no configuration"):
        cap.config()


def test_the_caps_table_is_the_stop_conditions_of_the_same_names():
    assert CapsConfig().conditions() == []
    caps = CapsConfig(max_model_calls=3, max_tool_calls_per_tool={"send": 1}, max_input_tokens=9, max_wall_s=5)
    assert [c.model_dump() for c in caps.conditions()] == [
        {"kind": "model_calls", "limit": 3},
        {"kind": "tool_calls", "limit": 1, "tool": "send"},
        {"kind": "input_tokens", "limit": 9},
        {"kind": "wall_clock", "seconds": 5.0},
    ]
    built = [build_condition(c) for c in caps.conditions()]
    assert (
        repr(AnyOf(*built)) == "(ModelCallCap(3) | ToolCallCap(1, 'send') | TokenCap(9, 'input') | WallClockCap(5.0))"
    )
