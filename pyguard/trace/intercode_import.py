"""Import InterCode result files (``data/results/<env>/<model>/ic_<env>_multiturn_<model>_<N>_turns*.json``).

InterCode (Yang et al., 2023) runs an agent in an interactive terminal: Bash in a container, a SQL database, a
capture-the-flag box, a Python interpreter. Each model call is one action (a command, a query, ``submit``); the
environment's output is the next call's observation. A result file maps an index to one episode::

    {"0": {"environment": "ic_bash", "task_id": 0, "query": "...",
           "turn_history": {"actions": [...], "observations": [...], "rewards": [...], "valid_action": [...]},
           "summary": {"max_reward": 1.0, "turns_taken": 3, "turns_max": 10}}, ...}

The harness scores every action (``rewards``: 1.0 is the task done; the agent never sees the reward) and ends
the episode on a reward of 1, on ``skip``, or after ``turns_max`` actions. So a run is a success when its last
reward is 1, and *censored* (``cut_off="step_limit"``: the harness's own cap, the agent never finished) when it
took ``turns_max`` actions without reaching it and its last action was no ``submit`` or ``skip``.

Each action is one iteration with one tool call named after the environment (``bash``, ``sql``, ``python``; the
CTF box is a Bash shell) with arguments ``{"command": action}``; ``submit ...`` and ``skip`` are calls of the
terminal tools ``submit`` and ``skip``; ``blocked`` (the harness refused to run the policy's output) is an
iteration with no tool call. An action the environment reports as invalid (``valid_action`` false: an error
exit) makes its observation an error. The query is the first iteration's user observation. Run ids are
``<file stem>/<task_id>`` (one file per model, task set and turn cap).
"""

from __future__ import annotations

import json
from pathlib import PurePath
from typing import Any

from pyguard.base.errors import UnreadableRecord
from pyguard.base.events import IterationEvent, Observation, RunRecord, RunStart, ToolCall
from pyguard.trace.ending import build_end
from pyguard.trace.labels import Labels
from pyguard.trace.run_parser import RunParser

__all__: list[str] = []

INTERCODE_TERMINAL_TOOLS = frozenset({"submit", "skip"})
_TOOLS = {"ic_bash": "bash", "ic_ctf": "bash", "ic_sql": "sql", "ic_python": "python"}


def is_intercode_run(obj: Any) -> bool:
    """One InterCode episode: a ``turn_history`` with ``actions`` and a ``summary`` with ``turns_max``."""
    if not isinstance(obj, dict):
        return False
    history, summary = obj.get("turn_history"), obj.get("summary")
    return (
        isinstance(history, dict)
        and isinstance(history.get("actions"), list)
        and isinstance(summary, dict)
        and "turns_max" in summary
    )


def _call(action: str, tool: str, cid: str) -> ToolCall | None:
    text = action.strip()
    if text == "blocked":
        return None
    head = text.split(maxsplit=1)[0].lower() if text else ""
    name = head if head in INTERCODE_TERMINAL_TOOLS else tool
    return ToolCall(id=cid, name=name, arguments=json.dumps({"command": action}, ensure_ascii=False))


def _at(values: Any, i: int) -> Any:
    return values[i] if isinstance(values, list) and i < len(values) else None


def _events(run_id: str, obj: dict, tool: str) -> list[IterationEvent]:
    history = obj["turn_history"]
    actions, observations = history["actions"], history.get("observations")
    valid = history.get("valid_action")
    query = obj.get("query")
    pending: list[Observation] = [Observation(kind="user", text=query)] if isinstance(query, str) else []
    events: list[IterationEvent] = []
    for i, action in enumerate(actions):
        if not isinstance(action, str):
            raise UnreadableRecord(f"action {i} is not text: {type(action).__name__}", reason="unreadable action")
        call = _call(action, tool, f"{run_id}-{i + 1}")
        events.append(
            IterationEvent(
                run_id=run_id,
                index=i + 1,
                tool_calls=(call,) if call is not None else (),
                observations=tuple(pending),
                text=None if call is not None else action,
            )
        )
        seen = _at(observations, i)
        pending = (
            [
                Observation(
                    kind="tool",
                    tool_call_id=call.id,
                    tool_name=call.name,
                    text=seen if isinstance(seen, str) else json.dumps(seen, ensure_ascii=False, default=str),
                    is_error=_at(valid, i) is False,
                )
            ]
            if call is not None
            else []
        )
    return events


def intercode_to_record(
    obj: Any, *, source: str, labels: Labels | None, terminal_tools: frozenset[str] | None
) -> RunRecord:
    task_id = obj.get("task_id") if isinstance(obj, dict) else None
    run_id = f"{PurePath(source).stem}/{task_id}"
    if not is_intercode_run(obj) or isinstance(task_id, bool) or not isinstance(task_id, (int, str)):
        raise UnreadableRecord(
            f"{source}: episode {run_id!r} is not an InterCode episode (task_id, turn_history.actions, summary)",
            reason="record that is not a run object",
        )
    tool = _TOOLS.get(str(obj.get("environment")), "bash")
    try:
        events = _events(run_id, obj, tool)
    except UnreadableRecord as exc:
        raise UnreadableRecord(f"{source}: episode {run_id!r}: {exc}", reason=exc.reason) from exc
    if not events:
        raise UnreadableRecord(
            f"{source}: episode {run_id!r} has no action: there is no model call to import",
            reason="run with no assistant message",
        )
    rewards = obj["turn_history"].get("rewards")
    last_reward = rewards[-1] if isinstance(rewards, list) and rewards else None
    solved = last_reward == 1
    summary = obj["summary"]
    turns_max = summary.get("turns_max")
    last_action = obj["turn_history"]["actions"][-1].strip().lower()
    gave_up = last_action.startswith(("submit", "skip")) or last_action == "blocked"
    capped = isinstance(turns_max, int) and len(events) >= turns_max and not solved and not gave_up
    named = labels.label(run_id) if labels is not None else None
    end = build_end(
        run_id,
        events,
        label=named if named is not None else solved,
        imported_from="intercode",
        source=source,
        terminal_tools=terminal_tools if terminal_tools is not None else INTERCODE_TERMINAL_TOOLS,
        finished=not capped,
        cut_off="step_limit" if capped else None,
        evidence={"last_reward": last_reward, "max_reward": summary.get("max_reward"), "turns_max": turns_max},
    )
    query = obj.get("query")
    return RunRecord(
        start=RunStart(run_id=run_id, task=query if isinstance(query, str) else None),
        events=events,
        end=end,
    )


parse_intercode = RunParser(intercode_to_record, duplicate="episode")
"""Every episode of the parsed objects (an id-keyed result file, a list, or JSON Lines) as a run; unreadable ones
skipped and counted in ``log`` (strict when None: the first raises)."""
