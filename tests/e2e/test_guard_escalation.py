"""Escalation with state kept, end to end on LangChain4j's AiServices: a stuck run ends ``escalated`` with a handle
(its evidence, its conversation, the guard's state), the handle persists as JSON, and a human's message resumes the
same agent in another process with the budget the policy grants; bad or stale handles are refused clearly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pyguard.base.agent_options import AgentOptions
from pyguard.base.errors import HandleError
from pyguard.base.events import Outcome
from pyguard.engine import EscalationConfig, PolicyConfig
from pyguard.escalation import AgentRef, EscalationHandle
from pyguard.jvm import scripted_model
from pyguard.jvm.streaming import scripted_streaming_model
from pyguard.live.guard import Guard
from pyguard.trace import read_trace

TASK = "Where is order 12345?"
HUMAN = "Use the id SO-12345 instead."
TARGET = Path(__file__).with_name("resume_target.py")

# Stuck on the first message (the same lookup, a reflection ignored); with the human's message (user message 2) it
# looks the order up under the other id and answers.
SCENARIO = {
    "name": "stuck_until_helped",
    "toolset": "logistics",
    "usage": {"base_input_tokens": 100, "chars_per_token": 4, "output_tokens": 20},
    "on_reflection": {"recover_probability": 0.0, "answer": "unused"},
    "conversation": [
        {
            "user": TASK,
            "turns": [{"tool_calls": [{"name": "get_shipment_status", "arguments": {"orderId": "12345"}}]}],
            "loop_from": 0,
        },
        {
            "user": HUMAN,
            "turns": [
                {"tool_calls": [{"name": "get_shipment_status", "arguments": {"orderId": "SO-12345"}}]},
                {"answer": "Order SO-12345: {last_result}"},
            ],
        },
    ],
}
ESCALATE = PolicyConfig(escalation=EscalationConfig(on_stall="escalate", resume_budget=4))


def _model(streaming: bool):
    return scripted_streaming_model(SCENARIO) if streaming else scripted_model(SCENARIO)


def _escalated(tmp_path: Path, run_id: str, streaming: bool = False):
    result = Guard(ESCALATE, trace_dir=tmp_path).run_streaming(
        _model(streaming), TASK, run_id=run_id, agent="support-bot"
    )
    assert result.outcome is Outcome.ESCALATED, result.reason
    assert result.escalation is not None
    return result


def test_an_escalated_run_resumes_in_another_process(jvm, tmp_path):
    result = _escalated(tmp_path, "esc")
    handle = result.escalation
    assert handle is not None
    n = result.model_calls
    assert handle.run_id == "esc" and handle.resume_budget == 4 and len(handle.events) == n
    assert handle.escalation.outcome is Outcome.ESCALATED and handle.escalation.rule == result.evidence["rule"]
    assert handle.summary()["tool_calls"] == ['get_shipment_status({"orderId":"12345"})'] * n
    # the conversation ends with a tool result: the last response's refused tool calls are not kept
    messages = json.loads(handle.conversation)
    assert messages[0]["type"] == "USER" and messages[-1]["type"] == "TOOL_EXECUTION_RESULT"
    footer = read_trace(tmp_path / "esc.jsonl").runs[0].record.end
    assert footer is not None and footer.outcome is Outcome.ESCALATED

    handle_file = tmp_path / "handle.json"
    handle_file.write_text(handle.to_json(), encoding="utf-8")
    scenario_file = tmp_path / "scenario.json"
    scenario_file.write_text(json.dumps(SCENARIO), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(TARGET), str(handle_file), str(scenario_file), str(tmp_path), HUMAN],
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard: a JVM starts in it, on a machine that may be loaded
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["run_id"] == "esc-r1" and out["outcome"] == "succeeded", out
    assert "in transit" in out["answer"].lower() or "SO-12345" in out["answer"]
    assert out["model_calls"] == n + 2  # the earlier calls, then the lookup and the answer
    assert out["rules"][n - 1] == handle.escalation.rule and out["rules"][n] == "resume"
    assert "user" in out["observations"][n]  # the human's message is the user observation of the next call

    trace = read_trace(tmp_path / "esc-r1.jsonl").runs[0]
    assert [d.outcome for d in trace.decisions if d.outcome is not None] == [Outcome.ESCALATED]
    resumed = [d for d in trace.decisions if d.rule == "resume"]
    assert len(resumed) == 1 and resumed[0].iteration == n and resumed[0].budget == n + 4
    human = [o.text for o in trace.record.events[n].observations if o.kind == "user"]
    assert human == [HUMAN]
    assert trace.record.end is not None and trace.record.end.outcome is Outcome.SUCCEEDED

    # resumed once: the same handle again is refused (the resumption's trace is there)
    with pytest.raises(HandleError, match="already resumed"):
        Guard(ESCALATE, trace_dir=tmp_path).resume(handle, HUMAN, _model(False))


def test_a_streaming_run_escalates_and_resumes_streaming(jvm, tmp_path):
    result = _escalated(tmp_path, "esc-s", streaming=True)
    handle = EscalationHandle.from_json(result.escalation.to_json())  # type: ignore[union-attr]
    assert handle.agent.streaming
    chunks: list[str] = []
    resumed = Guard(ESCALATE).resume(handle, HUMAN, _model(True), on_partial=chunks.append)
    assert resumed.outcome is Outcome.SUCCEEDED, resumed.reason
    assert "".join(chunks).endswith(resumed.answer or "?")
    with pytest.raises(HandleError, match="already resumed in this process"):
        Guard(ESCALATE).resume(handle, HUMAN, _model(True))


@pytest.mark.parametrize("early", [False, True], ids=["results-with-next-call", "results-before-next-call"])
def test_a_resumed_run_stuck_again_escalates_again_and_its_chained_handle_resumes(jvm, tmp_path, early):
    stuck = {"tool_calls": [{"name": "get_shipment_status", "arguments": {"orderId": "12345"}}]}
    twice = {**SCENARIO, "conversation": [SCENARIO["conversation"][0], {"user": "x", "turns": [stuck], "loop_from": 0},
                                           SCENARIO["conversation"][1]]}  # fmt: skip
    # judged early, a resumed run's results are numbered after the handle's events, as its events are
    policy = ESCALATE.model_copy(update={"judge_results_early": early})
    guard = Guard(policy, trace_dir=tmp_path)
    first = guard.run_streaming(scripted_model(twice), TASK, run_id="chain").escalation
    assert first is not None
    again = guard.resume(first, "Please try once more.", scripted_model(twice))
    assert again.outcome is Outcome.ESCALATED and again.run_id == "chain-r1"
    second = again.escalation
    assert second is not None and second.resumptions == 1 and second.origin_run_id == "chain"
    assert len(second.resumes) == 1 and second.resumes[0].after == len(first.events)
    # in a fresh guard the engine's state is rebuilt through both escalations and the first resumption
    done = Guard(policy, trace_dir=tmp_path).resume(second.to_json(), HUMAN, scripted_model(twice))
    assert done.outcome is Outcome.SUCCEEDED and done.run_id == "chain-r2", done.reason
    assert [d.rule for d in done.decisions].count("resume") == 2
    assert done.model_calls == len(second.events) + 2
    assert [d.turn for d in done.decisions][-1] == 3


@pytest.fixture(scope="module")
def handle(jvm, tmp_path_factory) -> EscalationHandle:
    result = _escalated(tmp_path_factory.mktemp("bad"), "esc-bad")
    assert result.escalation is not None
    return result.escalation


def test_a_handle_of_another_version_is_refused(handle):
    raw = json.loads(handle.to_json())
    raw["version"] = 2
    with pytest.raises(HandleError, match="version 2 is not supported.*reads version 1"):
        EscalationHandle.from_json(json.dumps(raw))


def test_an_edited_handle_is_refused(handle):
    raw = json.loads(handle.to_json())
    raw["resume_budget"] = 500
    with pytest.raises(HandleError, match="changed after it was written"):
        EscalationHandle.from_json(json.dumps(raw))


def test_a_handle_whose_run_id_does_not_match_its_events_is_refused(handle):
    forged = handle.model_copy(update={"run_id": "someone-else", "digest": ""}).sealed()
    with pytest.raises(HandleError, match="events belong to \\['esc-bad'\\]"):
        EscalationHandle.from_json(forged.to_json())


def test_a_handle_for_an_agent_that_cannot_resume_or_another_agent_is_refused(jvm, handle):
    other_style = handle.model_copy(update={"agent": AgentRef(style="agentic"), "digest": ""}).sealed()
    with pytest.raises(HandleError, match="agent style 'agentic' cannot be resumed"):
        other_style.check()
    with pytest.raises(HandleError, match="is for agent 'support-bot', not 'billing-bot'"):
        Guard(ESCALATE).resume(handle, HUMAN, _model(False), agent="billing-bot")


def test_a_guard_whose_policy_does_not_escalate_there_refuses_the_handle(jvm, handle):
    with pytest.raises(HandleError, match="does not escalate where its handle says"):
        Guard().resume(handle, HUMAN, _model(False))


def test_not_a_handle_and_an_empty_message_are_refused(jvm, handle):
    with pytest.raises(HandleError, match="not JSON"):
        EscalationHandle.from_json("{nope")
    with pytest.raises(HandleError, match="not a pyguard escalation handle"):
        EscalationHandle.from_json('{"run_id": "x"}')
    with pytest.raises(HandleError, match="non-empty string"):
        Guard(ESCALATE).resume(handle, "  ", _model(False))
    assert isinstance(HandleError("x"), Exception)


def test_the_handle_keeps_the_agents_options_and_the_same_object_resumes_it(jvm, tmp_path):
    options = AgentOptions(tools="logistics", max_tool_calling_round_trips=30, system_message="Answer in one line.")
    guard = Guard(ESCALATE, trace_dir=tmp_path)
    result = guard.run_streaming(_model(False), TASK, options=options, run_id="esc-o")
    assert result.outcome is Outcome.ESCALATED and result.escalation is not None
    kept = EscalationHandle.from_json(result.escalation.to_json()).agent
    assert kept.options == AgentOptions(max_tool_calling_round_trips=30, system_message="Answer in one line.")
    assert json.loads(result.escalation.to_json())["agent"]["max_tool_calling_round_trips"] == 30  # flat, as before
    resumed = guard.resume(result.escalation, HUMAN, _model(False), options=options)  # its tools; the rest is kept
    assert resumed.outcome is Outcome.SUCCEEDED and resumed.run_id == "esc-o-r1", resumed.reason


def test_an_escalation_decided_on_a_calls_results_before_the_next_call_resumes(jvm, tmp_path):
    # the model, reflected on, asks for the same lookup again and is let run: its result, the same, is judged before
    # the next call is sent and escalates there. No event holds those results: the handle keeps them, so a fresh
    # guard rebuilds the escalation where it happened and resumes
    early = PolicyConfig(
        judge_results_early=True,
        stop_on_fruitless_retry=False,
        escalation=EscalationConfig(on_stall="escalate", resume_budget=4),
    )
    result = Guard(early, trace_dir=tmp_path).run_streaming(_model(False), TASK, run_id="esc-early")
    handle = result.escalation
    assert result.outcome is Outcome.ESCALATED and handle is not None, result.reason
    assert handle.escalation.iteration == result.model_calls == 3  # reflected on call 2's result, stopped on call 3's
    assert handle.results is not None and [o.text for o in handle.results] == [
        o.text for o in handle.events[-1].observations if o.kind == "tool"
    ]
    resumed = Guard(early).resume(EscalationHandle.from_json(handle.to_json()), HUMAN, _model(False))
    assert resumed.outcome is Outcome.SUCCEEDED and resumed.run_id == "esc-early-r1", resumed.reason
    assert resumed.model_calls == 3 + 2
    assert [d.rule for d in resumed.decisions][2:4] == [handle.escalation.rule, "resume"]
