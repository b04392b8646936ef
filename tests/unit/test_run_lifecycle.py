"""One run lifecycle (issue 31): every entry point runs its agent through ``GuardedRun.drive`` (build, run
interruptibly, abandon on failure, end once); no entry point strings those steps together itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "pyguard"
ENTRY_POINTS = ["live/guard.py", "live/conversation.py", "live/agent_guard.py", "live/nested.py", "escalation.py"]
STEPS = {"interruptible", "abandon", "finish_bridge", "run_interruptibly"}
"""The lifecycle's own steps: only pyguard/live/run.py calls them."""


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_an_entry_point_runs_its_agent_only_through_the_one_lifecycle(name):
    tree = ast.parse((ROOT / name).read_text(encoding="utf-8"))
    called = {
        node.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in STEPS
    }
    assert not called, f"{name} calls the lifecycle's steps {sorted(called)} itself: use GuardedRun.drive"


def test_the_lifecycle_is_one_method_every_entry_point_uses():
    users = [n for n in ENTRY_POINTS if ".drive(" in (ROOT / n).read_text(encoding="utf-8")]
    assert set(users) >= {"live/guard.py", "live/conversation.py", "live/agent_guard.py", "live/nested.py"}
