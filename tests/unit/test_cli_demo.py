"""`pyguard demo`'s human output, from a canned result (no JVM): what each run answered (cut to one line) and where
the answer came from, the tokens billed with the wrap-up's share, where the guard reflected and stopped, in 80
columns; reasons whole; thousands separators."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from pyguard.cli.demo import render_demo

REASON = (
    "stalled again after a reflection: After the reflection the model asked again only for actions already "
    'found fruitless: get_shipment_status({"order_id": "SO-12345"}).'
)
ANSWER = (
    "Order 12345 left the Leipzig hub on 28 November; it should arrive on 1 December (carrier DHL, JD012345). "
    "The delay came from a missed connection in Leipzig; the carrier rebooked it on the next flight."
)


def _side(outcome: str, calls: int, tokens: int, reason: str, answer: str | None, **extra: object) -> dict:
    side = {
        "outcome": outcome,
        "reason": reason,
        "model_calls": calls,
        "tool_calls": calls - 1,
        "input_tokens": None,
        "output_tokens": None,
        "total_tokens": tokens,
        "reflections_after": [],
        "reflection_rules": [],
        "stop_rule": None,
        "stopped_after": None,
        "answer": answer,
        "answer_source": "model",
        "calls_tokens": tokens,
        "wrap_up_tokens": None,
        "billed_tokens": tokens,
        "trace": None,
    }
    side.update(extra)
    return side


OUT = {
    "scenario": "logistics_incident",
    "agent": "LangChain4j AiServices with @Tool LogisticsTools, scripted ChatModel",
    "task": "Where is order 12345?",
    "seed": None,
    "unguarded": _side("succeeded", 12, 8161, "the model answered", ANSWER, answer_source=None),
    "guarded": _side(
        "succeeded",
        4,
        2287,
        "the model answered",
        ANSWER,
        reflections_after=[3],
        reflection_rules=["repeat_no_gain"],
        trace="traces/g.jsonl",
    ),
    "guarded_reflection_ignored": _side(
        "stalled",
        4,
        12287,
        REASON,
        "Order 12345 is in transit.",
        reflections_after=[3],
        reflection_rules=["repeat_no_gain"],
        stop_rule="fruitless_retry",
        stopped_after=4,
        answer_source="wrap_up",
        wrap_up_tokens=890,
        billed_tokens=13177,
        trace="traces/s.jsonl",
    ),
    "guarded_token_share": 0.2802,
}


def _render(width: int) -> str:
    buf = io.StringIO()
    render_demo(OUT, Console(file=buf, width=width, color_system=None))
    return buf.getvalue()


@pytest.mark.parametrize("width", [80, 100, 160])
def test_every_line_fits_the_terminal_and_reasons_are_whole(width: int) -> None:
    text = _render(width)
    assert max(len(line) for line in text.splitlines()) <= width
    assert " ".join(REASON.split()) in " ".join(text.split())  # wrapped, never cut
    assert "8,161" in text and "2,287" in text and "13,177" in text


def test_each_answer_is_cut_to_one_line_with_its_source() -> None:
    text = _render(80)
    lines = text.splitlines()
    cut = [line for line in lines if line.strip().startswith("Order 12345 left the Leipzig hub")]
    assert len(cut) == 2 and all(line.endswith("…") and len(line) <= 80 for line in cut)
    assert "the delay came" not in text.lower()
    assert "answer (the model's final answer):" in text
    wrap = lines.index("  answer (wrap-up: one last call without tools after the stop, 890 tokens):")
    assert lines[wrap + 1].strip() == "Order 12345 is in transit."


def test_tokens_billed_show_the_wrap_up_share_and_where_the_guard_acted() -> None:
    text = _render(80)
    row = next(line for line in text.splitlines() if "of which wrap-up" in line)
    assert row.split()[-2:] == ["890", "(7%)"]  # 890 of 13,177 billed
    assert "guard: reflected after call 3 (repeat_no_gain); stopped after call 4 (fruitless_retry)" in " ".join(
        text.split()
    )
    stopped = next(line for line in text.splitlines() if line.strip().startswith("stopped after call"))
    assert stopped.split()[-3:] == ["-", "-", "4"]
    assert "trace: traces/s.jsonl" in text
