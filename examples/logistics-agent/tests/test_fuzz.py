"""Searching for the loops a guard misses on this agent's own tools (pyguard fuzz): with a deliberately weakened
policy a loop escapes, and the search shrinks it and saves it as a scenario to keep; the default policy stops every
lookup loop the search tries within 15 model calls, well before the agent's own cap of 25 round trips. (At a budget of
10 it finds one: the same status lookup with an order id that changes on every call, each "not found", stopped after
call 11.)"""

from __future__ import annotations

import json

import pytest

from pyguard.live.fuzzing import AgentFuzzer

LOOKUPS = ("get_shipment_status", "get_carrier_incidents")
WEAK = {
    "base_budget": 40,
    "max_reflections": 5,
    "stop_on_fruitless_retry": False,
    "stop_on_repeated_evidence": False,
    "stall": {"normalised_repeats": False, "failure_templates": False, "low_gain_streak": 50, "empty_streak": 50},
}


def fuzzer(pyguard_guard, agent_factory, tools, budget=10):
    return AgentFuzzer(
        pyguard_guard.guard,
        tools,
        task="Order 12345 is late. Why?",
        budget=budget,
        build=lambda model: agent_factory.create(model, tools),  # the agent as the service builds it (25 round trips)
        only=LOOKUPS,
    )


@pytest.mark.pyguard(policy=WEAK)
def test_a_weakened_guard_lets_a_loop_escape_found_shrunk_and_saved(pyguard_guard, agent_factory, tools, tmp_path):
    finding = fuzzer(pyguard_guard, agent_factory, tools).escape(examples=10)
    assert finding is not None and finding.script.family == "repeat" and finding.script.before == ()
    assert finding.unguarded_calls == 26  # LangChain4j's own cap of this agent (25 round trips) ends it
    saved = finding.save(tmp_path)
    assert json.loads(saved.read_text())["loop_from"] == 0


def test_the_default_guard_stops_every_lookup_loop_tried_within_15_calls(pyguard_guard, agent_factory, tools):
    assert fuzzer(pyguard_guard, agent_factory, tools, budget=15).escape(examples=10) is None
