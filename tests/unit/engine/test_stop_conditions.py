"""Stop conditions (pyguard.engine.stop): every condition's config round-trips, composition flattens, conditions
compose from Python and from TOML, and a composed condition recorded in a trace header is rebuilt by replay."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from pyguard.base.decisions import Action
from pyguard.base.errors import ConfigError
from pyguard.base.events import IterationEvent, Observation, Outcome, RunEnd, RunRecord, RunStart, ToolCall
from pyguard.cli import main
from pyguard.engine import Policy, PolicyConfig
from pyguard.engine.paired import judged_before_next
from pyguard.engine.stop import (
    AllOf,
    AnyOf,
    CostCap,
    HardCap,
    IdenticalActionCap,
    IterationBudget,
    ModelCallCap,
    RunState,
    Stalled,
    StopCondition,
    StopHit,
    TokenCap,
    ToolCallCap,
    WallClockCap,
    build_condition,
    policy_condition,
)
from pyguard.engine.stop_config import AnyOfConfig
from pyguard.engine.usage import UsageState
from pyguard.replay import replay_runs
from pyguard.trace import TraceWriter, read_trace

CONDITIONS: list[StopCondition] = [
    ModelCallCap(7),
    ToolCallCap(3),
    ToolCallCap(2, "send_email"),
    TokenCap(500),
    TokenCap(40, "input"),
    TokenCap(40, "output"),
    CostCap(0.25),
    WallClockCap(12.5),
    IdenticalActionCap(4),
    Stalled(),
    IterationBudget(),
    HardCap(),
    ModelCallCap(60) | (TokenCap(200_000) & WallClockCap(300.0)),
    AllOf(ToolCallCap(9), AnyOf(CostCap(1.0), IdenticalActionCap(3))),
]


@pytest.mark.parametrize("condition", CONDITIONS, ids=repr)
def test_every_condition_config_round_trips(condition: StopCondition) -> None:
    config = condition.config()
    assert type(config).model_validate(config.model_dump()) == config
    assert type(config).model_validate_json(config.model_dump_json()) == config
    rebuilt = build_condition(config)
    assert rebuilt.config() == config and repr(rebuilt) == repr(condition)
    policy = PolicyConfig(stop=condition)  # the object is kept as its config, in a dict and in TOML alike
    assert PolicyConfig.model_validate(policy.model_dump(mode="json")) == policy
    assert PolicyConfig.from_dict(tomllib.loads(policy.to_toml())) == policy


def state(**usage: int) -> RunState:
    u = UsageState(**usage)  # type: ignore[arg-type]
    return RunState(run_id="r", iteration=u.model_calls, usage=u, budget=100, hard_cap=150)


def rules(hit: StopHit | None) -> list[str]:
    return [] if hit is None else [h.rule for h in hit.leaves()]


def test_or_reports_every_hit_and_and_needs_all() -> None:
    a, b, c = ModelCallCap(2), ToolCallCap(3), TokenCap(100)
    assert rules((a | b | c).check(state(model_calls=2, tool_calls=3))) == ["cap:model_calls", "cap:tool_calls"]
    assert (a & b).check(state(model_calls=2, tool_calls=1)) is None
    hit = ((a & b) | c).check(state(model_calls=2, tool_calls=3))
    assert hit is not None and hit.rule == "cap:model_calls" and hit.outcome is Outcome.EXPIRED
    assert rules(hit) == ["cap:model_calls", "cap:tool_calls"]


def test_combinators_flatten_and_refuse_what_is_not_a_condition() -> None:
    a, b, c, d = ModelCallCap(1), ModelCallCap(2), ModelCallCap(3), ModelCallCap(4)
    assert len((a | b | (c | d)).conditions) == 4
    mixed = a | (b & c)
    assert len(mixed.conditions) == 2 and isinstance(mixed.conditions[1], AllOf)
    assert len((a & b & c).conditions) == 3
    with pytest.raises(ConfigError, match="'nope'"):
        AnyOf(a, "nope")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="at least one"):
        AllOf()


class Every(StopCondition):
    """Stateful: fires on every ``n``-th check."""

    def __init__(self, n: int) -> None:
        self.n, self.seen = n, 0

    def check(self, state: RunState) -> StopHit | None:
        self.seen += 1
        return StopHit("cap:every", Outcome.EXPIRED, f"check {self.seen}") if self.seen % self.n == 0 else None

    def reset(self) -> None:
        self.seen = 0


def test_reset_reaches_every_stateful_condition_and_all_of_checks_them_all() -> None:
    first, second = Every(2), Every(3)
    both = first & (ModelCallCap(99) | second)
    for _ in range(4):
        both.check(state(model_calls=1))
    assert (first.seen, second.seen) == (4, 4)  # checked every time, whether or not another fired
    both.reset()
    assert (first.seen, second.seen) == (0, 0)


def test_a_toml_stop_table_composes_with_the_built_in_conditions(tmp_path: Path) -> None:
    path = tmp_path / "pyguard.toml"
    path.write_text(
        "[stop]\n"
        'kind = "any"\n'
        "of = [\n"
        '  { kind = "tool_calls", limit = 2, tool = "send_email" },\n'
        '  { kind = "all", of = [{ kind = "model_calls", limit = 3 }, { kind = "total_tokens", limit = 250 }] },\n'
        "]\n"
    )
    config = PolicyConfig.from_toml(path)
    assert isinstance(config.stop, AnyOfConfig)
    whole = policy_condition(config)
    assert repr(whole) == (
        "(Stalled() | ToolCallCap(2, 'send_email') | (ModelCallCap(3) & TokenCap(250, 'total')) | HardCap()"
        " | IterationBudget())"
    )
    session = Policy(config).new_run("r")
    decisions = [session.observe(e) for e in productive_run("r", 3, tokens=100)]
    assert decisions[-1].stops and decisions[-1].rule == "cap:model_calls"
    assert decisions[-1].reason == "hard cap reached (model_calls, total_tokens): 3 model calls (limit 3)"


def test_a_bad_stop_table_is_refused_naming_the_key() -> None:
    with pytest.raises(ConfigError, match="stop"):
        PolicyConfig.from_dict({"stop": {"kind": "model_calls", "limit": 0}})
    with pytest.raises(ConfigError, match="stop"):
        PolicyConfig.from_dict({"stop": {"kind": "sometimes"}})


def productive_run(run_id: str, n: int, *, tokens: int = 10) -> list[IterationEvent]:
    """n model calls, each searching something new and getting a new answer (the stall rules never fire)."""
    return [
        IterationEvent(
            run_id=run_id,
            index=i,
            input_tokens=tokens,
            output_tokens=0,
            total_tokens=tokens,
            tool_calls=(ToolCall(id=f"c{i}", name="search", arguments=f'{{"q": "topic {i}"}}'),),
            observations=(Observation(tool_call_id=f"c{i - 1}", tool_name="search", text=f"fact {i}: " + "x" * i * 7),)
            if i > 1
            else (),
        )
        for i in range(1, n + 1)
    ]


def test_replay_rebuilds_the_composed_condition_from_the_trace_header(tmp_path: Path) -> None:
    condition = ToolCallCap(4, "search") & (TokenCap(55) | WallClockCap(3600.0))
    config = PolicyConfig(stop=condition)
    events = productive_run("live", 12)
    # live: the engine driven call by call, as the guard drives it (each call's response, then its tool results
    # before the next call), and the trace the guard writes
    session = Policy(config).new_run("live")
    live = []
    for k, e in enumerate(events):
        live.append(session.observe(e))
        after = events[k + 1].observations if k + 1 < len(events) else ()
        if not live[-1].stops and judged_before_next(e, after):
            live.append(session.observe_results(e.index, after))
        if live[-1].stops:
            break
    end = session.finish()
    # 4 searches are reached at call 4, 55 tokens only at call 6: the AND waits for both
    assert live[-1].rule == "cap:tool_calls:search" and live[-1].iteration == 6
    assert len(live) == 11  # calls 1-5 judged twice: their response, then their results before the next call
    path = tmp_path / "live.jsonl"
    with TraceWriter(path) as writer:
        writer.write_run(
            RunRecord(
                start=RunStart(run_id="live", policy=config.model_dump(mode="json")),
                events=events[: live[-1].iteration],
                end=end,
            ),
            live,
        )
    (traced,) = read_trace(path).runs
    record = traced.record
    assert [d.rule for d in traced.decisions] == [d.rule for d in live]
    replayed = replay_runs([record]).runs[0]  # no config given: the header's conditions judge the run
    assert [(d.action, d.rule, d.reason, d.iteration, d.budget) for d in replayed.decisions] == [
        (d.action, d.rule, d.reason, d.iteration, d.budget) for d in live
    ]
    bare = replay_runs([record.model_copy(update={"start": RunStart(run_id="live")})]).runs[0]
    assert all(d.action is Action.CONTINUE for d in bare.decisions)  # without the header nothing stops it
    # and the command: `pyguard replay` reads the header the same way
    result = CliRunner().invoke(main, ["replay", str(path), "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (run,) = json.loads(result.output)["runs"]
    assert run["stop_at"] == 6 and run["reason"] == live[-1].reason


def test_a_replay_config_with_its_own_stop_wins_over_the_header() -> None:
    events = productive_run("r", 6)
    recorded = PolicyConfig(stop=ModelCallCap(2)).model_dump(mode="json")
    record = RunRecord(
        start=RunStart(run_id="r", policy=recorded), events=events, end=RunEnd(run_id="r", outcome=Outcome.FAILED)
    )
    assert replay_runs([record]).runs[0].stop_at == 2
    assert replay_runs([record], PolicyConfig(stop=ModelCallCap(4))).runs[0].stop_at == 4
