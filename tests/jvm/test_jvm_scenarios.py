"""The shipped scenarios behave as documented on a real AiServices agent (unguarded: LangChain4j's own caps)."""

from __future__ import annotations

import pytest

from pyguard.base.errors import InputError
from pyguard.jvm import load_scenario, run_agent, scenario_names, scripted_model


def test_every_shipped_scenario_loads(jvm):
    assert set(scenario_names()) >= {
        "convergent",
        "oscillating",
        "divergent",
        "polling",
        "pagination",
        "failing_tools",
        "logistics_incident",
    }
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
    assert [e.observations[0].text.split(":")[0] for e in r.events[1:]] == [
        "page 1/4",
        "page 2/4",
        "page 3/4",
        "page 4/4",
    ]


@pytest.mark.parametrize("name", ["oscillating", "divergent"])
def test_non_converging_scenarios_run_into_langchain4j_own_cap(jvm, name):
    r = run_agent("aiservices", scripted_model(name), "x", guard=False, max_tool_calling_round_trips=12)
    assert r.status == "exhausted" and "exceeded 12 tool calling round trips" in r.reason
    assert r.stats.model_calls == 13


def test_seeds_change_the_incident_run(jvm):
    lengths = {
        run_agent("aiservices", scripted_model("logistics_incident", seed=s), "x", guard=False).stats.model_calls
        for s in range(10)
    }
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


# ---- the format's extensions on real LangChain4j loops (issue 10) -------------------------------------------------


def test_a_conversation_is_one_run_of_several_chat_calls(jvm):
    data = load_scenario("support_conversation")
    users = [s["user"] for s in data["conversation"]]
    r = run_agent("aiservices", scripted_model(data), users, callback=lambda e: None, max_tool_calling_round_trips=5)
    assert r.status == "answered", r.reason
    finals = [e.text for e in r.events if not e.tool_calls]
    assert finals[0].startswith("Your order #W7264275 is pending")
    assert finals[1] == "Your export is ready: s3://exports/orders.csv"
    assert r.answer == finals[2] and "6817146515" in r.answer
    # each later user message arrives as the observation of the call after the previous answer
    opening = [e.observations[0].text for e in r.events if e.observations and e.observations[0].kind == "user"]
    assert opening == users
    # the job id of the polls came from the submit result; the failed search echoed its query and was retried with
    # the first suggestion of the error
    calls = [(c.name, c.arguments) for e in r.events for c in e.tool_calls]
    assert calls.count(("get_job_status", '{"job_id":"job-7f3a21c0"}')) == 3
    assert ("search_products", '{"query":"Desk Lamp (brass)"}') in calls
    errors = [o for e in r.events for o in e.observations if o.is_error]
    assert len(errors) == 1 and "Could not find [brass desk lamp]" in errors[0].text
    # LangChain4j's cap holds per chat() call: 5 model calls at most each, 11 in all
    assert r.stats.model_calls == 11
    capped = run_agent("aiservices", scripted_model(data), users, guard=False, max_tool_calling_round_trips=4)
    assert capped.status == "exhausted" and capped.stats.model_calls == 3 + 5  # the export message needs 5


def test_a_conversation_needs_the_aiservices_style(jvm):
    from pyguard.base.errors import ConfigError

    with pytest.raises(ConfigError, match="aiservices"):
        run_agent("executor", scripted_model("support_conversation"), ["a", "b"], guard=False)
    with pytest.raises(ConfigError, match="non-empty list"):
        run_agent("aiservices", scripted_model("support_conversation"), [], guard=False)


def test_a_reaction_tries_something_new_before_answering(jvm):
    from jvm_support import reflect_at

    looping = run_agent(
        "aiservices", scripted_model("edit_loop"), "fix it", guard=False, max_tool_calling_round_trips=9
    )
    assert looping.status == "exhausted"  # edit, undo, re-do ... the same failure every time
    r = run_agent("aiservices", scripted_model("edit_loop"), "fix it", callback=reflect_at(5))
    assert r.status == "answered" and r.answer.startswith("Fixed with `value = int(raw.strip())`: 42")
    calls = [c for e in r.events for c in e.tool_calls]
    assert [c.id for c in calls][5:] == ["react_6_1", "react_7_1"]  # the two tries after the reflection
    assert r.stats.model_calls == 8
    # the undo and the re-do are accepted writes every time (each changes the file's content in the tools' state)
    edits = [o for e in r.events for o in e.observations if o.tool_name == "str_replace_editor"]
    assert all("has been edited" in o.text for o in edits)
