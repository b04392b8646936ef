"""Import SWE-agent trajectories (``*.traj``): one ACI command per model call.

A trajectory is ``{"trajectory": [{"response", "thought", "action", "observation", "execution_time", ...}],
"history": [...], "info": {"exit_status", "submission", "model_stats"}, "environment": ...}``. Each step of
``trajectory`` is one iteration: its thought is the text, its action one tool call, its observation the result
(an observation of the next iteration). The tool is the action's first word when it is an SWE-agent command
(``open``, ``edit``, ``str_replace_editor``, ``submit``, …) with the rest as ``{"args": ...}``; any other action
is a shell command: ``bash`` with ``{"command": ...}``. Without ``trajectory``, the assistant messages of
``history`` (their ``action`` key) are used, and the messages that follow them are their observations.

Exit status: ``submitted`` finished on its own; ``exit_cost``, ``exit_context``, ``exit_format``,
``exit_error``, … (also ``submitted (exit_cost)``, an automatic submission at the cost limit) were cut off:
censored, ``evidence["cut_off"]`` the status. Labels (resolved) come from ``labels=`` (a SWE-bench report).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pyguard.base.errors import UnreadableRecord
from pyguard.base.events import RunRecord, RunStart, ToolCall
from pyguard.trace.ending import build_end
from pyguard.trace.labels import Labels
from pyguard.trace.react_import import events_from_steps
from pyguard.trace.run_parser import RunParser

__all__: list[str] = []

SWE_AGENT_COMMANDS = frozenset(
    {
        "open",
        "goto",
        "scroll_up",
        "scroll_down",
        "create",
        "edit",
        "insert",
        "append",
        "search_dir",
        "search_file",
        "find_file",
        "submit",
        "str_replace_editor",
        "filemap",
        "view",
        "str_replace",
        "undo_edit",
        "exit_forfeit",
    }
)
_CUT = re.compile(r"exit_\w+")


def is_sweagent_run(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    traj = obj.get("trajectory")
    if isinstance(traj, list) and (not traj or (isinstance(traj[0], dict) and "action" in traj[0])):
        return True
    hist = obj.get("history")
    return (
        isinstance(hist, list)
        and isinstance(obj.get("info"), dict)
        and any(isinstance(m, dict) and "action" in m for m in hist)
    )


def _call(action: str, index: int) -> ToolCall:
    action = action.strip()
    first, _, rest = action.partition(" ") if " " in action.split("\n", 1)[0] else action.partition("\n")
    if first in SWE_AGENT_COMMANDS:
        return ToolCall(id=f"swe-{index}", name=first, arguments=json.dumps({"args": rest.strip()}, ensure_ascii=False))
    return ToolCall(id=f"swe-{index}", name="bash", arguments=json.dumps({"command": action}, ensure_ascii=False))


def _steps(obj: dict) -> list[tuple[str, str, str | None]]:
    """(thought, action, observation) per model call."""
    traj = obj.get("trajectory")
    if isinstance(traj, list) and traj:
        out = []
        for step in traj:
            if not isinstance(step, dict):
                continue
            thought = step.get("thought") if isinstance(step.get("thought"), str) else step.get("response")
            obs = step.get("observation")
            out.append((str(thought or ""), str(step.get("action") or ""), obs if isinstance(obs, str) else None))
        return out
    out = []
    for m in obj.get("history") or []:
        if not isinstance(m, dict):
            continue
        if m.get("role") == "assistant" and "action" in m:
            out.append((str(m.get("thought") or m.get("content") or ""), str(m.get("action") or ""), None))
        elif out and m.get("role") in ("user", "tool") and out[-1][2] is None:
            content = m.get("content")
            if isinstance(content, list):
                content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
            t, a, _ = out[-1]
            out[-1] = (t, a, str(content or ""))
    return out


def _task(obj: dict) -> str | None:
    for m in obj.get("history") or []:
        if isinstance(m, dict) and m.get("role") == "user":
            content = m.get("content")
            return content if isinstance(content, str) else None
    return None


def sweagent_run_to_record(
    obj: Any, *, source: str, run_id: str, labels: Labels | None, terminal_tools: frozenset[str] | None
) -> RunRecord:
    def fail(message: str, reason: str) -> UnreadableRecord:
        return UnreadableRecord(f"{source}: run {run_id!r}: {message}", reason=reason)

    if not isinstance(obj, dict):
        raise fail("is not an SWE-agent trajectory object", "record that is not a run object")
    steps = _steps(obj)
    if not steps:
        raise fail("has no step with an action: there is no model call to import", "run with no assistant message")
    task = _task(obj)
    events = events_from_steps(
        run_id,
        task,
        (
            (thought, _call(action, i) if action.strip() else None, observation)
            for i, (thought, action, observation) in enumerate(steps, start=1)
        ),
    )
    info: dict[str, Any] = obj["info"] if isinstance(obj.get("info"), dict) else {}
    status = str(info.get("exit_status")) if info.get("exit_status") is not None else None
    cut = _CUT.search(status or "")
    last = events[-1].tool_calls[0].name if events[-1].tool_calls else None
    if cut is not None:
        cut_off: str | None = cut.group(0)
    elif status is None and last != "submit":
        cut_off = "recording_ends"
    else:
        cut_off = None
    label = labels.label(run_id) if labels is not None else None
    end = build_end(
        run_id,
        events,
        label=label,
        imported_from="sweagent",
        source=source,
        terminal_tools=terminal_tools,
        finished=cut_off is None,
        cut_off=cut_off,
        answer=info.get("submission") if isinstance(info.get("submission"), str) else None,
        evidence={"exit_status": status, "kind": "artifact"},
    )
    return RunRecord(start=RunStart(run_id=run_id, task=task), events=events, end=end)


parse_sweagent = RunParser(sweagent_run_to_record, by_instance=True)
"""Runs from the parsed objects of one file (usually one trajectory per file)."""
