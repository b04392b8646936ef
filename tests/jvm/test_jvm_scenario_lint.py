"""Scenario lint against a real agent's @Tool methods: LangChain4j's own ToolSpecifications of the demo tools, the
`pyguard scenario check` command, and what a scripted run does without the lint (the NullPointerException's text goes
back to the model as an ordinary result and the run 'succeeds')."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from pyguard.cli import main
from pyguard.jvm import run_agent, scripted_model
from pyguard.jvm.tool_specs import tool_specs
from pyguard.testing.scenario_lint import ToolParam, lint_scenario

TOOLS = "dev.pyguard.bridge.demo.LogisticsTools"
TYPO = {
    "name": "typo",
    "toolset": "logistics",
    "turns": [
        {"tool_calls": [{"name": "get_shipment_status", "arguments": {"orderID": "12345"}}]},
        {"answer": "Order 12345 is fine."},
    ],
}


def test_the_specs_are_langchain4js_own(jvm):
    specs = {s.name: s for s in tool_specs(TOOLS)}
    assert set(specs) == {"get_shipment_status", "get_carrier_eta", "open_support_ticket"}
    assert specs["open_support_ticket"].params == {
        "orderId": ToolParam(type="string"),
        "summary": ToolParam(type="string"),
    }
    assert specs["open_support_ticket"].required == ("orderId", "summary")


def test_a_misspelt_argument_passes_unlinted_and_is_caught_by_the_lint(jvm):
    # without the lint: the tool gets null, and the run ends as if all went well
    r = run_agent("aiservices", scripted_model(TYPO), "is order 12345 late?", callback=lambda e: None)
    assert r.status == "answered"
    problems = [str(p) for p in lint_scenario(TYPO, tool_specs(TOOLS))]
    assert problems == [
        "$.turns[0].tool_calls[0] (get_shipment_status): unknown argument 'orderID' (did you mean 'orderId'?); "
        "parameters: orderId",
        "$.turns[0].tool_calls[0] (get_shipment_status): required argument 'orderId' is missing",
    ]


def test_the_check_command_names_the_parameter_and_exits_1(jvm, tmp_path: Path):
    bad = tmp_path / "typo.json"
    bad.write_text(json.dumps(TYPO))
    good = tmp_path / "good.json"
    good.write_text(
        json.dumps(
            {**TYPO, "turns": [{"tool_calls": [{"name": "get_carrier_eta", "arguments": {"trackingNumber": "T1"}}]}]}
        )
    )
    result = CliRunner().invoke(main, ["scenario", "check", str(bad), str(good), "--tools", TOOLS])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"{bad}: 2 tool call(s) the agent's tools would not accept"
    assert "unknown argument 'orderID' (did you mean 'orderId'?)" in lines[1]
    assert lines[3] == f"{good}: ok"
    assert lines[4] == "1 of 2 scenario(s) fit the tools (get_carrier_eta, get_shipment_status, open_support_ticket)"
    assert CliRunner().invoke(main, ["scenario", "check", str(good), "--tools", TOOLS]).exit_code == 0


def test_the_check_command_names_a_class_it_cannot_find(jvm, tmp_path: Path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(TYPO))
    result = CliRunner().invoke(main, ["scenario", "check", str(good), "--tools", "com.acme.NoSuchTools"])
    assert result.exit_code == 3
    assert "com.acme.NoSuchTools" in result.output and "check --tools and --classpath" in result.output
