"""Budgets composed down a run tree (pure): a child gets at most its parent's remainder; spend is charged upwards."""

from __future__ import annotations

import pytest

from pyguard.base.errors import ConfigError
from pyguard.base.events import IterationEvent, Outcome, RunRecord, RunStart
from pyguard.engine.config import Price
from pyguard.engine.tree import BudgetNode, Spend, TreeLimits, event_cost
from pyguard.live.nested import run_tree, supervisor_invocation


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def event(tokens: int | None = 10, model: str | None = "m") -> IterationEvent:
    return IterationEvent(run_id="r", index=1, input_tokens=tokens, output_tokens=0 if tokens else None, model=model)


def test_a_child_gets_at_most_what_its_parent_has_left():
    root = BudgetNode.root("root", TreeLimits(model_calls=10, tokens=1000), clock=Clock())
    root.charge(Spend(model_calls=4, tokens=100))
    child = root.child("c1", TreeLimits(model_calls=8, tokens=50))
    assert child.limits.model_calls == 6  # the parent's remainder, below the child's own 8
    assert child.limits.tokens == 50  # the child's own limit, below the parent's remainder
    assert child.remaining().model_calls == 6


def test_what_a_child_spends_is_charged_to_every_ancestor():
    root = BudgetNode.root("root", TreeLimits(model_calls=10), clock=Clock())
    child = root.child("c")
    grandchild = child.child("g")
    grandchild.charge_event(event(tokens=7))
    grandchild.charge_event(event(tokens=5))
    assert grandchild.own == Spend(2, 12, 0.0)
    assert child.own == Spend() and child.spent == Spend(2, 12, 0.0)
    assert root.spent == Spend(2, 12, 0.0)
    assert root.summary()["children"][0]["children"][0]["spent"]["model_calls"] == 2


def test_a_sibling_spending_the_remainder_exhausts_the_others():
    root = BudgetNode.root("root", TreeLimits(model_calls=5), clock=Clock())
    a, b = root.child("a"), root.child("b")
    assert a.limits.model_calls == b.limits.model_calls == 5
    for _ in range(5):
        a.charge_event(event())
    hit = b.exhausted()
    assert hit is not None and hit.evidence["owner"] == "root" and hit.rule == "tree_budget:model_calls"
    assert "run 'root''s model_calls limit of 5" in hit.message and hit.outcome is Outcome.EXPIRED
    assert b.remaining().model_calls == 0


def test_limits_are_reached_not_exceeded_and_unlimited_dimensions_never_fire():
    root = BudgetNode.root("root", TreeLimits(tokens=30), clock=Clock())
    root.charge_event(event(tokens=20))
    assert root.exhausted() is None
    root.charge_event(event(tokens=10))
    hit = root.exhausted()
    assert hit is not None and hit.evidence["dimension"] == "tokens" and hit.evidence["used"] == 30
    assert "(30 used)" in hit.message
    assert BudgetNode.root("free", clock=Clock()).exhausted() is None


def test_time_and_cost_compose_too():
    clock = Clock()
    root = BudgetNode.root("root", TreeLimits(seconds=10, cost=1.0), clock=clock)
    clock.now += 4
    child = root.child("c", TreeLimits(seconds=60))
    assert child.limits.seconds == pytest.approx(6)
    clock.now += 6
    hit = child.exhausted()
    assert hit is not None and hit.rule == "tree_budget:seconds"
    prices = {"m": Price(input_per_mtok=1_000_000, output_per_mtok=0)}
    assert event_cost(event(tokens=2), prices) == 2.0
    assert event_cost(event(tokens=2, model="other"), prices) == 0.0
    node = BudgetNode.root("r", TreeLimits(tokens=10), clock=lambda: 0.0)
    assert node.charge_event(event(tokens=None)).tokens == 0  # unknown usage (IterationEvent.tokens None) charges 0


def test_negative_usage_is_refused():
    with pytest.raises(ConfigError, match="cannot be negative"):
        BudgetNode.root("r", clock=Clock()).charge(Spend(model_calls=-1))


def test_supervisor_invocations_are_read_from_the_planner_text():
    assert supervisor_invocation('{"agentName": "tracker", "arguments": {"b": 1, "a": "x"}}') == (
        "tracker",
        '{"a": "x", "b": 1}',
    )
    assert supervisor_invocation('```json\n{"agentName": "done", "arguments": {"response": "ok"}}\n```')[0] == "done"
    assert supervisor_invocation("I am done") is None
    assert supervisor_invocation('{"agent": "x"}') is None


def test_the_tree_of_recorded_runs_and_old_traces_without_parents():
    old = RunStart.model_validate({"run_id": "old"})
    assert old.parent_run_id is None
    records = [
        RunRecord(start=RunStart(run_id="root")),
        RunRecord(start=RunStart(run_id="root-a-1", parent_run_id="root")),
        RunRecord(start=old),
    ]
    assert run_tree(records) == {None: ["root", "old"], "root": ["root-a-1"]}
