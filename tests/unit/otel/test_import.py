"""OTLP JSON exports of GenAI spans from other instrumentations become pyguard runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pyguard.base.errors import InputError, TraceFormatError
from pyguard.base.events import Outcome
from pyguard.check import check_runs, policy_replayer
from pyguard.cli import main
from pyguard.loading import detect_format, load_runs
from pyguard.otel import import_otlp, read_spans

SPANS = Path(__file__).resolve().parents[2] / "data" / "otel" / "genai_spans.json"


def test_detected_as_otel():
    assert detect_format(SPANS) == "otel"


def test_spans_decode_ids_and_values():
    spans = read_spans(SPANS)
    assert len(spans) == 10
    first = spans[0]
    assert (
        first.trace_id == "0af7651916cd43dd8448eb211c80319c" and first.span_id == "b7ad6b7169203331"
    )  # base64 in the file
    assert spans[1].parent_span_id == "b7ad6b7169203331"
    assert spans[1].attributes["gen_ai.usage.input_tokens"] == 120  # intValue written as a string
    assert spans[1].attributes["gen_ai.response.finish_reasons"] == ["tool_call"]


def test_agent_run_with_full_history_messages():
    result = import_otlp(SPANS)
    runs = {r.task_type or r.run_id: r for r in result.runs}
    run = runs["support-bot"]
    assert run.run_id == "0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331"
    assert [len(e.tool_calls) for e in run.events] == [1, 0]
    call = run.events[0].tool_calls[0]
    assert (call.id, call.name, json.loads(call.arguments)) == ("call_a", "track_shipment", {"id": "SH-1"})
    # observations: the opening messages first, then only what is new after the last assistant message
    assert [o.kind for o in run.events[0].observations] == ["system", "user"]
    (result_obs,) = run.events[1].observations
    assert (result_obs.kind, result_obs.tool_call_id, result_obs.text) == ("tool", "call_a", '{"status": "in transit"}')
    assert [(e.input_tokens, e.output_tokens, e.total_tokens) for e in run.events] == [(120, 20, 140), (160, 12, 172)]
    assert run.events[0].model == "gpt-4o-mini-2024-07-18" and run.events[0].provider == "openai"
    assert run.events[0].latency_ms == pytest.approx(800.0) and run.events[1].finish_reason == "STOP"
    assert run.start.task == "Where is shipment SH-1?"
    end = run.end
    assert end.outcome is Outcome.SUCCEEDED and end.answer == "SH-1 is in transit." and end.total_tokens == 312
    assert end.evidence["imported_from"] == "otel" and end.success_label is None and not end.censored


def test_trace_without_agent_span_and_without_content():
    run = next(r for r in import_otlp(SPANS).runs if r.run_id == "4bf92f3577b34da6a3ce929d0e0e4736")
    first, second = run.events
    assert [c.name for c in first.tool_calls] == ["search", "lookup"]
    assert json.loads(first.tool_calls[0].arguments) == {"q": "late shipments"} and first.tool_calls[1].arguments == ""
    assert [(o.tool_name, o.text, o.is_error) for o in second.observations] == [
        ("search", '["SH-7"]', False),
        ("lookup", "", True),
    ]
    assert first.provider == "anthropic" and second.total_tokens is None
    assert second.error == "RateLimitError: 429"
    assert run.end.outcome is Outcome.FAILED and run.end.total_tokens == 760 and run.end.tokens_partial


def test_what_is_not_a_run_is_counted():
    result = import_otlp(SPANS)
    assert len(result.runs) == 2
    assert result.skipped == {
        "spans that are not GenAI agent, model or tool spans": 1,
        "agent spans with no model call under them": 1,
        "tool spans of such agents": 0,
    }


def test_check_replays_imported_spans_and_the_cli_reads_them():
    runs = load_runs(SPANS)
    report = check_runs(runs, make_replayer=lambda: policy_replayer(None))
    assert report.summary.replayed == 2
    res = CliRunner().invoke(main, ["replay", str(SPANS), "--json"])
    assert res.exit_code == 0, res.output
    assert {r["iterations"] for r in json.loads(res.stdout)["runs"]} == {2}


def test_bad_exports_are_named(tmp_path):
    (tmp_path / "a.json").write_text('{"resourceSpans": []}\n{"resourceSpans": [}\n')
    with pytest.raises(TraceFormatError, match="a.json:2"):
        read_spans(tmp_path / "a.json")
    (tmp_path / "b.json").write_text('{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "x"}]}]}]}')
    with pytest.raises(InputError, match="span 'x' is malformed"):
        read_spans(tmp_path / "b.json")
    (tmp_path / "c.json").write_text('{"resourceSpans": [{"scopeSpans": [{"spans": []}]}]}')
    with pytest.raises(InputError, match="no GenAI model call"):
        import_otlp(tmp_path / "c.json")
