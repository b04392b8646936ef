"""Typed events: what the Java sensor reports for every model call, and how a run starts and ends.

These models are the contract between the JVM edge (which builds them from the JSON the Java
``GuardSensor`` sends), the engine (which consumes them one at a time) and the trace format (which writes
them, one JSON line each). They are pure data: no JVM, no jpype.

Iteration semantics: iteration ``index`` (1-based) is the ``index``-th model call of a run. Its
``observations`` are the tool results (and any new user message) that arrived in the request of that call
since the previous model call, i.e. the results of the *previous* iteration's ``tool_calls``. Its
``tool_calls`` are what the model asked for in its response.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict

__all__ = [
    "COUNT_MAX",
    "Count",
    "NonNegative",
    "ToolCall",
    "Observation",
    "IterationEvent",
    "Outcome",
    "RunStart",
    "RunEnd",
    "RunRecord",
    "opens_turn",
    "turn_starts",
]


COUNT_MAX = 2**63 - 1
Count = Annotated[int, Strict(), Field(ge=0, le=COUNT_MAX)]
"""A count (tokens, calls): a JSON integer, never a string, a float or a bool, never negative, at most a Java long."""
NonNegative = Annotated[float, Strict(), Field(ge=0, allow_inf_nan=False)]
"""A duration, a time stamp or a cost: a finite JSON number (not a string), never negative; NaN and infinity refused."""
Flag = Annotated[bool, Strict()]
"""true or false, never "yes", 1 or "true"."""


class _Frozen(BaseModel):
    """Every event and record: frozen, unknown keys refused, and strict at the boundary: counts are non-negative
    JSON integers, numbers finite, flags JSON booleans (whatever reads a trace, a recording or the sensor's JSON)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class ToolCall(_Frozen):
    """One tool call the model requested."""

    id: str | None = None
    """The provider's tool call id (may be missing or repeated in recordings)."""
    name: str
    """The tool name as the model wrote it (it may not exist: hallucinated names are reported as-is)."""
    arguments: str = ""
    """The raw JSON arguments string exactly as the model produced it (may be malformed JSON)."""


class Observation(_Frozen):
    """Something the run saw between two model calls: a tool result, or a new user/system message."""

    kind: Literal["tool", "user", "system"] = "tool"
    tool_call_id: str | None = None
    tool_name: str | None = None
    text: str = ""
    """The full text. Never truncated by pyguard."""
    is_error: Flag = False


class IterationEvent(_Frozen):
    """One model call of a run, as the sensor saw it."""

    run_id: str
    index: Annotated[int, Strict(), Field(ge=1)]
    """1-based number of this model call within the run."""
    provider: str | None = None
    model: str | None = None
    input_tokens: Count | None = None
    """None when the provider reported no usage."""
    output_tokens: Count | None = None
    total_tokens: Count | None = None
    latency_ms: NonNegative | None = None
    finish_reason: str | None = None
    """LangChain4j FinishReason name (STOP, LENGTH, TOOL_EXECUTION, CONTENT_FILTER, OTHER) or None."""
    tool_calls: tuple[ToolCall, ...] = ()
    observations: tuple[Observation, ...] = ()
    text: str | None = None
    """The AI message text of the response, if any."""
    error: str | None = None
    """Set when the model call failed (the sensor's onError): the error's class and message."""
    task_type: str | None = None
    timestamp_ms: NonNegative | None = None
    """Wall-clock time of the response in epoch milliseconds (None in synthetic events)."""

    @property
    def is_final(self) -> bool:
        """True when the model answered without requesting a tool (the loop ends after this call)."""
        return not self.tool_calls and self.error is None


class Outcome(StrEnum):
    """How a run ended. Exactly one per run. A run stopped by a cap or a stall is never SUCCEEDED."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    EXPIRED = "expired"
    STALLED = "stalled"
    ESCALATED = "escalated"
    CANCELLED = "cancelled"
    GUARD_ERROR = "guard_error"


class RunStart(_Frozen):
    """The header of a run."""

    run_id: str
    task_type: str | None = None
    task: str | None = None
    """The user's task text, if known."""
    agent_style: str | None = None
    """'aiservices', 'agentic', 'executor', or None for recordings."""
    policy: dict | None = None
    """The policy configuration used (a dumped config), if any."""
    started_at_ms: NonNegative | None = None
    parent_run_id: str | None = None
    """The run this one is a child of (a sub-agent invocation inside a supervisor or workflow); None for a top-level
    run and in traces written before run trees existed."""


class RunEnd(_Frozen):
    """The footer of a run: its one outcome and why."""

    run_id: str
    outcome: Outcome
    reason: str = ""
    answer: str | None = None
    """The final answer, or the salvaged last answer of a run stopped early (its outcome still says so)."""
    iterations: Count = 0
    tool_calls: Count = 0
    input_tokens: Count | None = None
    output_tokens: Count | None = None
    total_tokens: Count | None = None
    tokens_partial: Flag = False
    """True when some model calls reported no usage: the token totals then count only the calls that did (a lower
    bound, not the run's total). None totals mean no call reported usage."""
    cost: NonNegative | None = None
    wall_ms: NonNegative | None = None
    evidence: dict = Field(default_factory=dict)
    success_label: Flag | None = None
    """For recordings: the recorded outcome label (success/reward/resolved), None when unknown."""
    censored: Flag = False
    """True when the run was cut off before it finished (it still requested tools at its last call)."""


class RunRecord(BaseModel):
    """A whole run in memory: header, iterations, footer (footer may be None for a run still going or cut short)."""

    model_config = ConfigDict(extra="forbid")

    start: RunStart
    events: list[IterationEvent] = Field(default_factory=list)
    end: RunEnd | None = None

    @property
    def run_id(self) -> str:
        return self.start.run_id

    @property
    def task_type(self) -> str | None:
        return self.start.task_type


def opens_turn(previous: IterationEvent | None, event: IterationEvent) -> bool:
    """True when ``event`` is the first model call of a new user turn (one ``chat()`` call of the agent): the
    call before it answered (no tool calls, no error) and a user message arrived in its request (an observation
    of kind ``"user"``). A user message while tools are still being called belongs to the same turn. The one
    definition of a turn, for the engine, replay and calibration alike: LangChain4j's ``maxToolCallingRoundTrips``
    counts model calls per turn."""
    return previous is not None and previous.is_final and any(o.kind == "user" for o in event.observations)


def turn_starts(events: Sequence[IterationEvent]) -> list[int]:
    """The 0-based positions of the iterations that start a user turn: the first iteration, then every one that
    :func:`opens_turn`. Per-turn caps count from each start."""
    starts = [0] if events else []
    for pos in range(1, len(events)):
        if opens_turn(events[pos - 1], events[pos]):
            starts.append(pos)
    return starts
