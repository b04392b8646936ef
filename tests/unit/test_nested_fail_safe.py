"""A run in a tree: its Java fail-safe is held to the model calls the tree has left (plus the named margin)."""

from __future__ import annotations

from pyguard.base.limits import FAIL_SAFE_MARGIN
from pyguard.engine.tree import BudgetNode, Spend, TreeLimits
from pyguard.live.guard import Guard
from pyguard.live.nested import NestedRun


def run_in_tree(limits: TreeLimits | None, guard: Guard | None = None) -> NestedRun:
    budget = BudgetNode.root("root", limits, clock=lambda: 0.0)
    return NestedRun(guard or Guard(), run_id="root", task="t", task_type=None, kind="supervisor", budget=budget)


def test_the_fail_safe_is_the_tree_remainder_plus_the_margin():
    run = run_in_tree(TreeLimits(model_calls=9))
    assert run.fail_safe_calls() == 9 + FAIL_SAFE_MARGIN
    run.budget.charge(Spend(model_calls=7))
    assert run.fail_safe_calls() == 2 + FAIL_SAFE_MARGIN


def test_a_child_s_fail_safe_follows_its_parent_s_remainder():
    root = run_in_tree(TreeLimits(model_calls=20))
    root.budget.charge(Spend(model_calls=18))
    child = NestedRun(
        root.guard, run_id="c", task="t", task_type=None, kind="supervisor", budget=root.budget.child("c"), parent=root
    )
    assert child.fail_safe_calls() == 2 + FAIL_SAFE_MARGIN


def test_without_a_tree_limit_the_guard_s_own_fail_safe_holds():
    guard = Guard(fail_safe_calls=40)
    assert run_in_tree(None, guard).fail_safe_calls() == 40
    assert run_in_tree(TreeLimits(model_calls=100), guard).fail_safe_calls() == 40  # the lower of the two
