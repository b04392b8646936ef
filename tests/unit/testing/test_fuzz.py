"""The fuzz search without a JVM: scripts built from tool specs are valid scenarios for those tools, and the search
finds and shrinks what a given guard misses (here a stand-in guard as a plain function; the agent and pyguard's real
guard are in tests/jvm/test_jvm_fuzz.py)."""

from __future__ import annotations

from hypothesis import given, settings

from pyguard.testing.fuzz import Misbehaviour, Outcome, find_escape, find_false_stop, misbehaviours
from pyguard.testing.scenario_lint import ToolParam, ToolSpec, lint_scenario

TOOLS = [
    ToolSpec(name="lookup", params={"id": ToolParam(type="string")}, required=("id",)),
    ToolSpec(name="count", params={"n": ToolParam(type="integer")}, required=("n",)),
]


@settings(max_examples=60, deadline=None)
@given(misbehaviours(TOOLS))
def test_every_script_is_a_scenario_that_fits_the_tools_and_loops(script: Misbehaviour):
    scenario = script.scenario()
    assert lint_scenario(scenario, TOOLS) == []
    assert scenario["loop_from"] == len(script.before) and len(scenario["turns"]) == len(script.before) + len(
        script.loop
    )
    assert len({c.model_dump_json() for c in script.before}) == len(script.before)  # the head never repeats itself


@settings(max_examples=30, deadline=None)
@given(misbehaviours(TOOLS, legitimate=True))
def test_a_legitimate_script_answers_after_distinct_calls(script: Misbehaviour):
    scenario = script.scenario()
    assert "loop_from" not in scenario and "answer" in scenario["turns"][-1]
    assert len({c.model_dump_json() for c in script.before}) == len(script.before) >= 1


def stops_exact_repeats_only(script: Misbehaviour) -> Outcome:
    """A stand-in guard that stops the third identical call in a row and nothing else."""
    calls = list(script.before) + list(script.loop) * 10
    for i in range(2, len(calls)):
        if calls[i] == calls[i - 1] == calls[i - 2]:
            return Outcome(model_calls=i + 1, stopped_at=i + 1)
    return Outcome(model_calls=len(calls), stopped_at=None)


def test_the_search_finds_what_the_guard_misses_and_shrinks_it():
    found = find_escape(stops_exact_repeats_only, TOOLS, budget=10, examples=200)
    assert found is not None
    script, outcome = found
    assert outcome.stopped_at is None
    assert script.family in ("oscillate", "rephrase", "vary_id")  # a plain repeat is caught
    assert script.before == ()  # shrunk: no legitimate head is needed to escape


def test_nothing_is_found_when_the_guard_stops_everything_early():
    def stops_everything(script: Misbehaviour) -> Outcome:
        return Outcome(model_calls=3, stopped_at=3)

    assert find_escape(stops_everything, TOOLS, budget=10, examples=30) is None
    found = find_false_stop(stops_everything, TOOLS, examples=30)
    assert found is not None and found[0].family == "legitimate" and len(found[0].before) == 1
