"""`pyguard demo`'s human output, from a canned result (no JVM): reasons and answers whole, thousands separators."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from pyguard.cli.demo import render_demo

REASON = (
    "stalled again after a reflection: After the reflection the model asked again only for actions already "
    'found fruitless: get_shipment_status({"order_id": "SO-12345"}).'
)
ANSWER = "Order 12345 left the Leipzig hub on 28 November; it should arrive on 1 December (carrier DHL, JD012345)."


def _side(outcome: str, calls: int, tokens: int, reason: str, answer: str | None, trace: str | None = None) -> dict:
    return {
        "outcome": outcome,
        "reason": reason,
        "model_calls": calls,
        "tool_calls": calls - 1,
        "input_tokens": None,
        "output_tokens": None,
        "total_tokens": tokens,
        "reflections_after": [3],
        "stop_rule": None,
        "answer": answer,
        "trace": trace,
    }


OUT = {
    "scenario": "logistics_incident",
    "agent": "LangChain4j AiServices",
    "task": "Where is order 12345?",
    "seed": None,
    "unguarded": _side("succeeded", 12, 8161, "the model answered", ANSWER),
    "guarded": _side("succeeded", 4, 2287, "the model answered", ANSWER, "traces/g.jsonl"),
    "guarded_reflection_ignored": _side("stalled", 4, 12287, REASON, "Order 12345 is in transit.", "traces/s.jsonl"),
    "guarded_token_share": 0.2802,
}


@pytest.mark.parametrize("width", [80, 100, 160])
def test_reason_and_answer_are_printed_whole_below_the_table(width: int) -> None:
    buf = io.StringIO()
    render_demo(OUT, Console(file=buf, width=width, color_system=None))
    text = buf.getvalue()
    assert REASON in text and ANSWER in text  # not cut with "…" in a cell
    assert "…" not in text
    table_end = text.index("The guarded run used")
    assert REASON not in text[:table_end]
    assert "8,161" in text and "2,287" in text and "12,287" in text
    assert "answer (salvaged: the run was stopped): Order 12345 is in transit." in text
    assert "trace: traces/s.jsonl" in text
