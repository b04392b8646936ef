"""Real LangChain4j loops (AiServices, agentic, pyguard's executor) driven through JPype: the events are right."""

from __future__ import annotations

import pytest
from jvm_support import STYLES

from pyguard.base.events import IterationEvent, sum_tokens
from pyguard.jvm import run_agent, scripted_model


def record():
    seen: list[IterationEvent] = []

    def policy(event: IterationEvent):
        seen.append(event)
        return None

    return seen, policy


@pytest.mark.parametrize("style", STYLES)
def test_one_event_per_model_call_with_the_scripted_usage(jvm, style):
    model = scripted_model("convergent")
    seen, policy = record()
    r = run_agent(style, model, "Where is order 34567?", callback=policy, run_id=f"ev-{style}", task_type="lookup")
    assert r.status == "answered", r
    assert r.answer.startswith("Order 34567 is held")
    assert len(seen) == int(model.calls()) == r.stats.model_calls == r.stats.events == 4
    assert [e.index for e in seen] == [1, 2, 3, 4]
    assert {e.run_id for e in seen} == {f"ev-{style}"} and {e.task_type for e in seen} == {"lookup"}
    assert sum(e.input_tokens for e in seen) == int(model.reportedInputTokens())
    assert sum(e.output_tokens for e in seen) == int(model.reportedOutputTokens())
    assert all(e.total_tokens == e.input_tokens + e.output_tokens for e in seen)
    assert [e.finish_reason for e in seen] == ["TOOL_EXECUTION"] * 3 + ["STOP"]
    assert seen[-1].is_final and not seen[0].is_final
    assert all(e.latency_ms is not None and e.latency_ms >= 0 for e in seen)
    assert r.events == tuple(seen)


@pytest.mark.parametrize("style", STYLES)
def test_observations_are_the_tool_results(jvm, J, style):
    seen, policy = record()
    run_agent(style, scripted_model("convergent"), "Where is order 34567?", callback=policy)
    tools = J("demo.LogisticsTools")()
    expected = [
        str(tools.getShipmentStatus("34567")),
        str(tools.getCarrierEta("JD014600006281234567")),
        str(tools.openSupportTicket("34567", "Address issue at Newark hub, customer contact needed")),
    ]
    # iteration 1 sees the task; iteration i+1 sees the result of iteration i's tool call, paired by id
    assert [o.kind for o in seen[0].observations][-1] == "user"
    assert seen[0].observations[-1].text == "Where is order 34567?"
    for i, text in enumerate(expected, start=1):
        (obs,) = seen[i].observations
        (call,) = seen[i - 1].tool_calls
        assert obs.kind == "tool" and obs.text == text and not obs.is_error
        assert obs.tool_call_id == call.id and obs.tool_name == call.name


def test_tool_call_arguments_cross_as_raw_json(jvm):
    seen, policy = record()
    run_agent("aiservices", scripted_model("logistics_incident", seed=0), "Where is 12345?", callback=policy)
    assert seen[0].tool_calls[0].name == "get_shipment_status"
    assert seen[0].tool_calls[0].arguments == '{"orderId":"12345"}'
    assert seen[7].tool_calls[0].arguments == '{"orderId":"SO-12345"}'
    # the demo incident: 7 identical calls, then 3 with the SO- prefix, all giving the same observation
    texts = {e.observations[0].text for e in seen[1:11]}
    assert len(texts) == 1


def test_input_tokens_grow_with_history(jvm):
    seen, policy = record()
    run_agent("aiservices", scripted_model("oscillating"), "status?", callback=policy, max_model_calls=6)
    ins = [e.input_tokens for e in seen]
    assert ins == sorted(ins) and ins[-1] > ins[0]


def test_unguarded_baseline_still_counts(jvm):
    model = scripted_model("logistics_incident", seed=0)
    seen: list = []
    r = run_agent("aiservices", model, "Where is 12345?", callback=seen.append, guard=False)
    assert r.status == "answered"
    assert r.stats.model_calls == int(model.calls()) == 11
    assert r.stats.tool_executions == 10
    assert sum_tokens(seen) == int(model.reportedInputTokens()) + int(model.reportedOutputTokens())
    assert r.stats.callback_failures == 0
