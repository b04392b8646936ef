"""pyguard fuzz on a real AiServices agent with the demo's @Tool methods: a deliberately weakened guard lets a loop
escape, which the search finds, shrinks and saves as a scenario; the default guard stops every lookup loop it tries."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from pyguard.cli import main
from pyguard.engine import PolicyConfig
from pyguard.jvm import jclass, scripted_model
from pyguard.live.fuzzing import AgentFuzzer
from pyguard.live.guard import Guard

TOOLS = "dev.pyguard.bridge.demo.LogisticsTools"
LOOKUPS = ("get_shipment_status", "get_carrier_eta")
WEAK = {
    "base_budget": 40,
    "max_reflections": 5,
    "stop_on_fruitless_retry": False,
    "stop_on_repeated_evidence": False,
    "stall": {"normalised_repeats": False, "failure_templates": False, "low_gain_streak": 50, "empty_streak": 50},
}


def test_a_weakened_guard_lets_a_loop_escape_and_the_search_shrinks_and_saves_it(jvm, tmp_path: Path):
    guard = Guard(config=PolicyConfig.model_validate(WEAK), trace_dir=None)
    fuzzer = AgentFuzzer(guard, jclass(TOOLS)(), task="Order 12345 is late. Why?", budget=10, only=LOOKUPS)
    finding = fuzzer.escape(examples=15)
    assert finding is not None
    assert finding.script.family == "repeat" and finding.script.before == ()  # shrunk to the simplest loop
    assert finding.stopped_at is None or finding.stopped_at > 10
    assert finding.unguarded_calls == 10 + 3 + 1  # the agent's own cap (round trips + 1) ends it unguarded
    saved = finding.save(tmp_path)
    scenario = json.loads(saved.read_text())
    assert saved.name == "fuzz_escape_repeat.json" and scenario["loop_from"] == 0
    # the saved scenario is a regression test: the weakened guard still lets it run past the budget
    again = guard.run("aiservices", scripted_model(str(saved)), "Order 12345 is late. Why?", tools=jclass(TOOLS)())
    assert again.model_calls > 10


def test_the_default_guard_stops_every_lookup_loop_tried(jvm):
    fuzzer = AgentFuzzer(Guard(trace_dir=None), jclass(TOOLS)(), task="Order 12345 is late.", budget=10, only=LOOKUPS)
    assert fuzzer.escape(examples=15) is None


def test_the_command_reports_and_saves_what_it_finds(jvm, tmp_path: Path):
    policy = tmp_path / "weak.toml"
    policy.write_text(PolicyConfig.model_validate(WEAK).to_toml())
    args = ["fuzz", "--tools", TOOLS, "--only", "get_shipment_status", "--examples", "5", "--no-false-stops"]
    result = CliRunner().invoke(main, [*args, "--policy", str(policy), "--out", str(tmp_path / "found")])
    assert result.exit_code == 1, result.output
    assert "escape: repeat: get_shipment_status(orderId=" in result.output
    assert "unguarded 14 calls" in result.output
    assert (tmp_path / "found" / "fuzz_escape_repeat.json").is_file()
    unknown = CliRunner().invoke(main, ["fuzz", "--tools", TOOLS, "--only", "get_shipment_statu"])
    assert unknown.exit_code == 2 and "(did you mean 'get_shipment_status'?)" in unknown.output
