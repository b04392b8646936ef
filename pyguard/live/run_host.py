"""What a guarded run needs of its guard (:class:`RunHost`, :class:`ActiveRuns`) and the small names every module of
a run's lifecycle shares: what a stop does (:data:`OnStop`, the wrap-up's :data:`WRAP_UP`), how an agent's end is read
(:data:`Reads`), a verifier, a fresh run id, the task a trace records. Below :mod:`pyguard.live.run_finish` and
:mod:`pyguard.live.run`, which re-exports these names.
"""

from __future__ import annotations

import threading
import uuid
import warnings
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from pyguard.engine import Policy, PolicyConfig

__all__: list[str] = []

Verifier = Callable[[str], bool]

Reads = Literal["bridge", "value"]
"""How :meth:`GuardedRun.drive` reads the agent's end: a pyguard-built agent's ``BridgeResult``, or a value/exception."""

OnStop = Literal["answer", "raise", "end"]
"""What a guarded run does when it is stopped: ``answer`` (one last model call with no tools, :data:`WRAP_UP`, so the
agent still returns an answer; the outcome still says ``stalled``/``expired``), ``raise`` (the agent's call raises
the Java ``GuardStopException``) or ``end`` (no model call: the agent returns the stop message, :data:`STOP_MESSAGE`
filled in; ``answer_source="stop_message"``)."""


class ActiveRuns:
    """The runs of one guard started and not yet finished (thread-safe)."""

    def __init__(self) -> None:
        self._runs: set[Any] = set()
        self._lock = threading.Lock()

    def add(self, run: Any) -> None:
        with self._lock:
            self._runs.add(run)

    def discard(self, run: Any) -> None:
        with self._lock:
            self._runs.discard(run)

    def snapshot(self) -> list[Any]:
        with self._lock:
            return list(self._runs)


class RunHost(Protocol):
    """What a run needs of its guard (:class:`pyguard.live.guard.Guard` is one)."""

    policy: Policy
    config: PolicyConfig
    trace_dir: Path | None
    trace_file_mode: int
    fail_safe_calls: int
    callback_timeout_ms: int
    verifier: Verifier | None
    telemetry: Any
    active: ActiveRuns
    on_stop: OnStop
    """The guard's explicit ``on_stop`` (it replaces the policy's and its task types'); without one the policy's."""


def recorded_task(task: str | Sequence[str]) -> str | None:
    """The task a trace records: the message itself, or a conversation's first user message (the others arrive as
    user observations of the events)."""
    if isinstance(task, str):
        return task
    return next(iter(task), None)


def new_run_id() -> str:
    """A fresh run id: 12 random hexadecimal characters."""
    return uuid.uuid4().hex[:12]


_TOLD_NO_CONVERSATION: weakref.WeakSet[Any] = weakref.WeakSet()
"""The guards that said once that their ``[conversation]`` budgets do not hold for a run outside a conversation."""


def tell_no_conversation(guard: RunHost, run_id: str) -> None:
    """Warn once per guard when its policy sets ``[conversation]`` limits and run ``run_id`` is not a turn of a kept
    conversation (``start_run``, ``Guard.run``, ``Guard.run_streaming``, a run tree): no conversation budget holds for
    it, and nothing else would tell the user so."""
    limits = guard.config.conversation
    if not limits.enabled:
        return
    try:
        if guard in _TOLD_NO_CONVERSATION:
            return
        _TOLD_NO_CONVERSATION.add(guard)
    except TypeError:  # a host that cannot be weakly referenced: said every time
        pass
    named = sorted(limits.model_dump(exclude_none=True, exclude={"tool_limits"}))
    named += ["tool_limits"] if limits.tool_limits else []
    warnings.warn(
        f"[conversation] {', '.join(named)} hold across the chat() calls of an attached agent only (Guard.attach, "
        f"Guard.agent): run {run_id!r} (start_run, Guard.run, Guard.run_streaming or a run tree) is one run, not a "
        "conversation, so no conversation budget holds for it. Attach your ChatModel agent to keep conversations, or "
        "set the per-run limits in [caps] (max_model_calls, max_tokens, tool_limits, ...) for such runs.",
        UserWarning,
        stacklevel=4,
    )
