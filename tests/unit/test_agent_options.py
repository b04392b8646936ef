"""One agent-options type (issue 24): ``AgentOptions`` validates once, round-trips, and every function that takes an
agent's options combines an object and keywords the same way (``agent_options``): a keyword wins, an unknown one is
refused naming it, the deprecated names still work with a warning. An escalation handle written before the type
existed still reads (its digest is of the JSON as written), and its agent writes back the same JSON."""

from __future__ import annotations

import inspect
import json
import warnings
from pathlib import Path
from typing import get_type_hints

import pytest

from pyguard.base.agent_options import DEPRECATED, OPTIONS, AgentKeywords, AgentOptions, agent_options
from pyguard.base.errors import ConfigError, HandleError
from pyguard.base.limits import DEFAULT_LOOP_ITERATIONS, JAVA_INT_MAX, LANGCHAIN4J_ROUND_TRIPS, NESTED_ROUND_TRIPS
from pyguard.escalation import AgentRef, EscalationHandle

OLD_HANDLE = Path(__file__).resolve().parents[1] / "data" / "escalation" / "handle_fac33e1.json"
"""A handle written by main's code at fac33e1, before AgentOptions (system message, 25 round trips, streaming)."""


def test_the_defaults_come_from_the_limits_module():
    o = AgentOptions()
    assert o.loop_iterations() == DEFAULT_LOOP_ITERATIONS and o.max_tool_calling_round_trips is None
    assert o.round_trips() == LANGCHAIN4J_ROUND_TRIPS and o.round_trips(NESTED_ROUND_TRIPS) == NESTED_ROUND_TRIPS
    assert AgentOptions(max_tool_calling_round_trips=7).round_trips(NESTED_ROUND_TRIPS) == 7
    assert AgentOptions(max_loop_iterations=None).loop_iterations() == DEFAULT_LOOP_ITERATIONS


@pytest.mark.parametrize(
    "options",
    [
        AgentOptions(),
        AgentOptions(
            task_type="lookup",
            run_id="r1",
            max_loop_iterations=3,
            max_tool_calling_round_trips=12,
            exit_when_answer_contains="",
            system_message="Be brief.",
        ),
    ],
)
def test_options_round_trip(options):
    again = AgentOptions.model_validate(options.model_dump())
    assert again == options and again.model_dump() == options.model_dump()


def test_tools_are_any_object_and_kept_as_given():
    tools = object()
    assert AgentOptions(tools=tools).tools is tools
    assert AgentOptions(tools=["logistics", tools]).tools == ["logistics", tools]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("max_loop_iterations", 0, "max_loop_iterations=0 must be a positive integer"),
        ("max_loop_iterations", True, "max_loop_iterations=True must be a positive integer"),
        ("max_loop_iterations", "3", "max_loop_iterations='3' must be a positive integer"),
        ("max_tool_calling_round_trips", -1, "max_tool_calling_round_trips=-1 must be a positive integer"),
        ("max_tool_calling_round_trips", JAVA_INT_MAX + 1, f"at most {JAVA_INT_MAX}, a Java int"),
        ("run_id", 12, "run_id=12 must be a string"),
        ("system_message", b"hi", "system_message=b'hi' must be a string"),
    ],
)
def test_a_bad_value_is_a_config_error_naming_it(field, value, message):
    with pytest.raises(ConfigError, match="invalid agent options") as direct:
        AgentOptions(**{field: value})
    assert message in str(direct.value)
    with pytest.raises(ConfigError) as validated:
        AgentOptions.model_validate({field: value})
    assert message in str(validated.value)
    with pytest.raises(ConfigError) as from_json:
        AgentOptions.model_validate_json(json.dumps({field: value if not isinstance(value, bytes) else 1}))
    assert f"{field}=" in str(from_json.value)
    with pytest.raises(ConfigError) as combined:
        agent_options("Guard.run", None, {field: value})
    assert str(combined.value).startswith("Guard.run: ") and message in str(combined.value)


def test_an_unknown_option_is_refused_naming_it_and_the_known_ones():
    with pytest.raises(ConfigError) as err:
        agent_options("Guard.run", None, {"max_loop_iteration": 3})
    text = str(err.value)
    assert "unknown option 'max_loop_iteration'" in text and "did you mean 'max_loop_iterations'" in text
    assert all(name in text for name in OPTIONS)
    with pytest.raises(ConfigError, match="unknown option 'tool'"):
        AgentOptions(tool="logistics")
    with pytest.raises(ConfigError, match="unknown option 'colour'"):  # even as None
        agent_options("Guard.run", None, {"colour": None})


def test_an_option_the_function_does_not_use_is_refused_as_a_keyword():
    uses = ("tools", "max_tool_calling_round_trips")
    with pytest.raises(ConfigError, match=r"'max_loop_iterations' does not apply here; f uses tools, max_tool_calling"):
        agent_options("f", None, {"max_loop_iterations": 3}, uses=uses)
    # an object's other fields are kept (one object can serve several calls), a None keyword is not set
    kept = agent_options("f", AgentOptions(max_loop_iterations=3), {"max_loop_iterations": None}, uses=uses)
    assert kept.max_loop_iterations == 3


def test_a_keyword_wins_over_the_objects_field_and_none_sets_nothing():
    base = AgentOptions(tools="logistics", run_id="r1", max_tool_calling_round_trips=12, system_message="Be brief.")
    combined = agent_options("Guard.run", base, {"run_id": "r2", "system_message": None, "max_loop_iterations": 4})
    assert combined == base.model_copy(update={"run_id": "r2", "max_loop_iterations": 4})
    assert agent_options("Guard.run", base, {}) is base  # nothing to combine: the object itself
    assert agent_options("Guard.run", None, {}) == AgentOptions()


def test_options_must_be_the_type():
    with pytest.raises(ConfigError, match=r"options=\{'tools': 'logistics'\} must be a pyguard.AgentOptions"):
        agent_options("Guard.run", {"tools": "logistics"}, {})  # type: ignore[arg-type]


def test_the_deprecated_loop_cap_name_still_works_and_warns_once_here():
    def f(**keywords):
        return agent_options("f", None, keywords)

    with pytest.warns(DeprecationWarning, match=r"f\(max_iterations=...\) is now max_loop_iterations") as seen:
        assert f(max_iterations=6).max_loop_iterations == 6
    assert len(seen) == 1 and seen[0].filename == __file__  # pointing at the caller of f (here: this test)
    with pytest.raises(ConfigError, match="give max_loop_iterations only"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent_options("f", None, {"max_iterations": 6, "max_loop_iterations": 4})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # None is the old keyword's default: not given, no warning
        assert agent_options("f", None, {"max_iterations": None, "max_loop_iterations": 4}).max_loop_iterations == 4
    with pytest.warns(DeprecationWarning, match=r"attach\(round_trips=...\) is now max_tool_calling_round_trips"):
        renamed = agent_options("attach", None, {"round_trips": 25}, uses=("max_tool_calling_round_trips",))
    assert renamed.max_tool_calling_round_trips == 25


def test_the_keywords_type_lists_every_option_and_the_old_names():
    hints = get_type_hints(AgentKeywords)
    assert set(hints) == set(OPTIONS) | set(DEPRECATED)
    assert all(new in OPTIONS for new, _ in DEPRECATED.values())


@pytest.mark.parametrize(
    "function",
    [
        "pyguard.live.guard:Guard.run",
        "pyguard.live.guard:Guard.run_streaming",
        "pyguard.live.guard:Guard.agent",
        "pyguard.live.guard:Guard.attach",
        "pyguard.live.guard:Guard.resume",
        "pyguard.live.guard:run_unguarded",
        "pyguard.jvm.agents:build_agent",
        "pyguard.jvm.agents:run_agent",
        "pyguard.live.nested:run_nested",
        "pyguard.live.nested:run_nested_unguarded",
    ],
)
def test_no_public_function_declares_an_agent_option_itself(function):
    """The options are declared once (AgentOptions): the functions take ``options`` and ``**keywords``."""
    import importlib

    module, _, name = function.partition(":")
    target = importlib.import_module(module)
    for part in name.split("."):
        target = getattr(target, part)
    params = inspect.signature(target).parameters
    assert "options" in params and any(p.kind is p.VAR_KEYWORD for p in params.values())
    declared = set(params) & (set(OPTIONS) | set(DEPRECATED))
    if module == "pyguard.live.nested":
        declared.discard(
            "max_iterations"
        )  # a loop system's own iterations (LangChain4j's loopBuilder), not the agent's
    assert not declared


def test_an_escalation_handle_written_before_the_type_reads_and_its_agent_writes_back_the_same():
    text = OLD_HANDLE.read_text().strip()
    handle = EscalationHandle.from_json(text)  # the digest of the JSON as written matches
    assert handle.agent.streaming and handle.agent.name == "bot"
    assert handle.agent.options.system_message == "You are a logistics assistant."
    assert handle.agent.options.round_trips() == 25
    written = json.loads(text)
    assert json.loads(handle.to_json())["agent"] == written["agent"] == handle.agent.model_dump()
    again = EscalationHandle.from_json(handle.to_json())  # sealed as this version reads it: it round-trips
    assert again == handle
    written["task"] = "Where is order 2?"  # edited after it was written: still refused
    with pytest.raises(HandleError, match="changed after it was written"):
        EscalationHandle.from_json(json.dumps(written))


def test_an_agent_ref_keeps_the_system_message_and_round_trips_only():
    full = AgentOptions(tools="logistics", run_id="r1", task_type="t", max_loop_iterations=3, system_message="Hi.")
    ref = AgentRef(name="bot", options=full)
    assert ref.options == AgentOptions(system_message="Hi.", max_tool_calling_round_trips=LANGCHAIN4J_ROUND_TRIPS)
    assert ref.model_dump() == {
        "style": "aiservices",
        "streaming": False,
        "name": "bot",
        "system_message": "Hi.",
        "max_tool_calling_round_trips": LANGCHAIN4J_ROUND_TRIPS,
    }
    assert AgentRef.model_validate(ref.model_dump()) == ref
    assert AgentRef().options.round_trips() == LANGCHAIN4J_ROUND_TRIPS


def test_a_malformed_old_handle_is_refused_naming_the_place():
    raw = json.loads(OLD_HANDLE.read_text())
    raw["agent"]["max_tool_calling_round_trips"] = 0
    with pytest.raises(
        HandleError, match=r"malformed at 'agent.options'.*max_tool_calling_round_trips=0 must be a posi"
    ):
        EscalationHandle.from_json(json.dumps(raw))
