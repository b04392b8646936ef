"""Import recorded runs logged as OpenAI chat-completions messages.

Input: a JSON array of run objects, JSON Lines with one run object per line, or a single run object. A run
object has ``messages`` (or ``traj``): a list of messages with roles ``system``/``developer``/``user``/
``assistant``/``tool`` (and the legacy ``function``); optional ``id``, ``task_type`` and ``task``; an
optional outcome label, ``success`` (bool), ``reward`` (number, 1 is success) or ``resolved`` (bool); other
keys are ignored.

Mapping (see docs/trace-format.md): each assistant message is one iteration. The messages since the previous
assistant message (tool results, user and system messages) are that iteration's observations. Tool results
pair with the previous assistant message's ``tool_calls`` by ``tool_call_id`` when that id names exactly one
of them; otherwise (missing, repeated or unknown id) by position, the next call without a result. A run whose
last assistant message still requests tools was cut off: ``RunEnd.censored`` is True.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from pyguard.errors import InputError, TraceFormatError
from pyguard.events import IterationEvent, Observation, Outcome, RunEnd, RunRecord, RunStart, ToolCall

__all__ = ["import_openai", "parse_openai_runs", "openai_run_to_record"]

_OBSERVATION_ROLES = {"user": "user", "system": "system", "developer": "system"}


def import_openai(path: str | os.PathLike[str]) -> list[RunRecord]:
    """Read one file of OpenAI-format runs (JSON array, JSON Lines, or one object) into run records."""
    from pyguard.trace import records
    from pyguard.trace.reader import check_regular_file

    p = Path(path)
    check_regular_file(p, "recording")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise TraceFormatError(f"not UTF-8 text ({exc}); save the recording as UTF-8", path=str(p)) from None
    except OSError as exc:
        raise InputError(f"cannot read recording {str(p)!r}: {exc.strerror or exc}") from None
    if not text.lstrip().startswith("["):  # JSON Lines: refuse a huge line before parsing it (many times its size)
        start = 0
        for number, end in enumerate(_line_ends(text), start=1):
            if end - start > records.MAX_RECORD_BYTES:
                raise TraceFormatError(
                    f"the line is longer than the per-record limit of {records.MAX_RECORD_BYTES} bytes; split the"
                    " recording",
                    path=str(p), line=number,
                )
            start = end + 1
    try:
        objects = _parse_container(text, str(p))
    except RecursionError:
        raise TraceFormatError("the JSON is nested too deeply to read", path=str(p)) from None
    except ValueError as exc:
        if isinstance(exc, (InputError, json.JSONDecodeError)):
            raise
        raise TraceFormatError(f"a number cannot be read ({exc})", path=str(p)) from None
    return parse_openai_runs(objects, source=str(p), default_id_prefix=p.stem)


def _line_ends(text: str):  # noqa: ANN202 - the offset of each newline, then the end of the text
    pos = text.find("\n")
    while pos != -1:
        yield pos
        pos = text.find("\n", pos + 1)
    yield len(text)


def parse_openai_runs(
    objects: list[Any], *, source: str = "<memory>", default_id_prefix: str = "run"
) -> list[RunRecord]:
    """Convert already-parsed run objects; a run without ``id`` gets ``"{default_id_prefix}[{index}]"``."""
    records: list[RunRecord] = []
    seen: dict[str, int] = {}
    for index, obj in enumerate(objects):
        record = openai_run_to_record(obj, index=index, source=source, default_id=f"{default_id_prefix}[{index}]")
        if record.run_id in seen:
            raise InputError(
                f"{source}: runs #{seen[record.run_id]} and #{index} share the id {record.run_id!r};"
                " give every run a unique 'id'"
            )
        seen[record.run_id] = index
        records.append(record)
    return records


def _parse_container(text: str, path: str) -> list[Any]:
    stripped = text.lstrip()
    if not stripped:
        raise TraceFormatError("the file is empty: there are no runs in it", path=path)
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TraceFormatError(f"not valid JSON: {exc.msg} (column {exc.colno})", path=path, line=exc.lineno) from None
        if not isinstance(data, list):
            raise TraceFormatError("expected a JSON array of run objects", path=path)
        return data
    objects: list[Any] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            objects.append(json.loads(line))
        except json.JSONDecodeError as exc:
            try:  # one pretty-printed run object rather than JSON Lines
                whole = json.loads(text)
            except json.JSONDecodeError:
                raise TraceFormatError(
                    f"not valid JSON: {exc.msg} (column {exc.colno}); expected a JSON array or one run object per line",
                    path=path,
                    line=number,
                ) from None
            return [whole]
    return objects


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
        if not isinstance(name, str):
            raise fail(f"tool_calls[{k}] has no function.name; expected {{'function': {{'name': ..., 'arguments': ...}}}}")
        args = fn.get("arguments", "")
        if args is None:
            args = ""
        elif not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False)
        call_id = call.get("id")
        calls.append(ToolCall(id=None if call_id is None else str(call_id), name=name, arguments=args))
    return calls


def openai_run_to_record(obj: Any, *, index: int = 0, source: str = "<memory>", default_id: str | None = None) -> RunRecord:
    """Convert one OpenAI-format run object into a :class:`RunRecord` (raises InputError naming the run)."""
    name = _run_name(index, obj)

    def fail(message: str) -> InputError:
        return InputError(f"{source}: {name}: {message}")

    if not isinstance(obj, dict):
        raise fail(f"is a {type(obj).__name__}, not a run object with 'messages'")
    if "messages" in obj and "traj" in obj:
        raise fail("has both 'messages' and 'traj'; keep one")
    messages = obj.get("messages", obj.get("traj"))
    if messages is None:
        hint = " (it looks like a pyguard trace record: use format='pyguard')" if "type" in obj else ""
        raise fail(f"has no 'messages' (or 'traj') list{hint}")
    if not isinstance(messages, list) or not messages:
        raise fail("'messages' must be a non-empty list of messages")
    raw_id = obj.get("id")
    if raw_id is not None and (isinstance(raw_id, bool) or not isinstance(raw_id, (str, int))):
        raise fail(f"'id' must be a string or an integer, got {raw_id!r}")
    run_id = str(raw_id) if raw_id is not None else (default_id or f"run[{index}]")
    task_type = obj.get("task_type")
    if task_type is not None and not isinstance(task_type, str):
        raise fail(f"'task_type' must be a string, got {task_type!r}")
    label = _label(obj, fail)

    events: list[IterationEvent] = []
    pending: list[Observation] = []
    calls: list[ToolCall] = []  # calls of the latest assistant message
    answered: list[bool] = []  # which of `calls` already have a result
    task = obj.get("task") if isinstance(obj.get("task"), str) else None
    for j, msg in enumerate(messages):
        role = msg.get("role") if isinstance(msg, dict) else None

        def mfail(message: str, j: int = j, role: object = role) -> InputError:
            return fail(f"message {j} (role {role!r}) {message}")

        if not isinstance(msg, dict):
            raise fail(f"message {j} is a {type(msg).__name__}, not an object with a 'role'")
        if role == "assistant":
            prompt, completion, total = _usage(msg.get("usage"), mfail)
            calls = _tool_calls(msg, mfail)
            answered = [False] * len(calls)
            events.append(
                IterationEvent(
                    run_id=run_id,
                    index=len(events) + 1,
                    model=msg.get("model") if isinstance(msg.get("model"), str) else None,
                    input_tokens=prompt,
                    output_tokens=completion,
                    total_tokens=total,
                    tool_calls=tuple(calls),
                    observations=tuple(pending),
                    text=_content(msg.get("content"), mfail),
                    task_type=task_type,
                )
            )
            pending = []
        elif role in ("tool", "function"):
            call = _pair(msg, calls, answered)
            tool_name = msg.get("name") if isinstance(msg.get("name"), str) else (call.name if call else None)
            call_id = msg.get("tool_call_id")
            pending.append(
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
            if role == "user" and task is None and not events:
                task = text
            pending.append(Observation(kind=_OBSERVATION_ROLES[role], text=text))  # type: ignore[arg-type]
        else:
            raise mfail("has an unknown role; expected system, developer, user, assistant, tool or function")
    if not events:
        raise fail("has no assistant message: there is no model call to import")

    last = events[-1]
    censored = bool(last.tool_calls)
    evidence: dict[str, Any] = {"imported_from": "openai", "source": source, "index": index}
    if pending:
        evidence["trailing_observations"] = len(pending)  # results that arrived after the last model call
    totals = {
        key: (None if any(getattr(e, key) is None for e in events) else sum(getattr(e, key) for e in events))
        for key in ("input_tokens", "output_tokens", "total_tokens")
    }
    if censored:
        outcome, reason = Outcome.EXPIRED, "recording ends while the model still requests tools (cut off)"
    elif label is False:
        outcome, reason = Outcome.FAILED, "recorded as failed"
    else:
        outcome = Outcome.SUCCEEDED
        reason = "recorded as successful" if label else "the model answered (no outcome label recorded)"
    end = RunEnd(
        run_id=run_id,
        outcome=outcome,
        reason=reason,
        answer=None if censored else last.text,
        iterations=len(events),
        tool_calls=sum(len(e.tool_calls) for e in events),
        evidence=evidence,
        success_label=label,
        censored=censored,
        **totals,
    )
    return RunRecord(start=RunStart(run_id=run_id, task_type=task_type, task=task), events=events, end=end)


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
