"""Import recorded runs logged as OpenAI chat-completions messages.

Input: a JSON array of run objects, JSON Lines with one run object per line, or a single run object. A run
object has ``messages`` (or ``traj``): a list of messages with roles ``system``/``developer``/``user``/
``assistant``/``tool`` (and the legacy ``function``); optional ``id``, ``task_type`` and ``task``; an
optional outcome label, ``success`` (bool), ``reward`` (number, 1 is success) or ``resolved`` (bool); an optional
``halted`` (or ``truncated``, bool): true when the harness cut the run at its cap (censored), false when it ended on
its own (even in a tool call); other keys are ignored.

Mapping (see docs/trace-format.md): each assistant message is one iteration. The messages since the previous
assistant message (tool results, user and system messages) are that iteration's observations. Tool results
pair with the previous assistant message's ``tool_calls`` by ``tool_call_id`` when that id names exactly one
of them; otherwise (missing, repeated or unknown id) by position, the next call without a result. A run whose
last assistant message still requests an ordinary tool was cut off (``RunEnd.censored``); one that ends with a
terminal tool (``finish``, ``submit``, a purchase, a hand-off: see :mod:`pyguard.trace.ending`) finished.

Tolerance: with a non-strict :class:`~pyguard.trace.tolerance.SkipLog`, a message with an unknown role (such as
mini-swe-agent's ``exit``) is skipped and counted, and a run that cannot be read (no assistant message, a bad
task type or label, ...) is skipped and counted; the other runs load. Without a log (or a strict one) the first
problem raises :class:`~pyguard.base.errors.UnreadableRecord` (an InputError) naming the run.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Unpack

from pyguard.base.errors import InputError, UnreadableRecord
from pyguard.base.events import IterationEvent, Observation, RunRecord, RunStart, ToolCall
from pyguard.base.safe_reader import read_source
from pyguard.trace.containers import text_runs
from pyguard.trace.ending import build_end
from pyguard.trace.labels import Labels
from pyguard.trace.reader import check_regular_file
from pyguard.trace.run_parser import ImportOptions
from pyguard.trace.tolerance import SkipLog

__all__: list[str] = []

_OBSERVATION_ROLES = {"user": "user", "system": "system", "developer": "system"}


def import_openai(
    path: str | os.PathLike[str],
    *,
    log: SkipLog | None = None,
    terminal_tools: frozenset[str] | None = None,
    labels: Labels | None = None,
) -> list[RunRecord]:
    """Read one file of OpenAI-format runs (JSON array, JSON Lines, or one object) into run records."""
    p = Path(path)
    check_regular_file(p, "recording")
    return parse_openai_text(
        read_source(p).text(),
        source=str(p),
        default_id_prefix=p.stem,
        log=log,
        terminal_tools=terminal_tools,
        labels=labels,
    )


def is_openai_run(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("messages", obj.get("traj")), list)


def parse_openai_text(
    text: str,
    *,
    source: str,
    default_id_prefix: str = "run",
    **options: Unpack[ImportOptions],
) -> list[RunRecord]:
    """Runs from the text of one recording (any container :func:`parse_container` reads)."""
    options["log"], items = text_runs(text, source, options.get("log"), is_run=is_openai_run)
    objects = [
        obj if key is None or not isinstance(obj, dict) or "id" in obj else {**obj, "id": key} for key, obj in items
    ]
    return parse_openai_runs(objects, source=source, default_id_prefix=default_id_prefix, **options)


def parse_openai_runs(
    objects: list[Any],
    *,
    source: str = "<memory>",
    default_id_prefix: str = "run",
    log: SkipLog | None = None,
    terminal_tools: frozenset[str] | None = None,
    labels: Labels | None = None,
) -> list[RunRecord]:
    """Convert already-parsed run objects; a run without ``id`` gets ``"{default_id_prefix}[{index}]"``.

    Without ``log`` (or with a strict one) the first bad run raises; with a tolerant log it is skipped and counted.
    """
    log = log if log is not None else SkipLog(strict=True)
    records: list[RunRecord] = []
    seen: dict[str, int] = {}
    for index, obj in enumerate(objects):
        try:
            record = openai_run_to_record(
                obj,
                index=index,
                source=source,
                default_id=f"{default_id_prefix}[{index}]",
                log=log,
                terminal_tools=terminal_tools,
                labels=labels,
            )
            if record.run_id in seen:
                raise UnreadableRecord(
                    f"{source}: runs #{seen[record.run_id]} and #{index} share the id {record.run_id!r};"
                    " give every run a unique 'id'",
                    reason="duplicate run id",
                )
        except UnreadableRecord as exc:
            log.skip(exc)
            continue
        seen[record.run_id] = index
        records.append(record)
    return records


def _run_name(index: int, obj: Any) -> str:
    if isinstance(obj, dict) and isinstance(obj.get("id"), (str, int)) and not isinstance(obj.get("id"), bool):
        return f"run #{index} (id {str(obj['id'])!r})"
    return f"run #{index}"


def _label(obj: dict, fail) -> bool | None:  # noqa: ANN001
    labels: dict[str, bool] = {}
    for key in ("success", "resolved"):
        value = obj.get(key)
        if value is None:
            continue
        if not isinstance(value, bool):
            raise fail(f"'{key}' must be true or false, got {value!r}")
        labels[key] = value
    reward = obj.get("reward")
    if reward is not None:
        if isinstance(reward, bool) or not isinstance(reward, (int, float)) or not math.isfinite(reward):
            raise fail(f"'reward' must be a finite number (1 means success), got {reward!r}")
        labels["reward"] = reward == 1
    if len(set(labels.values())) > 1:
        raise fail(f"its outcome labels disagree ({', '.join(f'{k}={obj[k]!r}' for k in labels)}); keep one")
    return next(iter(labels.values()), None)


def _halted(obj: dict, fail) -> dict[str, Any]:  # noqa: ANN001
    """The recording's own word on whether its harness cut the run at its cap (``halted`` or ``truncated``, a bool),
    as :func:`build_end`'s ``cut_off`` / ``finished``; nothing when it says nothing."""
    found = {k: obj[k] for k in ("halted", "truncated") if obj.get(k) is not None}
    for key, value in found.items():
        if not isinstance(value, bool):
            raise fail(f"its {key!r} is {value!r}; it must be true (cut at its cap) or false (ended on its own)")
    if len(set(found.values())) > 1:
        raise fail(f"its 'halted' and 'truncated' disagree ({found}); keep one")
    if not found:
        return {}
    return {"cut_off": "halted"} if next(iter(found.values())) else {"finished": True}


def _content(value: Any, fail) -> str | None:  # noqa: ANN001
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts
        parts = []
        for part in value:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, dict) and isinstance(part.get("type"), str):
                parts.append(f"[{part['type']}]")  # an image or file part: keep a marker, not silence
            else:
                raise fail(f"has a content part that is neither text nor a typed part: {part!r:.80}")
        return "\n".join(parts)
    raise fail(f"has content of type {type(value).__name__}; expected a string, null or a list of parts")


def _usage(value: Any, fail) -> tuple[int | None, int | None, int | None]:  # noqa: ANN001
    if value is None:
        return None, None, None
    if not isinstance(value, dict):
        raise fail(f"has 'usage' that is not an object: {value!r:.80}")
    out = []
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        v = value.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise fail(f"has usage.{key} = {v!r}; expected a non-negative integer")
        out.append(v)
    prompt, completion, total = out
    if total is None and prompt is not None and completion is not None:
        total = prompt + completion
    return prompt, completion, total


def _tool_calls(msg: dict, fail) -> list[ToolCall]:  # noqa: ANN001
    raw = msg.get("tool_calls")
    if raw is None and isinstance(msg.get("function_call"), dict):  # legacy single function call
        raw = [{"function": msg["function_call"]}]
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise fail(f"has 'tool_calls' that is not a list: {raw!r:.80}")
    calls = []
    for k, call in enumerate(raw):
        fn = call.get("function") if isinstance(call, dict) else None
        name = fn.get("name") if isinstance(fn, dict) else None
        if not isinstance(fn, dict) or not isinstance(name, str):
            raise fail(
                f"tool_calls[{k}] has no function.name; expected {{'function': {{'name': ..., 'arguments': ...}}}}"
            )
        args = fn.get("arguments", "")
        if args is None:
            args = ""
        elif not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False)
        call_id = call.get("id")
        calls.append(ToolCall(id=None if call_id is None else str(call_id), name=name, arguments=args))
    return calls


class _Fail:
    """The error of one run (its source and name in the message), counted under the reason of what is being read."""

    def __init__(self, source: str, name: str) -> None:
        self.where = f"{source}: {name}"
        self.reason = "unreadable run"

    def __call__(self, message: str) -> UnreadableRecord:
        return UnreadableRecord(f"{self.where}: {message}", reason=self.reason)


def openai_run_to_record(
    obj: Any,
    *,
    index: int = 0,
    source: str = "<memory>",
    default_id: str | None = None,
    log: SkipLog | None = None,
    terminal_tools: frozenset[str] | None = None,
    labels: Labels | None = None,
) -> RunRecord:
    """Convert one OpenAI-format run object into a :class:`RunRecord`.

    Raises :class:`~pyguard.base.errors.UnreadableRecord` (an InputError) naming the run when it cannot be read. A
    message with an unknown role is skipped and counted in a tolerant ``log`` (without one it raises).
    """
    name = _run_name(index, obj)
    log = log if log is not None else SkipLog(strict=True)
    fail = _Fail(source, name)
    messages = _messages(obj, fail)
    raw_id = obj.get("id")
    if raw_id is not None and (isinstance(raw_id, bool) or not isinstance(raw_id, (str, int))):
        raise fail(f"'id' must be a string or an integer, got {raw_id!r}")
    run_id = str(raw_id) if raw_id is not None else (default_id or f"run[{index}]")
    task_type = obj.get("task_type")
    if task_type is not None and not isinstance(task_type, str):
        fail.reason = "bad task_type"
        raise fail(f"'task_type' must be a string, got {task_type!r}")
    fail.reason = "bad outcome label"
    label = _label(obj, fail)
    if labels is not None and (run_id in labels or label is None):
        label = labels.label(run_id)
    fail.reason = "unreadable message"

    read = _Conversation(run_id, task_type, obj.get("task") if isinstance(obj.get("task"), str) else None)
    for j, msg in enumerate(messages):
        if not read.message(j, msg, fail):
            log.skip(
                UnreadableRecord(
                    f"{source}: {name}: message {j} (role {msg.get('role')!r}) has an unknown role; expected system,"
                    " developer, user, assistant, tool or function (tolerant loading skips the message)",
                    reason=f"message with unknown role {msg.get('role')!r}",
                )
            )
    events, pending = read.events, read.pending
    if not events:
        fail.reason = "run with no assistant message"
        raise fail("has no assistant message: there is no model call to import")

    evidence: dict[str, Any] = {"index": index} | ({"trailing_observations": len(pending)} if pending else {})
    end = build_end(
        run_id,
        events,
        label=label,
        imported_from="openai",
        source=source,
        terminal_tools=terminal_tools,
        evidence=evidence,
        **_halted(obj, fail),
    )
    return RunRecord(start=RunStart(run_id=run_id, task_type=task_type, task=read.task), events=events, end=end)


def _messages(obj: Any, fail: _Fail) -> list[Any]:
    """The run object's non-empty list of messages (``messages`` or ``traj``)."""
    if not isinstance(obj, dict):
        fail.reason = "record that is not a run object"
        raise fail(f"is a {type(obj).__name__}, not a run object with 'messages'")
    if "messages" in obj and "traj" in obj:
        raise fail("has both 'messages' and 'traj'; keep one")
    messages = obj.get("messages", obj.get("traj"))
    if messages is None:
        hint = " (it looks like a pyguard trace record: use format='pyguard')" if "type" in obj else ""
        raise fail(f"has no 'messages' (or 'traj') list{hint}")
    if not isinstance(messages, list) or not messages:
        raise fail("'messages' must be a non-empty list of messages")
    return messages


class _Conversation:
    """A run's messages read in order: each assistant message an event, the messages since the previous one its
    observations."""

    def __init__(self, run_id: str, task_type: str | None, task: str | None) -> None:
        self.run_id, self.task_type, self.task = run_id, task_type, task
        self.events: list[IterationEvent] = []
        self.pending: list[Observation] = []
        self.calls: list[ToolCall] = []  # calls of the latest assistant message
        self.answered: list[bool] = []  # which of `calls` already have a result

    def message(self, j: int, msg: Any, fail: _Fail) -> bool:
        """Read message ``j``; False when its role is unknown (the caller skips it)."""
        role = msg.get("role") if isinstance(msg, dict) else None

        def mfail(message: str, j: int = j, role: object = role) -> InputError:
            return fail(f"message {j} (role {role!r}) {message}")

        if not isinstance(msg, dict):
            raise fail(f"message {j} is a {type(msg).__name__}, not an object with a 'role'")
        if role == "assistant":
            self._assistant(msg, mfail)
        elif role in ("tool", "function"):
            call = _pair(msg, self.calls, self.answered)
            tool_name = msg.get("name") if isinstance(msg.get("name"), str) else (call.name if call else None)
            call_id = msg.get("tool_call_id")
            self.pending.append(
                Observation(
                    kind="tool",
                    tool_call_id=str(call_id) if call_id is not None else (call.id if call else None),
                    tool_name=tool_name,
                    text=_content(msg.get("content"), mfail) or "",
                    is_error=msg.get("is_error") is True,
                )
            )
        elif role in _OBSERVATION_ROLES:
            text = _content(msg.get("content"), mfail) or ""
            if role == "user" and self.task is None and not self.events:
                self.task = text
            self.pending.append(Observation(kind=_OBSERVATION_ROLES[role], text=text))
        else:
            return False
        return True

    def _assistant(self, msg: dict, mfail) -> None:  # noqa: ANN001
        prompt, completion, total = _usage(msg.get("usage"), mfail)
        self.calls = _tool_calls(msg, mfail)
        self.answered = [False] * len(self.calls)
        self.events.append(
            IterationEvent(
                run_id=self.run_id,
                index=len(self.events) + 1,
                model=msg.get("model") if isinstance(msg.get("model"), str) else None,
                input_tokens=prompt,
                output_tokens=completion,
                total_tokens=total,
                tool_calls=tuple(self.calls),
                observations=tuple(self.pending),
                text=_content(msg.get("content"), mfail),
                task_type=self.task_type,
            )
        )
        self.pending = []


def _pair(msg: dict, calls: list[ToolCall], answered: list[bool]) -> ToolCall | None:
    """The call a tool result answers: by a unique id, else the next call without a result (by position)."""
    call_id = msg.get("tool_call_id")
    if call_id is not None:
        matches = [k for k, c in enumerate(calls) if c.id is not None and c.id == str(call_id)]
        if len(matches) == 1 and not answered[matches[0]]:
            answered[matches[0]] = True
            return calls[matches[0]]
    for k, done in enumerate(answered):
        if not done:
            answered[k] = True
            return calls[k]
    return None
