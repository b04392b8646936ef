"""Per-tool limits in replay: a recorded run as ``[caps.tool_limits]`` with exit ``continue`` would have made it. A
call of a limited tool past its limit is not run live (Java's ``ToolLimits``): the model reads the blocked message
instead of the tool's result, and the run goes on. Replay cannot know what the model would have done next, so it
keeps the recorded calls and gives the engine what the live guard would have seen: each blocked call's recorded
result replaced by :func:`blocked_result` (the same text as Java's), and the blocked calls counted by tool. A limit
with exit ``end`` or ``error`` is not modelled here (the run would have stopped at that call; replay keeps to the
recording): such limits are left out, and :func:`replayed_events` says which."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pyguard.base.events import IterationEvent, Observation
from pyguard.engine.config_tables import ToolLimitConfig

__all__: list[str] = []


def blocked_result(tool: str, limit: int, scope: str = "run") -> str:
    """The tool result a call blocked by a ``continue`` limit returns live (Java's ``ToolLimits.take``, word for
    word: ``tests/e2e/test_tool_limits.py`` checks that both say the same)."""
    calls = "call" if limit == 1 else "calls"
    return (
        f"[pyguard] not run: the limit of {limit} {calls} of {tool} per {scope} is reached, so this call was not"
        f" executed. Do not call {tool} again in this {scope}; go on with the other tools, or answer from what you have."
    )


@dataclass(frozen=True)
class BlockedReplay:
    """The events as the engine sees them under the limits, the blocked calls by tool, and the limits left out."""

    events: Sequence[IterationEvent]
    blocked: Mapping[str, int]
    not_modelled: tuple[str, ...] = ()
    """Tools whose limit has exit ``end`` or ``error`` (not replayed)."""


def replayed_events(events: Sequence[IterationEvent], limits: Mapping[str, ToolLimitConfig]) -> BlockedReplay:
    """``events`` with every call past its tool's ``continue`` limit blocked: its result (in the next event's
    observations, matched by tool call id, else by its place among that event's tool results) is
    :func:`blocked_result`. Unchanged (the same objects) when no call is blocked."""
    kept = {t: c for t, c in limits.items() if c.exit == "continue"}
    skipped = tuple(sorted(t for t, c in limits.items() if c.exit != "continue"))
    if not kept:
        return BlockedReplay(events, {}, skipped)
    counts: Counter[str] = Counter()
    blocked: Counter[str] = Counter()
    out = list(events)
    for k, event in enumerate(events):
        refused: dict[int, str] = {}  # place among the call's tool calls -> the blocked result
        for place, call in enumerate(event.tool_calls):
            limit = kept.get(call.name)
            if limit is None:
                continue
            counts[call.name] += 1
            if counts[call.name] > limit.limit:
                blocked[call.name] += 1
                refused[place] = blocked_result(call.name, limit.limit)
        if refused and k + 1 < len(events):
            out[k + 1] = _with_blocked(event, out[k + 1], refused)
    return BlockedReplay(out, dict(blocked), skipped)


def _with_blocked(event: IterationEvent, following: IterationEvent, refused: dict[int, str]) -> IterationEvent:
    """``following`` with the results of ``event``'s refused calls replaced (by id, else by place)."""
    by_id = {event.tool_calls[p].id: text for p, text in refused.items() if event.tool_calls[p].id}
    observations: list[Observation] = []
    place = 0
    for obs in following.observations:
        if obs.kind != "tool":
            observations.append(obs)
            continue
        text = by_id.get(obs.tool_call_id) if obs.tool_call_id else refused.get(place)
        place += 1
        observations.append(obs if text is None else obs.model_copy(update={"text": text, "whole_chars": None}))
    return following.model_copy(update={"observations": tuple(observations)})
