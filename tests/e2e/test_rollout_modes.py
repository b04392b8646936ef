"""Rollout modes (issue 23): observe records every decision and acts on none, reflect sends reflections and never
stops, enforce acts; ``pyguard check`` counts an observe-mode run as the stop its guard recorded."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from pyguard.base.errors import ConfigError
from pyguard.base.events import Outcome
from pyguard.cli import main
from pyguard.engine import PolicyConfig
from pyguard.jvm import load_scenario, scripted_model
from pyguard.live.guard import Guard
from pyguard.loading import load_runs

TASK = "Where is order 12345?"


def stubborn() -> dict:
    scenario = dict(load_scenario("logistics_incident"))
    scenario["on_reflection"] = {**scenario["on_reflection"], "recover_probability": 0.0}
    return scenario


def run(guard: Guard, task_type: str | None = "lookup"):
    model = scripted_model(stubborn(), seed=3)
    return guard.run("aiservices", model, TASK, task_type=task_type, max_tool_calling_round_trips=12), model


def test_enforce_stops_observe_records_the_stop_and_acts_on_none(jvm, tmp_path):
    enforced, _ = run(Guard())
    assert enforced.outcome is Outcome.STALLED
    stop_at = enforced.record.end.iterations

    observed, _ = run(Guard(mode="observe", trace_dir=tmp_path))
    # the run went on past the stop to its own end (here the agent gave up and answered), not stopped by the guard
    assert observed.outcome is Outcome.SUCCEEDED and observed.iterations > stop_at, observed.summary()
    stops = [d for d in observed.decisions if d.stops]
    assert [d.iteration for d in stops] == [stop_at]  # the engine's decision, recorded, not acted on
    same = [(d.action, d.rule, d.iteration) for d in observed.decisions[: len(enforced.decisions)]]
    assert same == [(d.action, d.rule, d.iteration) for d in enforced.decisions]
    assert observed.record.end.evidence["observed_stop"]["outcome"] == "stalled"
    (record,) = load_runs(observed.trace_path)
    assert record.start.policy["mode"] == "observe" and record.end.evidence["observed_stop"]["iteration"] == stop_at

    out = CliRunner().invoke(main, ["check", str(tmp_path), "--format", "pyguard", "--json"])
    report = json.loads(out.output)
    assert report["observed"] == 1
    assert report["groups"]["*"]["outcomes"].get("stalled") == 1, report["groups"]["*"]  # what enforce would do


def test_reflect_sends_reflections_and_never_stops(jvm):
    enforced, _ = run(Guard())
    result, _ = run(Guard(mode="reflect"))
    assert result.outcome is not Outcome.STALLED, result.summary()
    (stop,) = [d for d in result.decisions if d.stops]  # the engine would have stopped it here
    assert result.iterations > stop.iteration == enforced.iterations
    assert result.record.end.evidence["observed_stop"]["mode"] == "reflect"


@pytest.mark.parametrize(("task_type", "stalled"), [("lookup", False), ("refund", True)])
def test_the_mode_is_per_task_type_in_the_policy_file(jvm, tmp_path, task_type, stalled):
    policy = tmp_path / "pyguard.toml"
    policy.write_text('mode = "enforce"\n\n[task_types.lookup]\nmode = "observe"\n', encoding="utf-8")
    result, _ = run(Guard(PolicyConfig.from_toml(policy)), task_type=task_type)
    assert (result.outcome is Outcome.STALLED) == stalled, result.summary()


def test_guard_mode_replaces_the_files_top_level_mode_and_refuses_a_task_type_that_differs(jvm):
    config = PolicyConfig.model_validate({"mode": "enforce", "task_types": {"lookup": {"mode": "observe"}}})
    result, _ = run(Guard(config, mode="observe"), task_type="refund")
    assert result.outcome is not Outcome.STALLED  # the top level's enforce is replaced
    assert Guard(config, mode="observe").config.mode_for("lookup") == "observe"
    with pytest.raises(
        ConfigError, match=r"Guard\(mode='enforce'\) conflicts with .*\[task_types.lookup\] mode = 'observe'"
    ):
        Guard(config, mode="enforce")


def test_observe_never_acts_not_even_a_wrap_up_at_the_agents_own_cap_when_told_it(jvm):
    """Told the agent's cap (``max_tool_calling_round_trips``), an enforcing guard answers that cap's end with the
    wrap-up; an observing one makes no call of its own: LangChain4j's cap ends the turn with its own exception."""
    from pyguard.jvm import jclass

    for mode in ("enforce", "observe"):
        model = scripted_model(stubborn(), seed=3)
        ag = Guard(mode=mode).attach(model, max_tool_calling_round_trips=2)  # the cap comes before the stall
        agent = jclass("dev.pyguard.bridge.demo.SupportAgents").create(
            ag.model, model.newTools(), ag.before_tool_execution(), ag.after_tool_execution(), 2
        )
        try:
            answer = str(agent.chat("alice", TASK))
        except Exception as exc:  # noqa: BLE001 - LangChain4j's own cap
            answer = f"raised: {exc}"
        result = ag.results[-1]
        assert ag.open_runs == [] and result.outcome is Outcome.EXPIRED, (mode, result.summary())
        if mode == "enforce":  # the cap's last response is answered by one call more, the wrap-up
            assert result.answer_source == "wrap_up" and answer == result.answer
            assert int(model.calls()) == result.model_calls + 1 == 3
        else:  # LangChain4j makes its last call, then throws
            assert "maxToolCallingRoundTrips" in answer, answer
            assert result.answer_source != "wrap_up" and "wrap_up" not in result.evidence
            assert int(model.calls()) == result.model_calls == 3


def test_observe_makes_no_wrap_up_after_pyguards_own_agent_hits_its_cap(jvm):
    model = scripted_model(stubborn(), seed=3)
    result = Guard(mode="observe").run("aiservices", model, TASK, max_tool_calling_round_trips=2)
    assert result.outcome is Outcome.EXPIRED and result.answer_source != "wrap_up", result.summary()
    assert "wrap_up" not in result.evidence and int(model.calls()) == result.model_calls == 3
