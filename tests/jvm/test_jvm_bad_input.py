"""Bad input never crashes the JVM, hangs a run or loses an event: each gives a well-formed event or a clear error."""

from __future__ import annotations

import pytest

from pyguard.base.events import IterationEvent, sum_tokens
from pyguard.engine.window import WINDOW_CHARS
from pyguard.jvm import run_agent, scripted_model


def record():
    seen: list[IterationEvent] = []
    return seen, (lambda e: seen.append(e))


def one_call(name: str, arguments, *, answer: str = "done", usage: dict | None = None, extra_turns=()) -> dict:
    """A scenario: one tool call, then an answer."""
    scenario = {
        "name": f"bad-{name}",
        "toolset": "none",
        "turns": [{"tool_calls": [{"name": name, "arguments": arguments}]}, *extra_turns, {"answer": answer}],
    }
    if usage is not None:
        scenario["usage"] = usage
    return scenario


@pytest.mark.parametrize("style", ["aiservices", "executor"])
def test_malformed_json_arguments(jvm, style):
    seen, policy = record()
    model = scripted_model(one_call("get_shipment_status", '{"orderId": 12345'))
    r = run_agent(style, model, "x", callback=policy, tools="logistics")
    assert seen[0].tool_calls[0].arguments == '{"orderId": 12345'  # raw, exactly as the model wrote it
    assert len(seen) == r.stats.model_calls == int(model.calls())
    if style == "aiservices":
        # LangChain4j's default ToolArgumentsErrorHandler rethrows: a clear failure, not a hang
        assert r.status == "failed" and r.error_type and "Exception" in r.error_type
    else:
        # pyguard's executor hands the error back to the model, which then answers
        assert r.status == "answered"
        (obs,) = seen[1].observations
        assert obs.is_error and obs.text.startswith("Error:")


@pytest.mark.parametrize("style", ["aiservices", "agentic", "executor"])
def test_a_tool_that_throws_gives_an_error_observation(jvm, style):
    seen, policy = record()
    r = run_agent(
        style, scripted_model(one_call("throwing_tool", {"query": "SKU-1"})), "x", callback=policy, tools="hazards"
    )
    assert r.status == "answered" and len(seen) == 2
    (obs,) = seen[1].observations
    assert obs.is_error and "warehouse API down (503)" in obs.text and obs.tool_name == "throwing_tool"


@pytest.mark.parametrize("style", ["aiservices", "executor"])
def test_hallucinated_tool_name(jvm, style):
    seen, policy = record()
    r = run_agent(
        style,
        scripted_model(one_call("get_shipment_statuz", {"orderId": "1"})),
        "x",
        callback=policy,
        tools="logistics",
    )
    assert seen[0].tool_calls[0].name == "get_shipment_statuz"
    assert len(seen) == r.stats.model_calls
    if style == "aiservices":
        assert r.status == "failed" and "get_shipment_statuz" in r.error  # LangChain4j's default strategy throws
    else:
        assert r.status == "answered" and seen[1].observations[0].is_error


def test_scenario_tools_failing_every_time(jvm):
    seen, policy = record()
    r = run_agent("aiservices", scripted_model("failing_tools"), "x", callback=policy)
    assert r.status == "answered" and len(seen) == 5
    assert all(e.observations[0].is_error and "503" in e.observations[0].text for e in seen[1:])


@pytest.mark.parametrize("style", ["aiservices", "executor"])
def test_provider_without_usage(jvm, style):
    seen, policy = record()
    model = scripted_model(one_call("get_shipment_status", {"orderId": "12345"}, usage={"report": False}))
    r = run_agent(style, model, "x", callback=policy, tools="logistics")
    assert r.status == "answered" and len(seen) == 2
    assert all(e.input_tokens is None and e.output_tokens is None and e.total_tokens is None for e in seen)
    assert sum_tokens(seen) is None  # unknown, not 0


def test_empty_and_five_megabyte_observations(jvm, J):
    seen, policy = record()
    scenario = one_call(
        "empty_output",
        {"region": "EU"},
        extra_turns=[{"tool_calls": [{"name": "huge_output", "arguments": {"what": "all"}}]}],
    )
    r = run_agent("aiservices", scripted_model(scenario), "x", callback=policy, tools="hazards")
    assert r.status == "answered" and len(seen) == 3
    assert seen[1].observations[0].text == "" and not seen[1].observations[0].is_error
    big = seen[2].observations[0]
    size = int(J("demo.HazardTools").BIG_SIZE)
    assert big.whole_chars == big.chars == size == 5 * 1024 * 1024  # sent as its window, and said so
    assert len(big.text) <= WINDOW_CHARS and f"characters of {size} not read here" in big.text
    assert seen[2].input_tokens > 1_000_000  # the scripted model re-reads it, like a real one


def test_non_utf8_bytes_in_a_tool_output(jvm):
    seen, policy = record()
    r = run_agent(
        "aiservices",
        scripted_model(one_call("binary_output", {"printer": "p1"})),
        "x",
        callback=policy,
        tools="hazards",
    )
    assert r.status == "answered" and len(seen) == 2
    text = seen[1].observations[0].text
    text.encode("utf-8")  # valid: undecodable bytes arrive as U+FFFD, the unpaired surrogate was replaced
    assert "\ufffd" in text and "lone:\ufffd end" in text and "latin1:Ã(ÿþA" in text


def test_invalid_scenarios_are_input_errors(jvm):
    from pyguard.base.errors import InputError

    with pytest.raises(InputError, match="unknown scenario 'nope'"):
        scripted_model("nope")
    with pytest.raises(InputError, match="needs exactly one of"):
        scripted_model({"name": "x", "turns": [{"answer": "a", "tool_calls": [{"name": "t"}]}]})
    with pytest.raises(InputError, match="probabilities sum to"):
        scripted_model({"name": "x", "turns": [{"branches": [{"p": 0.3, "turn": {"answer": "a"}}]}]})
    with pytest.raises(InputError, match="unknown key 'turn_s'"):
        scripted_model({"name": "x", "turns": [{"answer": "a"}], "turn_s": []})
