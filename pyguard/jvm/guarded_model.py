"""One run's guarded model (:class:`GuardedModel`: the Java ``GuardedChatModel`` and its callback adapter) and
:func:`guard_model`, which wraps any Java ``ChatModel`` for one run; re-exported by :mod:`pyguard.jvm.agents`.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from pyguard.base.errors import ConfigError, RunError
from pyguard.base.events import Outcome
from pyguard.jvm._java import java_call, jclass
from pyguard.jvm.bootstrap import check_jvm
from pyguard.jvm.bridge_result import BridgeRunStats, WrapUpRecord
from pyguard.jvm.callback import CallbackAdapter, GuardPolicyFn, ResultsFn

__all__: list[str] = []


REUSED_AFTER_RUN = (
    "pyguard: this guarded model served run {run_id!r}, which has ended; an agent built around run.wrap(model) serves"
    " one run. To guard an agent across calls, wrap the model once with guard.attach(model) and build the agent"
    " around its .model (every chat() call is then a guarded run of its own)"
)
"""What a model call through a guarded model whose run has ended raises (Java ``IllegalStateException``)."""


class GuardedModel:
    """One run's ``GuardedChatModel`` (``.java``) and its callback adapter (``.callback``, None if unregistered)."""

    def __init__(self, java: Any, callback: CallbackAdapter | None, run_id: str) -> None:
        self.java = java
        self.callback = callback
        self.run_id = run_id

    def release(self) -> None:
        """The run has ended: free its Python state now (:meth:`CallbackAdapter.release`), not when the JVM next
        collects. :func:`run_built` (given this model) and a :class:`pyguard.live.guard.GuardedRun` ending do it; call it
        yourself when you run an agent of your own on ``.java``. A later model call through it raises a Java
        ``IllegalStateException`` saying :data:`REUSED_AFTER_RUN` (a guarded model serves one run: never unguarded)."""
        if self.callback is not None:
            self.callback.release()
        actuator = self.java.actuator() if hasattr(self.java, "actuator") else self.java  # a streaming model's actuator
        actuator.close(REUSED_AFTER_RUN.format(run_id=self.run_id))

    def check_not_released(self, what: str) -> None:
        """Raise :class:`RunError` when this guarded model's run is over: reusing it would run unguarded (every event
        a callback failure, only the Java fail-safe cap left)."""
        if self.callback is not None and self.callback.released:
            raise RunError(
                f"{what}: the guarded model of run {self.run_id!r} was released when that run ended (a guarded model"
                " serves one run); call guard_model(...) again on the underlying model for a new run"
            )

    def answer_on_stop(self, instruction: str | None, round_trips: int | None = None) -> None:
        """Answer a stop with a wrap-up (one last model call with no tools and ``instruction``; ``{reason}`` in it is
        the stop's reason) instead of an exception; ``round_trips``: the agent's own cap on tool-calling round trips
        per user turn, whose end gets the same wrap-up (``instruction`` None: every stop throws, and the agent's cap
        ends its turn with the guard's exception). A streaming model's stop still throws (no wrap-up)."""
        if hasattr(self.java, "answerOnStop"):
            self.java.answerOnStop(instruction, int(round_trips or 0))

    def end_on_stop(self, template: str, round_trips: int | None = None) -> None:
        """End a stop without a model call (``on_stop="end"``): where :meth:`answer_on_stop` would make the wrap-up
        call, the agent gets ``template`` filled in (``{outcome}``, ``{rule}``, ``{reason}``, ``{found}``: the run's
        last tool result) as its final answer. A streaming model's stop still throws."""
        if hasattr(self.java, "endOnStop"):
            self.java.endOnStop(template, int(round_trips or 0))

    def blocked_tools(self) -> dict[str, int]:
        """The calls a tool limit kept from running, by tool."""
        if not hasattr(self.java, "toolLimits"):
            return {}
        return {str(k): int(v) for k, v in json.loads(str(self.java.toolLimits().blockedJson())).items()}

    def tool_limit_would_stop(self) -> dict[str, Any] | None:
        """In observe or reflect mode: the stop a tool limit with exit ``end``/``error`` would have made (``iteration``,
        ``rule``, ``reason``, ``exit``), or None."""
        if not hasattr(self.java, "toolLimits"):
            return None
        raw = self.java.toolLimits().wouldStopJson()
        return None if raw is None else dict(json.loads(str(raw)))

    def wrap_up(self) -> WrapUpRecord | None:
        """The wrap-up made during the run (the agent got its answer), or None."""
        raw = self.java.wrapUpJson() if hasattr(self.java, "wrapUpJson") else None
        return None if raw is None else WrapUpRecord.model_validate_json(str(raw))

    def wrap_up_after(self, instruction: str, outcome: str, reason: str, rule: str) -> WrapUpRecord | None:
        """The wrap-up after the agent's loop ended without an answer (its own cap, or a stop it raised), on the last
        request and response; None when there was no model call to go on from (or a streaming model)."""
        if not hasattr(self.java, "wrapUpAfter"):
            return None
        raw = self.java.wrapUpAfter(instruction, outcome, reason, rule)
        return None if raw is None else WrapUpRecord.model_validate_json(str(raw))

    def stats(self) -> BridgeRunStats:
        """The run's Java counters now."""
        return BridgeRunStats.model_validate_json(str(self.java.stats().toJson()))

    def before_tool_execution(self) -> Any:
        """The guard's tool hook as a Java ``Consumer<dev.langchain4j.service.tool.BeforeToolExecution>``: give it to
        your AiServices builder's ``beforeToolExecution(...)`` so a stop keeps the last response's tools from running."""
        return self.java.beforeToolExecutionHook()

    def after_tool_execution(self) -> Any:
        """A Java ``Consumer<dev.langchain4j.service.tool.ToolExecution>`` that counts executed tools (``afterToolExecution``)."""
        return self.java.afterToolExecutionHook()

    def wraps(self, model: Any) -> bool:
        """True when this guarded model wraps ``model`` (the same Java object)."""
        return bool(self.java.delegate() == model)

    def claim(self, index: int) -> bool:
        """True when Java will apply the decision about event ``index`` (always without a deadline; with one, only
        if it has not given up on that event: see ``GuardSensor.claim``)."""
        return bool(self.java.sensor().claim(index))

    def missed_deadline_at(self) -> int:
        """The model call whose guard decision missed the callback deadline (Java gave the run's guard up and stops the
        run before its next model call), or 0 while none did: see ``GuardSensor.missedDeadlineAt``."""
        return int(self.java.sensor().missedDeadlineAt())

    def request_stop(
        self, outcome: Outcome | str = Outcome.CANCELLED, reason: str = "cancelled", rule: str | None = "cancel"
    ) -> None:
        """End the run from outside (any thread): the next model call or tool execution stops it with ``outcome``."""
        value = Outcome(outcome).value
        self.java.requestStop(value, reason, rule)


def guard_model(
    model: Any,
    callback: GuardPolicyFn | None,
    *,
    run_id: str | None = None,
    task_type: str | None = None,
    max_model_calls: int | None = None,
    callback_timeout_ms: int = 0,
    observe_only: bool = False,
    keep_events: bool = True,
    results_fn: ResultsFn | None = None,
) -> GuardedModel:
    """Wrap any Java ``ChatModel`` for one run.

    ``results_fn(index, observations)``: judges the tool results of model call ``index`` before the next call is sent
    (:class:`pyguard.jvm.callback.CallbackAdapter`); None: they are judged with the next call's event.

    ``max_model_calls``: the Java fail-safe cap per user turn (None: Java's ``GuardConfig.DEFAULT_MAX_MODEL_CALLS``;
    a :class:`pyguard.live.guard.Guard` passes :func:`pyguard.base.limits.fail_safe_cap` of its policy).
    ``callback=None`` with ``observe_only=False`` is the "never registered" case: every event counts as a callback
    failure and the fail-safe stops the run at ``max_model_calls`` with outcome guard_error. ``observe_only=True``
    senses without acting: no cap, decisions ignored (the callback, if any, still receives every event: for traces).
    ``callback_timeout_ms > 0`` runs the callback on a Java pool thread with that deadline (a late reply is a failure).
    """
    run_id = run_id or uuid.uuid4().hex[:12]
    bridge = bridge_classes()
    if not isinstance(model, bridge.ChatModel):
        raise ConfigError(
            f"model must be a Java LangChain4j ChatModel (scripted_model(...), openai_chat_model(...) or your own), "
            f"got {type(model).__name__}"
        )
    cap = 0 if observe_only or max_model_calls is None else _positive(max_model_calls, "max_model_calls")
    if callback_timeout_ms < 0:
        raise ConfigError(f"callback_timeout_ms={callback_timeout_ms} must be 0 (no deadline) or positive")
    adapter = None
    if callback is not None:
        fn = callback if not observe_only else (lambda e, _cb=callback: (_cb(e), None)[1])
        adapter = CallbackAdapter(fn, keep_events=keep_events, results_fn=None if observe_only else results_fn)
    # one crossing into Java for the whole set-up (each call into Java gives the GIL up and waits to take it back)
    java = java_call(
        bridge.Guarded.create,
        model,
        run_id,
        task_type,
        cap,
        int(callback_timeout_ms),
        bool(observe_only),
        None if adapter is None else adapter.java(),
        what="guard_model",
    )
    return GuardedModel(java, adapter, run_id)


class _Bridge:
    """The Java classes a run's set-up uses, looked up once per JVM (``jclass`` checks the JVM at every call)."""

    def __init__(self) -> None:
        self.ChatModel = jclass("dev.langchain4j.model.chat.ChatModel")
        self.Guarded = jclass("dev.pyguard.bridge.GuardedChatModel")
        self.Agents = jclass("dev.pyguard.bridge.Agents")


_BRIDGE: _Bridge | None = None


def bridge_classes() -> _Bridge:
    global _BRIDGE
    check_jvm()  # a JvmError saying what to do before the JVM starts or after it was shut down
    if _BRIDGE is None:
        _BRIDGE = _Bridge()
    return _BRIDGE


def _positive(n: int, name: str) -> int:
    if not isinstance(n, int) or n < 1:
        raise ConfigError(f"{name}={n!r} must be a positive integer")
    return n
