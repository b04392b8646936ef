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

from pydantic import BaseModel, ConfigDict, Field, Strict, model_validator

__all__: list[str] = []

UNTYPED = "(untyped)"
"""The name summaries, reports and calibration give the runs without a task type (``task_type`` None): one group,
never a task type a policy could name (a policy's own budget is the one those runs get)."""


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
    """The text: the whole of it, or, when :attr:`whole_chars` is set, its window (``pyguard.engine.window``: the
    head, the tail and a line with the size and checksum of the whole), which is all the engine reads of it."""
    is_error: Flag = False
    whole_chars: Count | None = None
    """Set when ``text`` is the window of a longer text (the Java sensor sends a tool result over 131,072 characters
    so): the whole text's length in characters. None: ``text`` is the whole text."""

    @model_validator(mode="after")
    def _window_shorter_than_whole(self) -> Observation:
        if self.whole_chars is not None and self.whole_chars <= len(self.text):
            raise ValueError(
                f"whole_chars={self.whole_chars} is not more than the {len(self.text)} characters of text: a windowed"
                " observation's text is shorter than the whole (omit whole_chars when text is the whole text)"
            )
        return self

    @property
    def chars(self) -> int:
        """The whole text's length in characters, whether :attr:`text` is the whole or its window."""
        return len(self.text) if self.whole_chars is None else self.whole_chars


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
    request_model: str | None = None
    """The model the request asked for (``model`` is the response's when it named one, else this)."""
    response_model: str | None = None
    """The model the response named (None when it named none)."""
    response_id: str | None = None
    """The provider's id of the response, when it gave one."""
    request_parameters: dict[str, float | int | list[str]] | None = None
    """The request's sampling parameters that were set, named as in ``gen_ai.request.*`` (``temperature``,
    ``top_p``, ``top_k``, ``max_tokens``, ``frequency_penalty``, ``presence_penalty``, ``stop_sequences``)."""
    trace_context: str | None = None
    """The W3C ``traceparent`` of the OpenTelemetry span active on the agent's thread when the call was made (the
    Java sensor reads it in ``onRequest``); None without OpenTelemetry in the JVM."""

    @property
    def is_final(self) -> bool:
        """True when the model answered without requesting a tool (the loop ends after this call)."""
        return not self.tool_calls and self.error is None

    @property
    def usage_reported(self) -> bool:
        """True when the provider reported any token count for this call."""
        return self.total_tokens is not None or self.input_tokens is not None or self.output_tokens is not None

    @property
    def tokens(self) -> int | None:
        """The tokens of this model call: pyguard's one definition, used by the guard's caps, results, replay,
        calibration and the CI gate. ``total_tokens`` as reported; else ``input_tokens + output_tokens``, counting
        those reported (a lower bound when only one was: :attr:`tokens_complete` is then False); else None.

        None means *unknown*: the provider reported no usage for this call. It is never 0, which means the provider
        reported zero tokens. A sum over calls skips unknown ones and says so (:attr:`RunRecord.tokens_partial`)."""
        return token_count(self.total_tokens, self.input_tokens, self.output_tokens)

    @property
    def tokens_complete(self) -> bool:
        """True when :attr:`tokens` is this call's whole count: a total was reported, or both input and output."""
        return self.total_tokens is not None or (self.input_tokens is not None and self.output_tokens is not None)


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
    """True when some model calls reported no usage (or only part of it): the token totals then count only what was
    reported (a lower bound, not the run's total). None totals mean no call reported usage (unknown, never 0)."""
    cost: NonNegative | None = None
    wall_ms: NonNegative | None = None
    evidence: dict = Field(default_factory=dict)
    success_label: Flag | None = None
    """For recordings: the recorded outcome label (success/reward/resolved), None when unknown."""
    censored: Flag = False
    """True when the run was cut off before it finished (it still requested tools at its last call)."""
    answer_source: Literal["model", "wrap_up", "salvaged", "stop_message"] | None = None
    """Where ``answer`` came from: the model's own final answer; the wrap-up, one last model call with no tools after
    a stop (``Guard(on_stop="answer")``; not among ``iterations``, but in the token totals above: what was billed);
    or the last text the model wrote before the run was stopped. None without an answer, and in traces written before
    this field."""
    wrap_up_tokens: Count | None = None
    """The wrap-up call's tokens as its provider reported them, the share of the totals above that it billed (None:
    no wrap-up, or no usage reported). Traces written before 2026-12 left them out of the totals."""
    tool_calls_executed: Count | None = None
    """Tools that actually ran (LangChain4j's after-tool hook, or the loop's own count), beside ``tool_calls``, the
    tools the model requested (a stop keeps the last response's tools from running). None where no hook counted them
    (and in traces written before this field)."""


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

    @property
    def tokens(self) -> int | None:
        """The run's tokens: the footer's count when it has one (:func:`token_count` of its totals), else the sum of
        :attr:`IterationEvent.tokens` over the calls that reported usage. None when nothing reported usage: unknown,
        never 0. A lower bound when :attr:`tokens_partial`."""
        end = self.end
        if end is not None:
            total = token_count(end.total_tokens, end.input_tokens, end.output_tokens)
            if total is not None:
                return total
        return sum_tokens(self.events)

    @property
    def tokens_partial(self) -> bool:
        """True when :attr:`tokens` counts only part of the run: the footer says so, or some model calls reported no
        usage (or only part of it) while others did."""
        if self.end is not None and self.end.tokens_partial:
            return True
        return events_tokens_partial(self.events)


def token_count(total: int | None, input_tokens: int | None, output_tokens: int | None) -> int | None:
    """Tokens from one set of reported counts (a model call's, a footer's): ``total`` when reported, else input +
    output of those reported, else None (nothing reported: unknown, never 0)."""
    if total is not None:
        return total
    if input_tokens is None and output_tokens is None:
        return None
    return (input_tokens or 0) + (output_tokens or 0)


def sum_tokens(events: Sequence[IterationEvent]) -> int | None:
    """The sum of :attr:`IterationEvent.tokens` over the calls that reported usage; None when none did (unknown).
    A lower bound when :func:`events_tokens_partial`."""
    known = [t for t in (e.tokens for e in events) if t is not None]
    return sum(known) if known else None


def events_tokens_partial(events: Sequence[IterationEvent]) -> bool:
    """True when a sum of :attr:`IterationEvent.tokens` over ``events`` is a lower bound: some calls reported usage
    and some did not, or a call reported only part of it (input without output, say)."""
    reported = [e for e in events if e.usage_reported]
    return bool(reported) and (len(reported) < len(events) or not all(e.tokens_complete for e in reported))


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


def traceparent(trace_id: str, span_id: str, sampled: bool = True) -> str:
    """A W3C ``traceparent`` header value (what :attr:`IterationEvent.trace_context` holds)."""
    return f"00-{trace_id}-{span_id}-{'01' if sampled else '00'}"
