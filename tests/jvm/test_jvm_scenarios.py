"""The shipped scenarios behave as documented on a real AiServices agent (unguarded: LangChain4j's own caps)."""

from __future__ import annotations

import pytest

from pyguard.errors import InputError
from pyguard.jvm import load_scenario, run_agent, scenario_names, scripted_model


def test_every_shipped_scenario_loads(jvm):
    assert set(scenario_names()) >= {"convergent", "oscillating", "divergent", "polling", "pagination",
                                     "failing_tools", "logistics_incident"}
    for name in scenario_names():
        assert scripted_model(name).scenario().name() == name


def test_polling_repeats_the_same_call_with_changing_results_then_answers(jvm):
    r = run_agent("aiservices", scripted_model("polling"), "is the export done?", callback=lambda e: None)
    assert r.status == "answered" and r.answer.startswith("The export finished: job exp-77: DONE")
    calls = [e.tool_calls[0].arguments for e in r.events if e.tool_calls]
    assert calls == ['{"jobId":"exp-77"}'] * 5
    results = [e.observations[0].text for e in r.events[1:]]
    assert len(set(results)) == 5  # every poll brought something new


def test_pagination_walks_the_pages_then_answers(jvm):
    r = run_agent("executor", scripted_model("pagination"), "which orders are delayed?", callback=lambda e: None)
    assert r.status == "answered" and r.stats.model_calls == 5
    assert [e.observations[0].text.split(":")[0] for e in r.events[1:]] == ["page 1/4", "page 2/4", "page 3/4", "page 4/4"]


@pytest.mark.parametrize("name", ["oscillating", "divergent"])
def test_non_converging_scenarios_run_into_langchain4j_own_cap(jvm, name):
    r = run_agent("aiservices", scripted_model(name), "x", guard=False, max_tool_calling_round_trips=12)
    assert r.status == "exhausted" and "exceeded 12 tool calling round trips" in r.reason
    assert r.stats.model_calls == 13


def test_seeds_change_the_incident_run(jvm):
    lengths = {run_agent("aiservices", scripted_model("logistics_incident", seed=s), "x", guard=False).stats.model_calls
               for s in range(10)}
    assert min(lengths) == 11 and max(lengths) > 11  # answers after the 10 lookups, or keeps going


def test_scenario_sources(jvm, tmp_path):
    data = load_scenario("convergent")
    path = tmp_path / "mine.json"
    path.write_text('{"name": "mine", "turns": [{"answer": "hello"}]}')
    assert run_agent("executor", scripted_model(str(path)), "x", guard=False).answer == "hello"
    assert run_agent("executor", scripted_model(data), "x", guard=False).status == "answered"
    with pytest.raises(InputError, match="does not exist"):
        load_scenario(str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    with pytest.raises(InputError, match="not valid JSON"):
        load_scenario(str(bad))
