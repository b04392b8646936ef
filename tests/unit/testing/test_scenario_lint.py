"""Scenario lint: scripted tool calls checked against the agent's tools (pure Python; the JVM side is tested in
tests/jvm/test_jvm_scenario_lint.py)."""

from __future__ import annotations

import pytest

from pyguard.base.errors import InputError
from pyguard.testing.scenario_lint import ScenarioLintError, ToolParam, ToolSpec, check_scenario, lint_scenario

TOOLS = [
    ToolSpec(name="find_product", params={"name": ToolParam(type="string")}, required=("name",)),
    ToolSpec(
        name="order",
        params={
            "sku": ToolParam(type="string"),
            "quantity": ToolParam(type="integer"),
            "priority": ToolParam(type="enum", enum=("LOW", "HIGH")),
        },
        required=("sku", "quantity"),
    ),
]


def call(tool: str, /, **arguments: object) -> dict:
    return {"name": tool, "arguments": arguments}


def messages(scenario: dict) -> list[str]:
    return [str(p) for p in lint_scenario(scenario, TOOLS)]


def test_a_scenario_that_fits_the_tools_has_no_problem():
    scenario = {
        "name": "ok",
        "turns": [{"tool_calls": [call("find_product", name="blue widget")]}, {"answer": "done"}],
    }
    assert lint_scenario(scenario, TOOLS) == []
    check_scenario(scenario, TOOLS)  # does not raise


def test_a_misspelt_argument_is_named_with_the_closest_parameter_and_the_missing_one():
    scenario = {"name": "typo", "turns": [{"tool_calls": [call("find_product", nme="blue widget")]}]}
    assert messages(scenario) == [
        "$.turns[0].tool_calls[0] (find_product): unknown argument 'nme' (did you mean 'name'?); parameters: name",
        "$.turns[0].tool_calls[0] (find_product): required argument 'name' is missing",
    ]


def test_an_unknown_tool_is_named_with_the_closest_tool():
    scenario = {"name": "x", "turns": [{"tool_calls": [call("find_products", name="a")]}]}
    assert messages(scenario) == [
        "$.turns[0].tool_calls[0] (find_products): no such tool (did you mean 'find_product'?); tools: find_product, "
        "order"
    ]


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"sku": "A1", "quantity": "2"}, "argument 'quantity' = '2' is not a JSON integer"),
        ({"sku": "A1", "quantity": True}, "argument 'quantity' = True is not a JSON integer"),
        ({"sku": 7, "quantity": 2}, "argument 'sku' = 7 is not a JSON string"),
        ({"sku": "A1", "quantity": 2, "priority": "URGENT"}, "argument 'priority' = 'URGENT' is not one of LOW, HIGH"),
    ],
)
def test_values_of_the_wrong_type_are_named(arguments, problem):
    scenario = {"name": "x", "turns": [{"tool_calls": [{"name": "order", "arguments": arguments}]}]}
    assert messages(scenario) == [f"$.turns[0].tool_calls[0] (order): {problem}"]


def test_calls_everywhere_in_the_file_are_checked_with_their_path():
    scenario = {
        "name": "deep",
        "conversation": [
            {"user": "hi", "turns": [{"answer": "hello"}]},
            {
                "user": "order",
                "turns": [{"on_result": [{"contains": "x", "then": {"tool_calls": [call("order", sku="A")]}}]}],
            },
        ],
        "on_reflection": {"try_first": [{"tool_calls": [call("find_product", title="a")]}]},
        "tools": [{"name": "not_a_call", "arguments": {}}],
    }
    assert messages(scenario) == [
        "$.conversation[1].turns[0].on_result[0].then.tool_calls[0] (order): required argument 'quantity' is missing",
        "$.on_reflection.try_first[0].tool_calls[0] (find_product): unknown argument 'title'; parameters: name",
        "$.on_reflection.try_first[0].tool_calls[0] (find_product): required argument 'name' is missing",
    ]


def test_arguments_taken_from_earlier_results_count_as_given_and_are_checked():
    taken = {"name": "find_product", "arguments": {}, "arguments_from": {"name": "Similar: \\['([^']+)'"}}
    wrong = {"name": "find_product", "arguments": {"name": "a"}, "arguments_from": {"nam": "x"}}
    scenario = {"name": "x", "turns": [{"tool_calls": [taken, wrong]}]}
    assert messages(scenario) == [
        "$.turns[0].tool_calls[1] (find_product): arguments_from names unknown argument 'nam' (did you mean 'name'?)"
    ]


def test_check_scenario_raises_an_input_error_listing_every_problem():
    scenario = {"name": "typo", "turns": [{"tool_calls": [call("find_product", nme="a"), call("nope")]}]}
    with pytest.raises(ScenarioLintError) as raised:
        check_scenario(scenario, TOOLS, source="tests/scenarios/typo.json")
    assert isinstance(raised.value, InputError) and len(raised.value.problems) == 3
    text = str(raised.value)
    assert text.startswith("scenario tests/scenarios/typo.json scripts 3 tool call(s) the agent's tools would not")
    assert "unknown argument 'nme' (did you mean 'name'?)" in text and "(nope): no such tool" in text
