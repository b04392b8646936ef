"""What a run of the bridge reports: :class:`BridgeResult` (how the agent's loop ended, its answer, its events), the
Java-side counters (:class:`BridgeRunStats`), the wrap-up of a stopped run (:class:`WrapUpRecord`) and
:class:`GuardStopped`; the agent styles they name (:class:`AgentStyle`). Re-exported by :mod:`pyguard.jvm.agents`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict

from pyguard.base.ending import Ending
from pyguard.base.errors import RunError
from pyguard.base.events import IterationEvent, Outcome

__all__: list[str] = []


class AgentStyle(StrEnum):
    AISERVICES = "aiservices"
    """LangChain4j AiServices with @Tool methods (own cap: maxToolCallingRoundTrips, default 100)."""
    AGENTIC = "agentic"
    """langchain4j-agentic loopBuilder around a tool-using sub-agent (own cap: maxIterations)."""
    EXECUTOR = "executor"
    """pyguard's ExplicitAgentLoop (own cap: maxIterations = model calls)."""


class BridgeRunStats(BaseModel):
    """The Java-side counters of one run: Java's ``RunStats``, read from its one JSON form (``RunStats.toJson``).
    Tokens are not counted in Java: a run's tokens come from its events (:attr:`pyguard.base.events.RunRecord.tokens`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model_calls: int
    events: int
    events_delivered: int
    tool_calls: int
    """Tool calls the model requested."""
    tool_executions: int
    """Tools actually run (a stop keeps the tools of the last response from running)."""
    callback_failures: int = 0
    last_callback_error: str | None = None
    last_text: str | None = None
    """The last non-blank AI text seen: a salvageable answer for a stopped run."""


class BridgeResult(BaseModel):
    """What one run came to. ``status``: how the agent's loop ended (:class:`pyguard.jvm.ending.Ending`: answered,
    stopped, failed, exhausted: the loop's own cap, no answer); :func:`pyguard.jvm.ending.ending_of_result` reads it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    style: AgentStyle
    run_id: str | None
    status: Ending
    answer: str | None = None
    outcome: Outcome | None = None
    """Set for stopped runs (the guard's, the cancellation's or the fail-safe's outcome); None otherwise."""
    reason: str | None = None
    rule: str | None = None
    fail_safe: bool = False
    """True when the Java fail-safe cap, not the guard's decision, stopped the run."""
    error: str | None = None
    """For failed runs: the Java exception chain, e.g. 'java.lang.RuntimeException: ... <- caused by ...'."""
    error_type: str | None = None
    iterations: int = 0
    wall_ms: float = 0.0
    stats: BridgeRunStats | None = None
    events: tuple[IterationEvent, ...] = ()
    """Every event Python received, in order (empty without a callback)."""
    callback_errors: tuple[str, ...] = ()
    """Python exceptions raised inside the callback ('Type: message'); each also counts in stats.callback_failures."""

    @property
    def answered(self) -> bool:
        return self.status is Ending.ANSWERED

    def raise_for_status(self) -> BridgeResult:
        """Return self if the run answered; raise :class:`GuardStopped` if stopped, :class:`RunError` otherwise."""
        if self.status is Ending.ANSWERED:
            return self
        if self.status is Ending.STOPPED:
            raise GuardStopped(self)
        raise RunError(
            f"run {self.run_id} ({self.style.value}) {self.status.value}: {self.error or self.reason or 'no answer'}"
        )


class WrapUpRecord(BaseModel):
    """The wrap-up of a stopped run (Java's ``WrapUp``): one last model call with no tools, after a stop."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    outcome: str
    """The stop's outcome (``stalled``, ``expired``, ...)."""
    reason: str | None = None
    rule: str | None = None
    fail_safe: bool = False
    text: str | None = None
    """The answer the agent got: the model's, or the run's last text (``salvaged``); None when there was none."""
    error: str | None = None
    """Why the wrap-up gave no answer of its own (its call failed, or it returned no text)."""
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    status: Literal["answered", "failed", "no_text", "not_made", "stop_message"] = "answered"
    """``answered``; ``failed`` (the call raised); ``no_text`` (an empty reply or a tool call only); ``not_made`` (a
    cap was crossed: no model call after it); ``stop_message`` (``on_stop="end"``: the stop message, no model call)."""
    error_kind: str | None = None
    """The failure's kind: the exception's Java class, ``no_text`` or ``tool_call_only``."""
    salvaged: bool = False
    """``text`` is the run's last text, not the wrap-up's."""


class GuardStopped(RunError):
    """Python's error for a stopped run of the low-level bridge: raised only by :meth:`BridgeResult.raise_for_status`
    (a :class:`BridgeResult` comes from :func:`pyguard.jvm.run_agent` / :func:`pyguard.jvm.run_built`), when you ask
    for it. ``.result`` has the outcome and counts. It is not what a guarded agent's call raises: under
    ``on_stop="raise"`` that is Java's ``dev.pyguard.bridge.GuardStopException`` (``pyguard.jvm.GuardStopException``
    from Python), and ``Guard.run`` returns a ``RunResult`` whose ``outcome`` says how the run ended."""

    def __init__(self, result: BridgeResult) -> None:
        outcome = result.outcome.value if result.outcome else "?"
        by = "the Java fail-safe cap" if result.fail_safe else "the guard"
        super().__init__(
            f"run {result.run_id} was stopped by {by} ({outcome}, rule {result.rule}): {result.reason}. Raised by "
            "BridgeResult.raise_for_status(): the run's outcome and counts are on this error's .result; to handle a "
            'stop without an exception, check result.status == "stopped" instead of calling raise_for_status()'
        )
        self.result = result
