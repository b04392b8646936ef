"""What a model call says in GenAI terms: its input and output messages, its error's type, the model it asked for, and
the guard's gain (the helpers of :class:`pyguard.otel.export.RunSpans`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pyguard.base.decisions import Decision
from pyguard.base.events import IterationEvent, Observation

__all__: list[str] = []

_FINISH = {"STOP": "stop", "LENGTH": "length", "TOOL_EXECUTION": "tool_call", "CONTENT_FILTER": "content_filter"}


def _clean(attrs: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in attrs.items() if v is not None}


def input_messages(observations: Sequence[Observation]) -> list[dict[str, Any]]:
    """What arrived in a model call's request since the previous call, as GenAI input messages."""
    out: list[dict[str, Any]] = []
    for o in observations:
        if o.kind == "tool":
            part = _clean({"type": "tool_call_response", "id": o.tool_call_id, "response": o.text})
            msg: dict[str, Any] = {"role": "tool", "parts": [part]}
            if o.tool_name is not None:
                msg["name"] = o.tool_name
            if o.is_error:
                msg["is_error"] = True
            out.append(msg)
        else:
            out.append({"role": o.kind, "parts": [{"type": "text", "content": o.text}]})
    return out


def output_messages(event: IterationEvent) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if event.text is not None:
        parts.append({"type": "text", "content": event.text})
    for call in event.tool_calls:
        parts.append(
            _clean({"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.arguments})
        )  # the raw string, byte for byte (may be bad JSON)
    reason = _FINISH.get(event.finish_reason or "", (event.finish_reason or "").lower() or None)
    if reason is None:
        reason = "tool_call" if event.tool_calls else ("error" if event.error else "stop")
    return [{"role": "assistant", "parts": parts, "finish_reason": reason}]


_CLASS_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")


def error_type(error: str) -> str:
    """The exception class of a model call's error (``"ClassName: message"``), or ``"error"`` when the text does
    not start with one (``error.type`` is exported without content capture: never a free-text message)."""
    head = error.split(":", 1)[0].strip()
    return head if _CLASS_NAME.fullmatch(head) else "error"


def request_model(event: IterationEvent) -> str | None:
    """The model the call asked for: ``request_model``; for a recording that has neither it nor ``response_model``,
    its one ``model``; None when only the response named a model."""
    if event.request_model is not None or event.response_model is not None:
        return event.request_model
    return event.model


def gain(decision: Decision) -> float | None:
    ev = decision.evidence
    if isinstance(ev.get("gain"), int | float):
        return float(ev["gain"])
    gains = ev.get("gains")
    return float(gains[-1]) if isinstance(gains, list) and gains else None
