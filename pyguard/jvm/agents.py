"""Build the three agent styles around a guarded model and run a task: the Python API of the bridge.

Typical use (the JVM must be started first with :func:`pyguard.jvm.start_jvm`)::

    from pyguard.jvm import start_jvm, scripted_model, run_agent
    start_jvm()
    model = scripted_model("logistics_incident", seed=1)
    result = run_agent("aiservices", model, "Where is order 12345?", callback=my_policy)   # -> BridgeResult
    result.status, result.outcome, result.reason, result.stats.model_calls, result.events

``callback`` is any ``Callable[[IterationEvent], Decision | None]`` (an engine ``RunSession.observe``, say). For
finer control build the pieces: :func:`guard_model` (one per run) then :func:`build_agent` and ``agent.run(task)``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Any, Literal, Unpack

from pydantic import BaseModel, ConfigDict

from pyguard.agent_options import AgentKeywords, AgentOptions, agent_options
from pyguard.ending import Ending
from pyguard.errors import ConfigError, RunError
from pyguard.events import IterationEvent, Outcome
from pyguard.jvm._java import java_call, jclass
from pyguard.jvm.bootstrap import check_jvm
from pyguard.jvm.callback import CallbackAdapter, GuardPolicyFn, ResultsFn
from pyguard.jvm.scenarios import ScenarioSource, scenario_json

__all__ = [
    "BridgeResult",
    "BridgeRunStats",
    "GuardStopped",
    "GuardedModel",
    "WrapUpRecord",
    "build_agent",
    "demo_tools",
    "guard_model",
    "run_agent",
    "run_built",
    "scenario_tools",
    "scripted_model",
    "tool_set",
]


def __getattr__(name: str) -> Any:
    """``DEFAULT_MAX_MODEL_CALLS``: the Java fail-safe's default for a run without a policy, read from its one home,
    Java's ``GuardConfig.DEFAULT_MAX_MODEL_CALLS`` (so it needs the JVM started)."""
    if name == "DEFAULT_MAX_MODEL_CALLS":
        return int(jclass("dev.pyguard.bridge.GuardConfig").DEFAULT_MAX_MODEL_CALLS)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class AgentStyle(StrEnum):
    AISERVICES = "aiservices"
    """LangChain4j AiServices with @Tool methods (own cap: maxToolCallingRoundTrips, default 100)."""
    AGENTIC = "agentic"
    """langchain4j-agentic loopBuilder around a tool-using sub-agent (own cap: maxIterations)."""
    EXECUTOR = "executor"
    """pyguard's ExplicitAgentLoop (own cap: maxIterations = model calls)."""


class BridgeRunStats(BaseModel):
    """The Java-side counters of one run: Java's ``RunStats``, read from its one JSON form (``RunStats.toJson``).
    Tokens are not counted in Java: a run's tokens come from its events (:attr:`pyguard.events.RunRecord.tokens`)."""

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
    status: Literal["answered", "failed", "no_text", "not_made"] = "answered"
    """``answered``; ``failed`` (the call raised); ``no_text`` (an empty reply or a tool call only); ``not_made`` (a
    cap was crossed: no model call after it)."""
    error_kind: str | None = None
    """The failure's kind: the exception's Java class, ``no_text`` or ``tool_call_only``."""
    salvaged: bool = False
    """``text`` is the run's last text, not the wrap-up's."""


class GuardStopped(RunError):
    """A guarded run was stopped (by the guard or the Java fail-safe). ``.result`` has the outcome and counts."""

    def __init__(self, result: BridgeResult) -> None:
        super().__init__(
            f"run {result.run_id} stopped ({result.outcome.value if result.outcome else '?'}, rule {result.rule}): {result.reason}"
        )
        self.result = result


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
        collects. :func:`run_built` (given this model) and a :class:`pyguard.guard.GuardedRun` ending do it; call it
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


def scripted_model(source: ScenarioSource, *, seed: int | None = None) -> Any:
    """A Java ``ScriptedChatModel`` playing a scenario (shipped name, JSON path, or dict); ``seed`` overrides its seed."""
    cls = jclass("dev.pyguard.bridge.scripted.ScriptedChatModel")
    jseed = None if seed is None else jclass("java.lang.Long")(int(seed))
    return java_call(cls.fromJson, scenario_json(source), jseed)


def scenario_tools(source: ScenarioSource) -> Any:
    """Fresh tools for one run as the scenario declares them (its ``toolset``): a Java ``ToolSet``."""
    scenario = java_call(jclass("dev.pyguard.bridge.scripted.Scenario").parse, scenario_json(source))
    return jclass("dev.pyguard.bridge.scripted.ScriptedChatModel").toolsFor(scenario)


def demo_tools() -> Any:
    """A fresh ``ToolSet`` of the logistics demo tools (real @Tool methods over fixed data)."""
    ToolSet = jclass("dev.pyguard.bridge.ToolSet")
    return ToolSet.of(jclass("dev.pyguard.bridge.demo.LogisticsTools")())


def tool_set(tools: Any, model: Any = None) -> Any:
    """Normalise ``tools`` to a Java ``ToolSet``.

    None: the scripted model's own scenario tools (fresh), else no tools; a ``LocalServer``: its scenario's tools; ``"logistics"``: the demo tools;
    ``"hazards"``: the bad-input tools; a Java ``ToolSet``; a Java object with @Tool methods; or a list of those.
    """
    ToolSet = jclass("dev.pyguard.bridge.ToolSet")
    if hasattr(tools, "new_tools") and hasattr(tools, "base_url"):  # a LocalServer: its scenario's tools
        return tools.new_tools()
    if tools is None:
        return ToolSet.ownedBy(model)
    if isinstance(tools, str):
        if tools == "logistics":
            return demo_tools()
        if tools == "hazards":
            return ToolSet.of(jclass("dev.pyguard.bridge.demo.HazardTools")())
        raise ConfigError(
            f"tools={tools!r} is unknown; use 'logistics', 'hazards', a Java ToolSet or Java @Tool objects"
        )
    if isinstance(tools, ToolSet):
        return tools
    if isinstance(tools, Iterable) and not hasattr(tools, "getClass"):
        result = ToolSet.empty()
        for t in tools:
            result = result.plus(tool_set(t, model))
        return result
    return java_call(ToolSet.of, tools, what="tools")


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
    a :class:`pyguard.guard.Guard` passes :func:`pyguard.limits.fail_safe_cap` of its policy).
    ``callback=None`` with ``observe_only=False`` is the "never registered" case: every event counts as a callback
    failure and the fail-safe stops the run at ``max_model_calls`` with outcome guard_error. ``observe_only=True``
    senses without acting: no cap, decisions ignored (the callback, if any, still receives every event: for traces).
    ``callback_timeout_ms > 0`` runs the callback on a Java pool thread with that deadline (a late reply is a failure).
    """
    run_id = run_id or uuid.uuid4().hex[:12]
    bridge = _bridge()
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


def _bridge() -> _Bridge:
    global _BRIDGE
    check_jvm()  # a JvmError saying what to do before the JVM starts or after it was shut down
    if _BRIDGE is None:
        _BRIDGE = _Bridge()
    return _BRIDGE


def _positive(n: int, name: str) -> int:
    if not isinstance(n, int) or n < 1:
        raise ConfigError(f"{name}={n!r} must be a positive integer")
    return n


BUILD_OPTIONS = (
    "tools",
    "max_loop_iterations",
    "max_tool_calling_round_trips",
    "exit_when_answer_contains",
    "system_message",
)
"""The agent options :func:`build_agent` reads (the run id and task type are the guarded model's:
:func:`guard_model`)."""


def build_agent(
    style: AgentStyle | str,
    model: GuardedModel | Any,
    *,
    options: AgentOptions | None = None,
    per_run_memory: bool = False,
    **keywords: Unpack[AgentKeywords],
) -> Any:
    """A Java ``GuardedAgent`` of ``style`` around ``model`` (a :class:`GuardedModel` or any Java ChatModel).

    ``options`` (:class:`pyguard.AgentOptions`) or the same as keywords (a keyword wins): the tools, the system
    message and the agent's own loop caps (:mod:`pyguard.limits`): ``max_loop_iterations`` is the agentic loop's
    iterations / the explicit loop's model calls; ``max_tool_calling_round_trips`` AiServices' (and the agentic
    sub-agent's). ``exit_when_answer_contains`` (agentic only): None exits on the first answer, "" never exits early.
    ``per_run_memory`` (aiservices): a chat memory per run, for an agent built once for many runs.
    """
    options = agent_options("build_agent", options, keywords, uses=BUILD_OPTIONS)
    try:
        style = AgentStyle(style)
    except ValueError:
        raise ConfigError(f"agent style {style!r} is unknown; use one of {[s.value for s in AgentStyle]}") from None
    if isinstance(model, GuardedModel):
        model.check_not_released("build_agent")
    java_model = model.java if isinstance(model, GuardedModel) else model
    tools = options.tools
    ts = None if tools is None else tool_set(tools, java_model)  # None: the model's own tools, found in Java
    return java_call(
        _bridge().Agents.build,
        style.value,
        java_model,
        ts,
        options.loop_iterations(),
        options.round_trips(),
        options.exit_when_answer_contains,
        options.system_message,
        bool(per_run_memory),
        what="build_agent",
    )


def run_built(agent: Any, task: str | Sequence[str], guarded: GuardedModel | None = None) -> BridgeResult:
    """Run a built agent once and read its result (and the Python side's events and errors); ``guarded``, the run's
    guarded model, is released after it (:meth:`GuardedModel.release`: one guarded model per run).

    ``task`` is one user message, or a conversation: a list of user messages, each answered (one ``chat()`` call, one
    chat memory) before the next; the aiservices style only. The result's answer is the last one."""
    if guarded is not None:
        guarded.check_not_released("run_built")
    if isinstance(task, str):
        raw = json.loads(str(agent.runJson(task)))
    else:
        raw = json.loads(str(agent.runTurnsJson(_user_messages(task, str(agent.style())))))
    cb = guarded.callback if guarded is not None else None
    if cb is not None:
        cb.release()  # the run is over: its Python state need not wait for the JVM's collector (GuardedModel.release)
        if cb.interrupted:
            raise KeyboardInterrupt  # Ctrl-C arrived inside the callback: the run was cancelled, now let the caller know
    return BridgeResult(
        style=raw["style"],
        run_id=raw["run_id"],
        status=raw["status"],
        answer=raw["answer"],
        outcome=raw["outcome"],
        reason=raw["reason"],
        rule=raw["rule"],
        fail_safe=raw["fail_safe"],
        error=raw["error"],
        error_type=raw["error_type"],
        iterations=raw["iterations"],
        wall_ms=raw["wall_ms"],
        stats=None if raw["stats"] is None else BridgeRunStats.model_validate(raw["stats"]),
        events=tuple(cb.events) if cb else (),
        callback_errors=tuple(cb.errors) if cb else (),
    )


def _user_messages(task: Sequence[str], style: str) -> Any:
    messages = list(task)
    if not messages or not all(isinstance(m, str) for m in messages):
        raise ConfigError(f"task must be a string or a non-empty list of user messages (strings), got {task!r:.120}")
    if len(messages) > 1 and style != AgentStyle.AISERVICES.value:
        raise ConfigError(f"a conversation of {len(messages)} user messages needs the aiservices style, not {style!r}")
    out = jclass("java.util.ArrayList")()
    for m in messages:
        out.add(m)
    return out


def run_agent(
    style: AgentStyle | str,
    model: Any,
    task: str | Sequence[str],
    callback: GuardPolicyFn | None = None,
    *,
    guard: bool = True,
    max_model_calls: int | None = None,
    callback_timeout_ms: int = 0,
    options: AgentOptions | None = None,
    **keywords: Unpack[AgentKeywords],
) -> BridgeResult:
    """Guard ``model`` for one run, build the ``style`` agent with ``options`` (:class:`pyguard.AgentOptions`, or the
    same as keywords: tools, run id, task type, the agent's own caps, ...), run ``task``; never raises for the run.

    ``guard=False`` is an unguarded baseline that still counts calls and tokens (observe-only: LangChain4j's own
    caps only; ``callback`` then only records events).
    """
    options = agent_options("run_agent", options, keywords)
    guarded = guard_model(
        model,
        callback,
        run_id=options.run_id,
        task_type=options.task_type,
        max_model_calls=max_model_calls,
        callback_timeout_ms=callback_timeout_ms,
        observe_only=not guard,
    )
    agent = build_agent(style, guarded, options=options)
    return run_built(agent, task, guarded)
