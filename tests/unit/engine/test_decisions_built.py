"""The engine builds its decisions without validating them again (:meth:`Decision.built`): every decision it makes
on the golden corpus must be what validating the same values gives (the same types, so the same JSON, equality and
behaviour), and a built decision stays frozen."""

from __future__ import annotations

import pydantic
import pytest
from test_decisions_golden import cases

from pyguard.base.decisions import Action, Decision
from pyguard.base.events import Outcome
from pyguard.engine import Policy


def test_every_decision_on_the_golden_corpus_is_what_validation_gives():
    seen: set[Action] = set()
    for _name, config, runs in cases():
        policy = Policy(config)
        for run in runs[:40]:
            session = policy.new_run(run.events[0].run_id)
            for event in run.events:
                decision = session.observe(event)
                validated = Decision.model_validate(decision.model_dump())
                assert decision == validated and type(decision.action) is Action
                assert decision.model_dump_json() == validated.model_dump_json()
                seen.add(decision.action)
                if decision.stops:
                    break
    assert seen == set(Action)  # continue, reflect and stop were all built and checked


def test_a_built_decision_is_frozen_and_equal_to_the_validated_one():
    built = Decision.built(
        Action.STOP, reason="r", rule="cycle", outcome=Outcome.STALLED, evidence={"a": 1}, iteration=3, turn=1, budget=9
    )
    same = Decision(
        action="stop", reason="r", rule="cycle", outcome="stalled", evidence={"a": 1}, iteration=3, turn=1, budget=9
    )
    assert built == same and repr(built) == repr(same) and built.stops
    with pytest.raises(pydantic.ValidationError):
        built.reason = "changed"  # type: ignore[misc]
    assert built.model_copy(update={"reason": "x"}).reason == "x" and built.reason == "r"
