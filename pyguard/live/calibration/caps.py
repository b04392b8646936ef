"""The agent's own round-trip cap, read from the runs it ended: a user's agent built with LangChain4j's
``maxToolCallingRoundTrips(R)`` throws "exceeded R tool calling round trips" after R + 1 model calls, so every run
longer than that is cut there, whatever the calibration's ``cap``. The calibration cannot see past it: the warning
names the setting, the model calls it allows and what to change."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from pyguard.base.events import UNTYPED, RunRecord
from pyguard.calibrate.evidence import agent_cap_warning
from pyguard.calibrate.runs import agent_round_trips

__all__: list[str] = []


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


def agent_caps(records: Iterable[RunRecord]) -> list[AgentCap]:
    """Per task type and setting, the runs the agent's own round-trip cap ended."""
    seen: Counter[tuple[str, int]] = Counter()
    for record in records:
        r = agent_round_trips(record)
        if r is not None:
            seen[(record.task_type or UNTYPED, r)] += 1
    return [AgentCap(task_type=t, round_trips=r, model_calls=r + 1, runs=k) for (t, r), k in sorted(seen.items())]


def agent_cap_warnings(caps: list[AgentCap], calibration_cap: int | None) -> list[str]:
    """The warning for each cap (:func:`pyguard.calibrate.evidence.agent_cap_warning`)."""
    return [agent_cap_warning(c.task_type, c.round_trips, c.runs, calibration_cap) for c in caps]
