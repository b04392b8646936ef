"""A recorded run as a scenario file: record a test once against a real model, replay it offline.

:class:`pyguard.jvm.recording.Recording` wraps any LangChain4j ``ChatModel`` (``OpenAiChatModel`` against an
OpenAI-compatible endpoint, say) and records each call: where it falls (user message, model call within it, a wrap-up
or not), the digest of the request, and the response (text, tool calls, token usage). :func:`scenario_from_calls`
writes those calls as an ordinary scenario (``pyguard/scenarios/README.md``): one turn per model call with the
recorded response and usage, a ``conversation`` when the run had several user messages, the wrap-up's answer as
``wrap_up``. Each turn keeps its ``request_digest``: the scripted model replaying the file refuses a request that
differs from the one recorded (the agent's prompt, tools or results drifted), naming the call, the way a VCR cassette
or a syrupy snapshot refuses a stale recording.

Pure Python: the calls come in as the dicts the Java ``RecordingChatModel`` writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyguard.base.errors import InputError

__all__: list[str] = []


def scenario_from_calls(calls: Sequence[Mapping[str, Any]], *, name: str) -> dict[str, Any]:
    """The scenario that replays ``calls`` (the Java ``RecordingChatModel``'s record, in call order)."""
    if not calls:
        raise InputError(f"recording {name!r} holds no model call: did the test use the recorded model?")
    segments: dict[int, dict[int, dict[str, Any]]] = {}
    users: dict[int, str] = {}
    wrap_up: str | None = None
    for call in calls:
        if call.get("wrap_up"):
            wrap_up = str(call.get("text") or "")
            continue
        u, n = int(call["user_turn"]), int(call["turn"])
        users.setdefault(u, str(call.get("user", "")))
        turns = segments.setdefault(u, {})
        if n in turns and turns[n]["request_digest"] != call["request_digest"]:
            raise InputError(
                f"recording {name!r} holds two different requests for user message {u + 1}, model call {n + 1}: "
                "record one conversation per recorded model (one agent run, or one chat() per user message)"
            )
        turns[n] = _turn(call)
    out: dict[str, Any] = {
        "name": name,
        "description": "recorded from a real model; replayed offline (pyguard.testing.recording)",
        "toolset": "none",
        "usage": {"report": all("input_tokens" in c and "output_tokens" in c for c in calls)},
    }
    ordered = [_ordered(segments[u], name, u) for u in sorted(segments)]
    if len(ordered) == 1 and sorted(segments) == [0]:
        out["turns"] = ordered[0]
    else:
        out["conversation"] = [{"user": users[u], "turns": t} for u, t in zip(sorted(segments), ordered, strict=True)]
    if wrap_up is not None:
        out["wrap_up"] = {"answer": wrap_up}
    return out


def _turn(call: Mapping[str, Any]) -> dict[str, Any]:
    turn: dict[str, Any] = {}
    tool_calls = call.get("tool_calls") or []
    if tool_calls:
        turn["tool_calls"] = [{"name": c["name"], "arguments": c.get("arguments") or "{}"} for c in tool_calls]
        if call.get("text"):
            turn["text"] = call["text"]
    else:
        turn["answer"] = str(call.get("text") or "")
    for key in ("input_tokens", "output_tokens", "request_digest"):
        if key in call:
            turn[key] = call[key]
    return turn


def _ordered(turns: Mapping[int, dict[str, Any]], name: str, u: int) -> list[dict[str, Any]]:
    missing = [n for n in range(max(turns) + 1) if n not in turns]
    if missing:
        raise InputError(
            f"recording {name!r} misses model call {missing[0] + 1} of user message {u + 1}: a recording starts with "
            "the conversation's first call"
        )
    return [turns[n] for n in range(len(turns))]
