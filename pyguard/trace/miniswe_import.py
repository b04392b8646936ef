"""Import mini-swe-agent trajectories (``*.traj.json``): one bash command per model call.

A trajectory is ``{"instance_id", "info": {"exit_status", "submission", "model_stats", ...}, "messages": [...],
"trajectory_format": "mini-swe-agent-1"}``. Messages: ``system`` and the first ``user`` message (the task) are
observations of iteration 1; each ``assistant`` message is one iteration whose tool call is the one fenced
```` ```bash ```` block it must contain (``bash`` with ``{"command": ...}``); the ``user`` message after it is
that command's output (a tool result; ``<returncode>`` other than 0 marks an error). An assistant message
without exactly one bash block requests no tool; the harness's complaint that follows is a ``system``
observation. Newer versions end with a message of role ``exit`` carrying the exit status: it is read as the
exit status, not as a message.

Exit status: ``Submitted`` (the agent ran ``echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``) finished on its own;
``LimitsExceeded`` hit the agent's own step/cost limit and any other status (an exception) was cut off by the
harness: both are censored. Labels (``resolved``) come from a separate file: pass ``labels=`` (a SWE-bench
report, see :mod:`pyguard.trace.labels`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pyguard.base.errors import UnreadableRecord
from pyguard.base.events import IterationEvent, Observation, RunRecord, RunStart, ToolCall
from pyguard.trace.ending import build_end
from pyguard.trace.labels import Labels
from pyguard.trace.run_parser import RunParser

__all__: list[str] = []

_BLOCK = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)  # the action regex of mini-swe-agent's default config
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
SUBMIT_MARKERS = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT")


def is_miniswe_run(obj: Any) -> bool:
    if not isinstance(obj, dict) or not isinstance(obj.get("messages"), list):
        return False
    fmt = obj.get("trajectory_format")
    info = obj.get("info")
    return (isinstance(fmt, str) and fmt.startswith("mini-swe-agent")) or (
        isinstance(info, dict) and "exit_status" in info and "instance_id" in obj
    )


def _usage(msg: dict) -> tuple[int | None, int | None, int | None]:
    extra = msg.get("extra")
    usage = None
    if isinstance(extra, dict):
        response = extra.get("response")
        usage = response.get("usage") if isinstance(response, dict) else None
    if not isinstance(usage, dict):
        return None, None, None
    vals = [
        usage.get(k) if isinstance(usage.get(k), int) and not isinstance(usage.get(k), bool) else None
        for k in ("prompt_tokens", "completion_tokens", "total_tokens")
    ]
    if vals[2] is None and vals[0] is not None and vals[1] is not None:
        vals[2] = vals[0] + vals[1]
    return vals[0], vals[1], vals[2]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else str(content)


def miniswe_run_to_record(
    obj: Any, *, source: str, run_id: str, labels: Labels | None, terminal_tools: frozenset[str] | None
) -> RunRecord:
    def fail(message: str, reason: str) -> UnreadableRecord:
        return UnreadableRecord(f"{source}: run {run_id!r}: {message}", reason=reason)

    if not isinstance(obj, dict) or not isinstance(obj.get("messages"), list):
        raise fail("is not a mini-swe-agent trajectory (no 'messages' list)", "record that is not a run object")
    info: dict[str, Any] = obj["info"] if isinstance(obj.get("info"), dict) else {}
    status = info.get("exit_status")
    events: list[IterationEvent] = []
    pending: list[Observation] = []
    call: ToolCall | None = None
    task: str | None = None
    for j, msg in enumerate(obj["messages"]):
        if not isinstance(msg, dict):
            raise fail(f"message {j} is not an object", "unreadable message")
        role, text = msg.get("role"), _text(msg.get("content"))
        if role == "assistant":
            call = _command(text, len(events) + 1)
            events.append(_event(run_id, len(events) + 1, msg, text, call, pending))
            pending = []
        elif role == "exit":
            extra: dict[str, Any] = msg["extra"] if isinstance(msg.get("extra"), dict) else {}
            status = extra.get("exit_status", status) or text or status
        elif role in ("user", "tool") and events:
            if call is not None:
                rc = _RETURNCODE.search(text)
                error = bool(rc and rc.group(1) != "0")
                pending.append(
                    Observation(kind="tool", tool_call_id=call.id, tool_name="bash", text=text, is_error=error)
                )
                call = None
            else:  # the harness's answer to a response without exactly one command
                pending.append(Observation(kind="system", text=text))
        elif role in ("system", "user"):
            if role == "user" and task is None:
                task = text
            pending.append(Observation(kind=role, text=text))
        else:
            raise fail(
                f"message {j} has the role {role!r}; expected system, user, assistant or exit",
                f"message with unknown role {role!r}",
            )
    if not events:
        raise fail("has no assistant message: there is no model call to import", "run with no assistant message")
    label = labels.label(run_id) if labels is not None else None
    status_text = str(status) if status is not None else None
    submitted, cut_off = _ending(status_text, events[-1])
    end = build_end(
        run_id,
        events,
        label=label,
        imported_from="miniswe",
        source=source,
        terminal_tools=terminal_tools,
        finished=submitted,
        cut_off=cut_off,
        answer=info.get("submission") if isinstance(info.get("submission"), str) else None,
        evidence={"exit_status": status_text, "kind": "artifact"},
    )
    return RunRecord(
        start=RunStart(
            run_id=run_id, task=task, task_type=obj.get("task_type") if isinstance(obj.get("task_type"), str) else None
        ),
        events=events,
        end=end,
    )


def _command(text: str, index: int) -> ToolCall | None:
    """The response's one bash command as a tool call (None without exactly one ```bash block)."""
    blocks = _BLOCK.findall(text)
    if len(blocks) != 1:
        return None
    return ToolCall(
        id=f"bash-{index}",
        name="bash",
        arguments=json.dumps({"command": blocks[0].strip()}, ensure_ascii=False),
    )


def _event(
    run_id: str, index: int, msg: dict, text: str, call: ToolCall | None, pending: list[Observation]
) -> IterationEvent:
    prompt, completion, total = _usage(msg)
    return IterationEvent(
        run_id=run_id,
        index=index,
        text=text,
        tool_calls=(call,) if call else (),
        observations=tuple(pending),
        input_tokens=prompt,
        output_tokens=completion,
        total_tokens=total,
    )


def _ending(status_text: str | None, last: IterationEvent) -> tuple[bool, str | None]:
    """(submitted, cut_off) from the exit status, else from the last command (a submit marker)."""
    last_cmd = last.tool_calls[0].arguments if last.tool_calls else ""
    submitted = status_text == "Submitted" or (status_text is None and any(m in last_cmd for m in SUBMIT_MARKERS))
    cut_off = None
    if not submitted:
        cut_off = "step_limit" if status_text == "LimitsExceeded" else (status_text or "recording_ends")
    return submitted, cut_off


parse_miniswe = RunParser(miniswe_run_to_record, by_instance=True)
"""Runs from the parsed objects of one file (usually one trajectory per file)."""
