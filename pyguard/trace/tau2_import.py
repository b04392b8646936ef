"""Import τ²-bench simulation files: multi-turn customer-service conversations with tools on both sides.

A file is ``{"info", "tasks", "simulations": [...]}``; a simulation has ``id``, ``task_id``, ``trial``,
``termination_reason``, ``reward_info`` (``reward`` 1.0 is success) and ``messages`` with roles ``assistant``,
``user`` and ``tool``. Seen from the agent: each assistant message is one iteration (its ``tool_calls``, whose
``arguments`` are objects); ``tool`` messages answering the agent (``requestor`` "assistant") are its tool
results; a user *text* message is a ``kind="user"`` observation (a new turn). The user simulator's own tool calls
(``requestor`` "user": toggling airplane mode on the phone, …) and their results happen on the user's side and
are not shown to the agent: they are left out.

Termination: ``user_stop``/``agent_stop`` (and a transfer to a human) finished the conversation; ``max_steps``
hit the harness's step cap and ``too_many_errors`` its error cap: censored (``cut_off``).

Task type: the ``[…]`` prefix of the task id (τ²'s own tasks: ``[mobile_data_issue]airplane_mode_on|…``); a task
id without one (``0``, ``fishtrader_01_register_customer``: new domains written elsewhere) is only an id, and the
run takes the domain its results file names (``info.environment_info.domain_name``), or no type at all.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from typing import Any

from pyguard.base.errors import UnreadableRecord
from pyguard.base.events import IterationEvent, Observation, RunRecord, RunStart, ToolCall
from pyguard.trace.ending import build_end
from pyguard.trace.labels import Labels
from pyguard.trace.run_parser import RunParser

__all__: list[str] = []

_CUT = {"max_steps": "step_limit", "too_many_errors": "error_limit"}


def is_tau2_simulation(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("messages"), list) and "termination_reason" in obj


def is_tau2_file(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("simulations"), list)


def _reward(info: Any) -> bool | None:
    if isinstance(info, str):  # some files store the reward info as a Python repr
        try:
            info = ast.literal_eval(info)
        except (ValueError, SyntaxError):
            return None
    value = info.get("reward") if isinstance(info, dict) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value == 1
    return None


def _usage(msg: dict) -> tuple[int | None, int | None]:
    usage = msg.get("usage")
    if not isinstance(usage, dict):
        return None, None
    p, c = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return (p if isinstance(p, int) else None), (c if isinstance(c, int) else None)


def _task_type(task_id: Any, domain: str | None) -> str | None:
    """The type of a simulation's task: the ``[domain]`` prefix of its task id (τ²'s own tasks:
    ``[mobile_data_issue]airplane_mode_on|…``), else the domain its results file names (``domain``), else None. A
    task id without that prefix (``0``, ``fishtrader_01_register_customer``) is only an id: never a type."""
    text = str(task_id) if task_id is not None else ""
    prefix = text.split("]")[0].lstrip("[") if text.startswith("[") and "]" in text else ""
    return prefix or domain or None


def tau2_to_record(
    sim: Any,
    *,
    source: str,
    labels: Labels | None,
    terminal_tools: frozenset[str] | None,
    domain: str | None = None,
) -> RunRecord:
    """One simulation as a run; ``domain`` is the domain its results file names (the fallback task type)."""
    run_id = _run_id(sim)

    def fail(message: str, reason: str) -> UnreadableRecord:
        return UnreadableRecord(f"{source}: simulation {run_id!r}: {message}", reason=reason)

    if not is_tau2_simulation(sim):
        raise fail(
            "is not a τ²-bench simulation (no 'messages' and 'termination_reason')", "record that is not a run object"
        )
    events: list[IterationEvent] = []
    pending: list[Observation] = []
    task: str | None = None
    for j, msg in enumerate(sim["messages"]):
        if not isinstance(msg, dict):
            raise fail(f"message {j} is not an object", "unreadable message")
        role, content = msg.get("role"), msg.get("content") or ""
        if role == "assistant":
            calls = _calls(msg, j, fail)
            prompt, completion = _usage(msg)
            events.append(
                IterationEvent(
                    run_id=run_id,
                    index=len(events) + 1,
                    tool_calls=tuple(calls),
                    observations=tuple(pending),
                    text=content or None,
                    input_tokens=prompt,
                    output_tokens=completion,
                    total_tokens=prompt + completion if prompt is not None and completion is not None else None,
                )
            )
            pending = []
        elif role == "tool":
            if msg.get("requestor", "assistant") != "assistant":
                continue  # the user's own device tools: not seen by the agent
            call_id = str(msg.get("id")) if msg.get("id") else None
            pending.append(
                Observation(kind="tool", tool_call_id=call_id, text=str(content), is_error=msg.get("error") is True)
            )
        elif role == "user":
            if msg.get("tool_calls"):
                continue  # the user acting on their side
            if task is None:
                task = str(content)
            pending.append(Observation(kind="user", text=str(content)))
        elif role == "system":
            pending.append(Observation(kind="system", text=str(content)))
        else:
            raise fail(f"message {j} has the role {role!r}", f"message with unknown role {role!r}")
    if not events:
        raise fail("has no assistant message: there is no model call to import", "run with no assistant message")
    label = labels.label(run_id) if labels is not None and run_id in labels else _reward(sim.get("reward_info"))
    reason = str(sim.get("termination_reason"))
    cut_off = _CUT.get(reason)
    end = build_end(
        run_id,
        events,
        label=label,
        imported_from="tau2",
        source=source,
        terminal_tools=terminal_tools,
        finished=cut_off is None,
        cut_off=cut_off,
        evidence={"termination_reason": reason},
    )
    return RunRecord(
        start=RunStart(run_id=run_id, task=task, task_type=_task_type(sim.get("task_id"), domain)),
        events=events,
        end=end,
    )


def _run_id(sim: Any) -> str:
    """``task_id#trial@id`` (the simulation's id cut to 8 characters)."""
    return f"{sim.get('task_id')}#{sim.get('trial', 0)}@{str(sim.get('id', ''))[:8]}" if isinstance(sim, dict) else "?"


def _calls(msg: dict, j: int, fail: Callable[[str, str], UnreadableRecord]) -> list[ToolCall]:
    """The tool calls of assistant message ``j`` (each must have a name)."""
    calls = []
    for k, call in enumerate(msg.get("tool_calls") or []):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise fail(f"message {j} has a tool call without a name", "unreadable message")
        args = call.get("arguments", {})
        calls.append(
            ToolCall(
                id=str(call.get("id") or f"{j}-{k}"),
                name=call["name"],
                arguments=args if isinstance(args, str) else json.dumps(args, ensure_ascii=False),
            )
        )
    return calls


def _domain(obj: dict) -> str | None:
    """The domain a results file names: ``info.environment_info.domain_name`` (τ²-bench writes it at the top)."""
    info = obj.get("info")
    env = info.get("environment_info") if isinstance(info, dict) else None
    name = env.get("domain_name") if isinstance(env, dict) else None
    return (name.strip() or None) if isinstance(name, str) else None


def _simulations(obj: Any) -> list[tuple[Any, str | None]]:
    """Each simulation with the domain of its file; a bare simulation (one per line) names none."""
    if not is_tau2_file(obj):
        return [(obj, None)]
    domain = _domain(obj)
    return [(sim, domain) for sim in obj["simulations"]]


def _simulation_to_record(item: tuple[Any, str | None], **options: Any) -> RunRecord:
    sim, domain = item
    return tau2_to_record(sim, domain=domain, **options)


parse_tau2 = RunParser(_simulation_to_record, runs_of=_simulations, duplicate="simulation")
"""Every simulation of the parsed objects (results files, or single simulations) as a run; one whose id was already
read from the file is skipped as a duplicate."""
