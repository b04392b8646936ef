"""Helpers shared by the JVM tests (policies that stop or reflect at a given iteration)."""

from __future__ import annotations

from pyguard.base.decisions import Action, Decision
from pyguard.base.events import IterationEvent, Outcome


def stop_at(index: int, *, outcome: Outcome = Outcome.STALLED, rule: str = "test_rule", reason: str = "test stop"):
    """A policy that continues until iteration ``index`` and stops after it."""

    def policy(event: IterationEvent) -> Decision | None:
        if event.index >= index:
            return Decision(action=Action.STOP, outcome=outcome, rule=rule, reason=reason)
        return None

    return policy


def reflect_at(index: int, text: str = "You keep repeating the same lookup; answer with what you know."):
    def policy(event: IterationEvent) -> Decision | None:
        if event.index == index:
            return Decision(action=Action.REFLECT, reflection=text, reason="no new information", rule="repeat_no_gain")
        return None

    return policy


STYLES = ("aiservices", "agentic", "executor")
