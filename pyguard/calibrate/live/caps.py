"""The agent's own round-trip cap, read from the runs it ended: a user's agent built with LangChain4j's
``maxToolCallingRoundTrips(R)`` throws "exceeded R tool calling round trips" after R + 1 model calls, so every run
longer than that is cut there, whatever the calibration's ``cap``. The calibration cannot see past it: the warning
names the setting, the model calls it allows and what to change."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from pyguard.events import RunRecord

__all__ = ["AgentCap", "agent_round_trips", "agent_caps", "agent_cap_warnings"]

_EXCEEDED = re.compile(r"exceeded (\d+) (?:tool calling round trips|sequential tool)")


class AgentCap(BaseModel):
    """The agent's own ``maxToolCallingRoundTrips`` as the runs of one task type show it."""

    model_config = ConfigDict(extra="forbid")

    task_type: str
    round_trips: int
    """R, from LangChain4j's own message."""
    model_calls: int
    """R + 1: the model calls a run makes before LangChain4j throws."""
    runs: int
    """Runs of this type it ended."""


def agent_round_trips(record: RunRecord) -> int | None:
    """The agent's own ``maxToolCallingRoundTrips`` when it ended this run (LangChain4j's message in the reason)."""
    end = record.end
    if end is None:
        return None
    m = _EXCEEDED.search(end.reason or "")
    return int(m.group(1)) if m else None


def agent_caps(records: Iterable[RunRecord]) -> list[AgentCap]:
    """Per task type and setting, the runs the agent's own round-trip cap ended."""
    seen: Counter[tuple[str, int]] = Counter()
    for record in records:
        r = agent_round_trips(record)
        if r is not None:
            seen[(record.task_type or "default", r)] += 1
    return [AgentCap(task_type=t, round_trips=r, model_calls=r + 1, runs=k) for (t, r), k in sorted(seen.items())]


def agent_cap_warnings(caps: list[AgentCap], calibration_cap: int | None) -> list[str]:
    """The warning for each cap: the setting named, below the calibration's cap or not, and what to change."""
    out = []
    for c in caps:
        below = (
            f", below the calibration's cap of {calibration_cap} model calls (--cap)"
            if calibration_cap is not None and c.model_calls < calibration_cap
            else ""
        )
        out.append(
            f"task type {c.task_type!r}: your agent's own maxToolCallingRoundTrips({c.round_trips}) (LangChain4j) "
            f"ended {c.runs} runs at {c.model_calls} model calls{below}; c(n) past {c.model_calls} is unknown. To see "
            "past it, have your factory read maxToolCallingRoundTrips from a system property (Integer.getInteger"
            "(NAME, default)) and name it in the task file (factory.round_trips_property = NAME): pyguard sets it "
            "to the calibration's cap; then run again with a new --traces dir"
        )
    return out
