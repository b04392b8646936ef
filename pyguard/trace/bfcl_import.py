"""Import Berkeley Function Calling Leaderboard (BFCL) multi-turn result files (``BFCL_v*_multi_turn_*_result.json``).

A result file is JSON Lines, one test per line: ``{"id", "result", "input_token_count", "output_token_count",
"latency", "inference_log"}``. ``inference_log`` is a list: optional initial ``state_info`` entries, then one
object per user turn with ``begin_of_turn_query`` (the user's messages) and ``step_0``, ``step_1``, … Each
step is one model call: its ``assistant`` entry lists the decoded calls (``[{"ls": "{\\"a\\": false}"}]``), its
``tool`` entries are their results (observations of the next step), its ``handler_log`` says what the harness
did. A step with no call ends the turn (the model answered); the next turn's query is a ``kind="user"``
observation. Tokens per step come from the ``*_token_count`` lists (turn x step).

BFCL stops a turn after 20 steps ("Model has been forced to quit after 20 steps."): such a test is *censored*
(``cut_off="step_limit"``). Labels come from the score file (failures only: ``labels=`` a BFCL score file).
Other keys of a turn (functions added mid-conversation) become ``system`` observations.
"""

from __future__ import annotations

import json
from typing import Any

from pyguard.base.errors import UnreadableRecord
from pyguard.base.events import IterationEvent, Observation, RunRecord, RunStart, ToolCall
from pyguard.trace.ending import build_end
from pyguard.trace.labels import Labels
from pyguard.trace.run_parser import RunParser

__all__: list[str] = []

_FORCED = "forced to quit"


def is_bfcl_run(obj: Any) -> bool:
    return isinstance(obj, dict) and "inference_log" in obj and "id" in obj


def _at(table: Any, turn: int, step: int) -> int | None:
    try:
        value = table[turn][step]
    except (IndexError, KeyError, TypeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _calls(content: Any, prefix: str) -> tuple[list[ToolCall], str | None]:
    if isinstance(content, str):
        return [], content
    calls: list[ToolCall] = []
    if isinstance(content, list):
        for item in content:
            if isinstance(item, dict):
                for name, args in item.items():
                    args = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
                    calls.append(ToolCall(id=f"{prefix}-{len(calls)}", name=str(name), arguments=args))
    return calls, None


def bfcl_run_to_record(
    obj: Any, *, source: str, labels: Labels | None, terminal_tools: frozenset[str] | None
) -> RunRecord:
    run_id = str(obj.get("id")) if isinstance(obj, dict) else "?"

    def fail(message: str, reason: str) -> UnreadableRecord:
        return UnreadableRecord(f"{source}: test {run_id!r}: {message}", reason=reason)

    log = obj.get("inference_log") if isinstance(obj, dict) else None
    if not isinstance(log, list):
        raise fail("has no 'inference_log' list (the test errored before the model ran)", "run with no inference log")
    events: list[IterationEvent] = []
    pending: list[Observation] = []
    task: str | None = None
    forced = False
    turn_no = -1
    for entry in log:
        if not isinstance(entry, dict):
            continue  # the initial state_info list
        turn_no += 1
        steps = sorted((k for k in entry if k.startswith("step_") and k[5:].isdigit()), key=lambda k: int(k[5:]))
        task = _turn_inputs(entry, pending, task)
        for s, key in enumerate(steps):
            items = entry[key] if isinstance(entry[key], list) else []
            assistant = next((m for m in items if isinstance(m, dict) and m.get("role") == "assistant"), None)
            if assistant is None:
                continue
            calls, text = _calls(assistant.get("content"), f"t{turn_no}s{s}")
            notes = [m.get("content", "") for m in items if isinstance(m, dict) and m.get("role") == "handler_log"]
            if any("Error decoding" in str(n) for n in notes):
                calls, text = [], text or json.dumps(assistant.get("content"), ensure_ascii=False)
            forced = forced or any(_FORCED in str(n) for n in notes)
            events.append(_event(obj, run_id, len(events) + 1, (turn_no, s), calls, text, pending))
            pending = _results(items, calls)
    if not events:
        raise fail("has no model call in its inference log", "run with no assistant message")
    label = labels.label(run_id) if labels is not None else None
    end = build_end(
        run_id,
        events,
        label=label,
        imported_from="bfcl",
        source=source,
        terminal_tools=terminal_tools,
        finished=not forced,
        cut_off="step_limit" if forced else None,
        evidence={"turns": turn_no + 1},
    )
    return RunRecord(
        start=RunStart(run_id=run_id, task=task, task_type=run_id.rsplit("_", 1)[0]), events=events, end=end
    )


def _turn_inputs(entry: dict, pending: list[Observation], task: str | None) -> str | None:
    """A turn's messages outside its steps (the user's, the system's) added to ``pending``; the run's task (its
    first user message)."""
    for key, value in entry.items():
        if key.startswith("step_") or not isinstance(value, list):
            continue
        for m in value:
            if isinstance(m, dict) and isinstance(m.get("content"), str):
                kind = "user" if m.get("role") == "user" else "system"
                if kind == "user" and task is None:
                    task = m["content"]
                pending.append(Observation(kind=kind, text=m["content"]))
    return task


def _event(
    obj: dict,
    run_id: str,
    index: int,
    at: tuple[int, int],
    calls: list[ToolCall],
    text: str | None,
    pending: list[Observation],
) -> IterationEvent:
    """The model call of step ``at`` (turn, step), with its tokens and latency from the test's tables."""
    turn_no, s = at
    prompt, completion = (
        _at(obj.get("input_token_count"), turn_no, s),
        _at(obj.get("output_token_count"), turn_no, s),
    )
    latency = obj.get("latency")
    lat = (
        latency[turn_no][s]
        if isinstance(latency, list)
        and turn_no < len(latency)
        and isinstance(latency[turn_no], list)
        and s < len(latency[turn_no])
        else None
    )
    return IterationEvent(
        run_id=run_id,
        index=index,
        tool_calls=tuple(calls),
        observations=tuple(pending),
        text=text,
        input_tokens=prompt,
        output_tokens=completion,
        total_tokens=prompt + completion if prompt is not None and completion is not None else None,
        latency_ms=lat * 1000.0 if isinstance(lat, (int, float)) and not isinstance(lat, bool) else None,
    )


def _results(items: list, calls: list[ToolCall]) -> list[Observation]:
    """A step's tool results, paired with its calls by position."""
    pending = []
    for k, res in enumerate(m for m in items if isinstance(m, dict) and m.get("role") == "tool"):
        call = calls[k] if k < len(calls) else None
        content = res.get("content")
        content = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        pending.append(
            Observation(
                kind="tool",
                tool_call_id=call.id if call else None,
                tool_name=call.name if call else None,
                text=content,
                is_error=content.lstrip().startswith('{"error"'),
            )
        )
    return pending


parse_bfcl = RunParser(bfcl_run_to_record)
"""Runs from the parsed lines of one result file (one test per line)."""
