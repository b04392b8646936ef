"""Import text-adventure games played by an LLM agent in TextWorld (the game records of the "LLMs vs. TextWorld"
harness: ``experiments/<model>/<experiment>/<seed>/<attempt>.json``, one game per file).

The agent plays one CookingWorld game through one command per model call: its reply is a thought in parentheses
and, outside them, a game command (``N``, ``OPEN WOODEN DOOR``, ``TAKE RED TUNA``...); the game's text is the
next message it reads. A game record is one object::

    {"model": "gpt-4o", "seed": 12, "tw_make_args": [...], "turns": 41, "error": null,
     "outcome": "won" | "lost" | "turnmax" | "quit" | "silence" | "error",
     "messages": [{"role": "developer" | "user" | "assistant", "content": "..."}, ...]}

The messages open with the instructions and a walkthrough of an example game (a demonstration, not the run);
the game itself starts after the last ``developer`` message that begins "Well done!" (the harness's "now play
again"). After it, each ``assistant`` message is one iteration: its command (the reply with every balanced
parenthetical removed, as the harness reads it) is one call of the tool ``act`` with arguments
``{"command": ...}`` (``QUIT`` and ``RESTART``, which the harness takes as giving up, are calls of the terminal
tool ``quit``). The messages up to the next reply are the call's result: the game's text, or the harness's
refusal (a ``developer`` message: several commands at once, no command), which is an error result and was not
sent to the game. A reply with no readable command (only a parenthetical, unbalanced parentheses) is an
iteration with no call, and the refusal reaches the next call as a user message.

Outcomes: ``won`` is a success; ``lost`` (the game ended badly) and ``quit`` finished the game unsuccessfully;
``turnmax`` hit the harness's 100-turn limit (censored, ``cut_off="step_limit"``), ``silence`` its limit of
consecutive refused replies (``cut_off="error_limit"``) and ``error`` an API error (``cut_off="recording_ends"``).
Run ids are ``<model>/<experiment>/<seed>/<attempt>`` from the record and its path (the experiment is the first
12 characters of the folder's hash). A record that cannot be read is skipped and counted, never half-read.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePath
from typing import Any

from pyguard.base.errors import UnreadableRecord
from pyguard.base.events import IterationEvent, Observation, RunRecord, RunStart, ToolCall
from pyguard.trace.ending import build_end
from pyguard.trace.labels import Labels
from pyguard.trace.run_parser import RunParser

__all__: list[str] = []

TEXTWORLD_OUTCOMES = frozenset({"won", "lost", "turnmax", "quit", "silence", "error"})
TEXTWORLD_TERMINAL_TOOLS = frozenset({"quit"})
_CUT = {"turnmax": "step_limit", "silence": "error_limit", "error": "recording_ends"}
_GAME_STARTS = "Well done!"
_PARENTHETICAL = re.compile(r"[(][^()]*[)]")
_QUIT = re.compile(r"(QUIT|RESTART)\b", re.IGNORECASE)


def is_textworld_run(obj: Any) -> bool:
    """One game record: ``messages``, an ``outcome`` the harness writes, ``turns`` and ``tw_make_args``."""
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("messages"), list)
        and obj.get("outcome") in TEXTWORLD_OUTCOMES
        and "turns" in obj
        and isinstance(obj.get("tw_make_args"), list)
    )


def command_of(reply: str) -> str | None:
    """The game command of a reply as the harness reads it: every balanced parenthetical removed (innermost first),
    then the surrounding blanks and a trailing full stop; None when nothing is left or a parenthesis is unbalanced."""
    text = reply
    while True:
        stripped = _PARENTHETICAL.sub("", text)
        if stripped == text:
            break
        text = stripped
    if "(" in text or ")" in text:
        return None
    command = text.strip().rstrip(". \r\n")
    return command or None


def _messages(obj: dict, run_id: str) -> list[tuple[str, str]]:
    out = []
    for i, m in enumerate(obj["messages"]):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
            raise UnreadableRecord(
                f"game {run_id!r}: message {i} is not a {{role, content}} object of text", reason="unreadable message"
            )
        out.append((m["role"], m["content"]))
    return out


def _game_start(messages: list[tuple[str, str]]) -> int:
    """The index of the first message of the game itself (after the walkthrough of the example game)."""
    marks = [i for i, (role, text) in enumerate(messages) if role == "developer" and text.startswith(_GAME_STARTS)]
    if marks:
        return marks[-1] + 1
    first = next((i for i, (role, _) in enumerate(messages) if role == "developer"), -1)
    return first + 1


def _events(run_id: str, messages: list[tuple[str, str]], model: str | None) -> list[IterationEvent]:
    events: list[IterationEvent] = []
    pending: list[Observation] = []
    i = 0
    while i < len(messages):
        role, text = messages[i]
        if role != "assistant":
            pending.append(Observation(kind="user", text=text))
            i += 1
            continue
        replies = []
        j = i + 1
        while j < len(messages) and messages[j][0] != "assistant":
            replies.append(messages[j])
            j += 1
        command = command_of(text)
        call = None
        if command is not None:
            name = "quit" if _QUIT.match(command) else "act"
            call = ToolCall(id=f"{run_id}-{len(events) + 1}", name=name, arguments=json.dumps({"command": command}))
        events.append(
            IterationEvent(
                run_id=run_id,
                index=len(events) + 1,
                model=model,
                tool_calls=(call,) if call is not None else (),
                observations=tuple(pending),
                text=text,
            )
        )
        if call is not None and replies:
            refused = any(r == "developer" for r, _ in replies)
            joined = "\n".join(t for _, t in replies)
            pending = [
                Observation(kind="tool", tool_call_id=call.id, tool_name=call.name, text=joined, is_error=refused)
            ]
        else:
            pending = [Observation(kind="user", text=t) for _, t in replies]
        i = j
    return events


def _run_id(obj: dict, source: str) -> str:
    path = PurePath(source)
    experiment = path.parent.parent.name[:12] if len(path.parts) >= 3 else ""
    parts = [str(obj.get("model", "model")), experiment, str(obj.get("seed", path.parent.name)), path.stem]
    return "/".join(p for p in parts if p)


def textworld_to_record(
    obj: Any, *, source: str, labels: Labels | None, terminal_tools: frozenset[str] | None
) -> RunRecord:
    if not is_textworld_run(obj):
        raise UnreadableRecord(
            f"{source}: not a TextWorld game record (messages, outcome, turns, tw_make_args)",
            reason="record that is not a run object",
        )
    run_id = _run_id(obj, source)
    messages = _messages(obj, run_id)
    start = _game_start(messages)
    model = obj.get("model") if isinstance(obj.get("model"), str) else None
    events = _events(run_id, messages[start:], model)
    if not events:
        raise UnreadableRecord(
            f"{source}: game {run_id!r} has no reply after the game starts: there is no model call to import",
            reason="run with no assistant message",
        )
    outcome = obj["outcome"]
    cut_off = _CUT.get(outcome)
    named = labels.label(run_id) if labels is not None else None
    end = build_end(
        run_id,
        events,
        label=named if named is not None else outcome == "won",
        imported_from="textworld",
        source=source,
        terminal_tools=terminal_tools if terminal_tools is not None else TEXTWORLD_TERMINAL_TOOLS,
        finished=cut_off is None,
        cut_off=cut_off,
        evidence={"outcome": outcome, "turns": obj.get("turns"), "seed": obj.get("seed"), "error": obj.get("error")},
    )
    task = messages[start - 1][1] if start > 0 else None
    return RunRecord(start=RunStart(run_id=run_id, task=task), events=events, end=end)


parse_textworld = RunParser(textworld_to_record, duplicate="game")
"""Every game record of the parsed objects (one record per file, or a list, or JSON Lines) as a run; unreadable
ones skipped and counted in ``log`` (strict when None: the first raises)."""
