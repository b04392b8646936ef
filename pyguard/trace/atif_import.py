"""Import ATIF trajectories: the Agent Trajectory Interchange Format of Harbor and terminal-bench (v1.0 to v1.4).

A trajectory (``trajectory.json``, one per agent run) is one object::

    {"schema_version": "ATIF-v1.4", "session_id": "...", "agent": {"name", "version", "model_name"?},
     "steps": [{"step_id": 1, "source": "system" | "user" | "agent", "message": "...",
                "tool_calls"?: [{"tool_call_id", "function_name", "arguments": {...}}],
                "observation"?: {"results": [{"source_call_id"?, "content"?}]},
                "metrics"?: {"prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd"}}, ...],
     "final_metrics"?: {...}}

Each ``agent`` step is one model call, one iteration: its ``tool_calls`` are the iteration's calls (``arguments``
written as compact JSON), its ``message`` the text when it asks for none. Its ``observation`` holds the results
of those calls, each naming the call it answers (``source_call_id``): they reach the model with the next call, so
they are the next iteration's observations (a result naming no call of the step is kept, with no tool name). A
``user`` step is a user observation of the next iteration (a new turn after the first); ``system`` steps (the
system prompt, context management) are not model calls and are left out. ``metrics`` give the iteration's
tokens (``prompt_tokens`` includes the cached ones, as ATIF defines it) and ``cost_usd``.

ATIF carries no outcome: labels come from ``labels=`` by ``session_id`` (Harbor keeps the verifier's reward in
the trial's ``result.json``). A trajectory ending on a tool call with no answer after it is read as cut off
(:func:`~pyguard.trace.ending.build_end`). Versions newer than 1.4 are read the same way when they keep these
fields (their extra fields are ignored); multimodal ``content`` (a list of parts) keeps its text parts. A step
that cannot be read makes its trajectory unreadable: it is skipped and counted, never half-read.
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

_SOURCES = ("system", "user", "agent")


def is_atif_run(obj: Any) -> bool:
    """An ATIF trajectory: ``schema_version`` naming ATIF (or a bare version), ``session_id`` and ``steps``."""
    if not isinstance(obj, dict) or not isinstance(obj.get("steps"), list) or "session_id" not in obj:
        return False
    version = obj.get("schema_version")
    return isinstance(version, str) and (version.upper().startswith("ATIF") or version[:1].isdigit())


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # multimodal parts (ATIF 1.5+): keep the text ones
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return json.dumps(content, ensure_ascii=False, default=str)


def _count(metrics: Any, key: str) -> int | None:
    value = metrics.get(key) if isinstance(metrics, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _calls(step: dict, where: str) -> tuple[ToolCall, ...]:
    raw = step.get("tool_calls") or []
    if not isinstance(raw, list):
        raise UnreadableRecord(f"{where}: 'tool_calls' is not a list", reason="unreadable ATIF step")
    calls = []
    for k, call in enumerate(raw):
        name = call.get("function_name") if isinstance(call, dict) else None
        if not isinstance(name, str) or not name:
            raise UnreadableRecord(
                f"{where}: tool_calls[{k}] has no 'function_name'; expected {{'tool_call_id', 'function_name',"
                " 'arguments'}",
                reason="unreadable ATIF tool call",
            )
        args = call.get("arguments", {})
        text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, separators=(",", ":"))
        cid = call.get("tool_call_id")
        calls.append(ToolCall(id=None if cid is None else str(cid), name=name, arguments=text))
    return tuple(calls)


def _results(step: dict, calls: tuple[ToolCall, ...], where: str) -> list[Observation]:
    observation = step.get("observation")
    if observation is None:
        return []
    results = observation.get("results") if isinstance(observation, dict) else None
    if not isinstance(results, list):
        raise UnreadableRecord(f"{where}: 'observation' has no 'results' list", reason="unreadable ATIF observation")
    names = {c.id: c.name for c in calls if c.id is not None}
    out = []
    for result in results:
        if not isinstance(result, dict):
            raise UnreadableRecord(
                f"{where}: an observation result is not an object", reason="unreadable ATIF observation"
            )
        cid = result.get("source_call_id")
        cid = None if cid is None else str(cid)
        out.append(
            Observation(
                kind="tool" if cid is not None else "system",
                tool_call_id=cid,
                tool_name=names.get(cid) if cid is not None else None,
                text=_text(result.get("content")),
                is_error=result.get("is_error") is True,
            )
        )
    return out


def _events(run_id: str, steps: list, source: str, model: str | None) -> tuple[list[IterationEvent], str | None]:
    events: list[IterationEvent] = []
    pending: list[Observation] = []
    task: str | None = None
    for k, step in enumerate(steps):
        where = f"{source}: trajectory {run_id!r}: steps[{k}]"
        if not isinstance(step, dict) or step.get("source") not in _SOURCES:
            raise UnreadableRecord(
                f"{where} is not a step with a 'source' of {', '.join(_SOURCES)}", reason="unreadable ATIF step"
            )
        message = _text(step.get("message"))
        if step["source"] == "user":
            task = message if task is None else task
            pending.append(Observation(kind="user", text=message))
            continue
        if step["source"] == "system":
            continue
        calls = _calls(step, where)
        metrics = step.get("metrics")
        prompt, completion = _count(metrics, "prompt_tokens"), _count(metrics, "completion_tokens")
        events.append(
            IterationEvent(
                run_id=run_id,
                index=len(events) + 1,
                model=step.get("model_name") if isinstance(step.get("model_name"), str) else model,
                input_tokens=prompt,
                output_tokens=completion,
                total_tokens=None if prompt is None or completion is None else prompt + completion,
                tool_calls=calls,
                observations=tuple(pending),
                text=None if calls else message,
            )
        )
        pending = _results(step, calls, where)
    return events, task


def atif_to_record(obj: Any, *, source: str, labels: Labels | None, terminal_tools: frozenset[str] | None) -> RunRecord:
    session = obj.get("session_id") if isinstance(obj, dict) else None
    run_id = str(session) if isinstance(session, (str, int)) and not isinstance(session, bool) else "?"
    if not is_atif_run(obj) or run_id == "?":
        raise UnreadableRecord(
            f"{source}: {run_id!r} is not an ATIF trajectory (schema_version, session_id, steps)",
            reason="record that is not a run object",
        )
    agent = obj.get("agent") if isinstance(obj.get("agent"), dict) else {}
    model = agent.get("model_name") if isinstance(agent.get("model_name"), str) else None
    events, task = _events(run_id, obj["steps"], source, model)
    if not events:
        raise UnreadableRecord(
            f"{source}: trajectory {run_id!r} has no agent step: there is no model call to import",
            reason="run with no assistant message",
        )
    final = obj.get("final_metrics")
    cost = final.get("total_cost_usd") if isinstance(final, dict) else None
    end = build_end(
        run_id,
        events,
        label=labels.label(run_id) if labels is not None else None,
        imported_from="atif",
        source=source,
        terminal_tools=terminal_tools,
        evidence={
            "schema_version": obj.get("schema_version"),
            "agent": agent.get("name"),
            **({"total_cost_usd": cost} if isinstance(cost, (int, float)) and not isinstance(cost, bool) else {}),
        },
    )
    return RunRecord(start=RunStart(run_id=run_id, task=task), events=events, end=end)


parse_atif = RunParser(atif_to_record, duplicate="trajectory")
"""Every ATIF trajectory of the parsed objects (one per file, a list, or JSON Lines) as a run; unreadable ones
skipped and counted in ``log`` (strict when None: the first raises)."""
