"""Import ReAct runs: the text form ``Thought: … / Action: tool[arg] / Observation: …`` many teams log.

Two shapes of the same thing, both read here:

- **text**: one string (``traj``, ``trajectory``, ``text`` or ``prompt`` key, or a list of lines in
  ``traj_by_line``) with ``Thought[ n]:``, ``Action[ n]:`` and ``Observation[ n]:`` lines; whatever comes
  before the first Thought/Action is the task;
- **chat**: a message list (``messages`` or ``traj``) whose assistant messages hold ``Thought: … Action:
  tool[arg]`` and whose user messages hold ``Observation: …`` (FireAct's GPT trajectories).

Each Action is one iteration (one model call: its thought is the text, ``tool[arg]`` its one tool call with
arguments ``{"input": arg}``); the Observation that follows is the result, an observation of the next
iteration. In the chat shape a user message that does *not* start with ``Observation`` is a new user turn
(``kind="user"``). Containers: a JSON array, JSON Lines, one object, or an id-keyed object
(``{"6238": {...}}``, FireAct). Labels: ``success``, ``reward`` (true or 1), ``em`` or ``resolved``. The
default terminal tool is ``finish`` (see :mod:`pyguard.trace.ending`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any, TypeGuard, Unpack

from pyguard.base.errors import UnreadableRecord
from pyguard.base.events import IterationEvent, Observation, RunRecord, RunStart, ToolCall
from pyguard.trace.containers import text_runs
from pyguard.trace.ending import build_end
from pyguard.trace.run_parser import ImportOptions

__all__: list[str] = []

_STEP = re.compile(r"^\s*(Thought|Action|Observation)(?:\s*\d+)?\s*:\s?", re.IGNORECASE | re.MULTILINE)
_CALL = re.compile(r"^\s*([A-Za-z_][\w\- ]*?)\s*\[(.*)\]\s*$", re.DOTALL)
_TEXT_KEYS = ("traj", "trajectory", "text", "prompt")


def _split(text: str) -> tuple[str, list[tuple[str, str]]]:
    """(preamble, [(kind, body), ...]) with kind in thought/action/observation."""
    marks = list(_STEP.finditer(text))
    if not marks:
        return text, []
    parts = []
    for m, nxt in zip(marks, marks[1:] + [None], strict=False):
        body = text[m.end() : nxt.start() if nxt else len(text)]
        parts.append((m.group(1).lower(), body.strip()))
    return text[: marks[0].start()].strip(), parts


def _call(action: str, index: int) -> ToolCall:
    m = _CALL.match(action)
    if m is None:  # "Action: reflect", "Action: finish" — a bare name
        name, arg = action.strip().split("\n")[0].strip() or "invalid_action", ""
    else:
        name, arg = m.group(1).strip(), m.group(2)
    return ToolCall(id=f"react-{index}", name=name, arguments=json.dumps({"input": arg}, ensure_ascii=False))


def react_steps(parts: list[tuple[str, str]]) -> list[tuple[str, ToolCall | None, str | None]]:
    """Group (kind, body) parts into steps: (thought text, the action's call or None, its observation or None)."""
    steps: list[tuple[str, ToolCall | None, str | None]] = []
    thought: list[str] = []
    for kind, body in parts:
        if kind == "thought":
            thought.append(body)
        elif kind == "action":
            steps.append(("\n".join(thought), _call(body, len(steps) + 1), None))
            thought = []
        else:  # observation: the result of the latest action
            if steps and steps[-1][2] is None:
                t, c, _ = steps[-1]
                steps[-1] = (t, c, body)
            elif steps:
                t, c, o = steps[-1]
                steps[-1] = (t, c, f"{o}\n{body}")
    if thought:  # a last thought with no action: the model answered in words
        steps.append(("\n".join(thought), None, None))
    return steps


def _label(obj: dict, fail) -> bool | None:  # noqa: ANN001
    for key in ("success", "reward", "em", "resolved"):
        value = obj.get(key)
        if value is None:
            continue
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)) and math.isfinite(value):
            return value == 1
        raise fail(f"'{key}' must be true/false or a number (1 is success), got {value!r}", "bad outcome label")
    return None


def looks_like_react_chat(messages: Any) -> TypeGuard[list[Any]]:
    """True for a message list whose assistant messages write ReAct actions as text (no tool_calls)."""
    if not isinstance(messages, list):
        return False
    assistants = [m for m in messages if isinstance(m, dict) and m.get("role") == "assistant"]
    if not assistants or any(m.get("tool_calls") or m.get("function_call") for m in assistants):
        return False
    return any(
        isinstance(m.get("content"), str) and re.search(r"^\s*Action(\s*\d+)?\s*:", m["content"], re.M)
        for m in assistants
    )


def is_react_run(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    if looks_like_react_chat(obj.get("messages", obj.get("traj"))):
        return True
    if isinstance(obj.get("traj_by_line"), list):
        return True
    text = next((obj[k] for k in _TEXT_KEYS if isinstance(obj.get(k), str)), None)
    return text is not None and bool(re.search(r"^\s*Action(\s*\d+)?\s*:", text, re.M))


def _events_from_text(run_id: str, text: str) -> tuple[str, list[IterationEvent]]:
    preamble, parts = _split(text)
    task = preamble.split("### Instruction:")[-1].split("### Response:")[0].strip() or preamble
    return task, events_from_steps(run_id, task, react_steps(parts))


def events_from_steps(
    run_id: str, task: str | None, steps: Iterable[tuple[str, ToolCall | None, str | None]]
) -> list[IterationEvent]:
    """One model call per (thought, action, observation) step of a ReAct-style trajectory: the call's text is the
    thought, its tool call the action; the task arrives as the first call's user observation, each step's
    observation as the next call's tool result."""
    events: list[IterationEvent] = []
    pending: list[Observation] = [Observation(kind="user", text=task)] if task else []
    for thought, call, observation in steps:
        events.append(
            IterationEvent(
                run_id=run_id,
                index=len(events) + 1,
                text=thought or None,
                tool_calls=(call,) if call else (),
                observations=tuple(pending),
            )
        )
        pending = []
        if call is not None and observation is not None:
            pending = [Observation(kind="tool", tool_call_id=call.id, tool_name=call.name, text=observation)]
    return events


def _events_from_chat(run_id: str, messages: list, fail) -> tuple[str | None, list[IterationEvent]]:  # noqa: ANN001
    events: list[IterationEvent] = []
    pending: list[Observation] = []
    last_call: ToolCall | None = None
    task: str | None = None
    for j, msg in enumerate(messages):
        if not isinstance(msg, dict) or not isinstance(msg.get("content", ""), (str, type(None))):
            raise fail(f"message {j} is not an object with a text 'content'", "unreadable message")
        role, content = msg.get("role"), msg.get("content") or ""
        if role == "assistant":
            _, parts = _split(content)
            steps = react_steps(parts) or [(content, None, None)]
            thought, call, _ = steps[0]
            if call is not None:
                call = call.model_copy(update={"id": f"react-{len(events) + 1}"})
            events.append(
                IterationEvent(
                    run_id=run_id,
                    index=len(events) + 1,
                    text=thought or content or None,
                    tool_calls=(call,) if call else (),
                    observations=tuple(pending),
                )
            )
            pending, last_call = [], call
        elif role in ("user", "system", "tool"):
            m = _STEP.match(content)
            if role != "system" and m and m.group(1).lower() == "observation" and events:
                body = content[m.end() :].strip()
                pending.append(
                    Observation(
                        kind="tool",
                        tool_call_id=last_call.id if last_call else None,
                        tool_name=last_call.name if last_call else None,
                        text=body,
                    )
                )
            else:
                if role == "user" and task is None and not events:
                    task = content
                pending.append(Observation(kind="user" if role != "system" else "system", text=content))
        else:
            raise fail(
                f"message {j} has the role {role!r}; expected system, user or assistant",
                f"message with unknown role {role!r}",
            )
    return task, events


def parse_react_text(
    text: str,
    *,
    source: str,
    default_id_prefix: str = "run",
    **options: Unpack[ImportOptions],
) -> list[RunRecord]:
    """ReAct runs from the text of one file (a bare ReAct transcript is one run)."""
    log, items = text_runs(text, source, options.get("log"), is_run=is_react_run, bare=lambda t: {"traj": t})
    labels, terminal_tools = options.get("labels"), options.get("terminal_tools")
    records: list[RunRecord] = []
    seen: set[str] = set()
    for index, (key, obj) in enumerate(items):
        if isinstance(obj, dict) and obj.get("id") is not None:
            run_id = str(obj.get("id"))
        else:  # an id-keyed file (FireAct keys runs by question id): the file name keeps ids apart across files
            run_id = f"{default_id_prefix}/{key}" if key is not None else f"{default_id_prefix}[{index}]"

        def fail(message: str, reason: str, run_id: str = run_id) -> UnreadableRecord:
            return UnreadableRecord(f"{source}: run {run_id!r}: {message}", reason=reason)

        try:
            if not isinstance(obj, dict):
                raise fail(f"is a {type(obj).__name__}, not a run object", "record that is not a run object")
            task_type = obj.get("task_type")
            if task_type is not None and not isinstance(task_type, str):
                raise fail(f"'task_type' must be a string, got {task_type!r}", "bad task_type")
            label = _label(obj, fail)
            if labels is not None and (run_id in labels or label is None):
                label = labels.label(run_id)
            messages = obj.get("messages", obj.get("traj"))
            if looks_like_react_chat(messages):
                task, events = _events_from_chat(run_id, messages, fail)
            else:
                body = obj.get("traj_by_line")
                body = (
                    "\n".join(str(x) for x in body)
                    if isinstance(body, list)
                    else next((obj[k] for k in _TEXT_KEYS if isinstance(obj.get(k), str) and obj[k].strip()), None)
                )
                if body is None:
                    raise fail(
                        "has no ReAct text (traj, traj_by_line, trajectory, text) or message list",
                        "run with no ReAct steps",
                    )
                task, events = _events_from_text(run_id, body)
            if not events:
                raise fail("has no Action step: there is no model call to import", "run with no assistant message")
            if run_id in seen:
                raise fail("appears twice; give every run a unique id", "duplicate run id")
            events = [e.model_copy(update={"task_type": task_type}) for e in events] if task_type else events
            end = build_end(
                run_id,
                events,
                label=label,
                imported_from="react",
                source=source,
                terminal_tools=terminal_tools,
                evidence={"index": index},
            )
        except UnreadableRecord as exc:
            log.skip(exc)
            continue
        seen.add(run_id)
        records.append(RunRecord(start=RunStart(run_id=run_id, task_type=task_type, task=task), events=events, end=end))
    return records
