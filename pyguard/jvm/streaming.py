"""Streaming models and AiServices agents whose conversation pyguard keeps (the JVM side of both).

::

    from pyguard.jvm.streaming import scripted_streaming_model, guard_streaming_model, conversation_agent
    model = scripted_streaming_model("logistics_incident")           # LangChain4j StreamingChatModel, scripted
    guarded = guard_streaming_model(model, policy_fn, run_id="r1")   # GuardedStreamingChatModel, one run
    agent = conversation_agent(guarded, AgentOptions(), on_partial=print)  # AiServices returning a TokenStream
    result = run_built(agent, "Where is order 12345?", guarded)      # a BridgeResult, as for any agent
    agent.memoryJson()                                               # the conversation so far (LangChain4j JSON)

A guarded streaming model gives one event per completed model call (at ``onCompleteResponse``, with the usage);
reflections and stops apply before the next call; a stop mid-stream ends the call in flight with ``onError``, so a
half-written answer never completes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyguard.base.agent_options import AgentOptions
from pyguard.base.errors import ConfigError
from pyguard.jvm._java import java_call, jclass
from pyguard.jvm.agents import GuardedModel, tool_set
from pyguard.jvm.callback import CallbackAdapter, GuardPolicyFn, ResultsFn
from pyguard.jvm.scenarios import ScenarioSource, scenario_json

__all__: list[str] = []

PartialFn = Callable[[str], None]
"""Receives each partial response (a chunk of the model's text) as it streams."""


def scripted_streaming_model(source: ScenarioSource, *, seed: int | None = None) -> Any:
    """A Java ``ScriptedStreamingChatModel`` (LangChain4j ``StreamingChatModel``) playing a scenario: the replies of
    :func:`pyguard.jvm.scripted_model`, each text streamed in chunks, then the complete response with its usage."""
    cls = jclass("dev.pyguard.bridge.scripted.ScriptedStreamingChatModel")
    jseed = None if seed is None else jclass("java.lang.Long")(int(seed))
    return java_call(cls.fromJson, scenario_json(source), jseed, what="scripted_streaming_model")


def openai_streaming_chat_model(
    base_url: str, model_name: str = "scripted", *, timeout_ms: int = 10_000, api_key: str | None = None
) -> Any:
    """LangChain4j's real ``OpenAiStreamingChatModel`` for ``base_url`` (server-sent events), with a timeout."""
    cls = jclass("dev.pyguard.bridge.server.OpenAiClients")
    return java_call(
        cls.streamingChatModel, base_url, model_name, int(timeout_ms), api_key, what="openai_streaming_chat_model"
    )


def is_streaming_model(model: Any) -> bool:
    """True for a Java LangChain4j ``StreamingChatModel``."""
    return isinstance(model, jclass("dev.langchain4j.model.chat.StreamingChatModel"))


def guard_streaming_model(
    model: Any,
    callback: GuardPolicyFn | None,
    *,
    run_id: str,
    task_type: str | None = None,
    max_model_calls: int | None = None,
    callback_timeout_ms: int = 0,
    keep_events: bool = True,
    results_fn: ResultsFn | None = None,
) -> GuardedModel:
    """Wrap a Java ``StreamingChatModel`` for one run: a :class:`GuardedModel` whose ``.java`` is a
    ``GuardedStreamingChatModel`` (the same guard, sensor and fail-safe as :func:`pyguard.jvm.guard_model`)."""
    if not is_streaming_model(model):
        raise ConfigError(
            "model must be a Java LangChain4j StreamingChatModel (scripted_streaming_model(...), "
            f"openai_streaming_chat_model(...) or your own), got {type(model).__name__}"
        )
    if max_model_calls is not None and (not isinstance(max_model_calls, int) or max_model_calls < 1):
        raise ConfigError(f"max_model_calls={max_model_calls!r} must be a positive integer (or None: Java's default)")
    if callback_timeout_ms < 0:
        raise ConfigError(f"callback_timeout_ms={callback_timeout_ms} must be 0 (no deadline) or positive")
    adapter = (
        CallbackAdapter(callback, keep_events=keep_events, results_fn=results_fn) if callback is not None else None
    )
    cls = jclass("dev.pyguard.bridge.GuardedStreamingChatModel")
    java = java_call(  # one call into Java; max_model_calls None (0): GuardConfig.DEFAULT_MAX_MODEL_CALLS, its one home
        cls.create,
        model,
        run_id,
        task_type,
        0 if max_model_calls is None else int(max_model_calls),
        int(callback_timeout_ms),
        None if adapter is None else adapter.java(),
        what="guard_streaming_model",
    )
    return GuardedModel(java, adapter, run_id)


def conversation_agent(
    model: GuardedModel | Any,
    options: AgentOptions,
    *,
    memory_json: str | None = None,
    on_partial: PartialFn | None = None,
) -> Any:
    """A Java ``ConversationAgent``: LangChain4j AiServices around ``model`` (blocking for a ``ChatModel``, a
    ``TokenStream`` for a ``StreamingChatModel``) with ``options``' tools, system message and round trips, its chat
    memory started from ``memory_json`` (a conversation :meth:`memoryJson` wrote) and readable after the run.
    ``on_partial`` (streaming only) gets each text chunk."""
    java_model = model.java if isinstance(model, GuardedModel) else model
    agents = jclass("dev.pyguard.bridge.ConversationAgents")
    # tools None: the model's own, found in Java (ToolSet.ownedBy): the agent is one call into Java
    ts = None if options.tools is None else tool_set(options.tools, java_model)
    if is_streaming_model(java_model):
        sink = None if on_partial is None else _consumer_class()(on_partial)
        return java_call(
            agents.streaming,
            java_model,
            ts,
            options.round_trips(),
            options.system_message,
            memory_json,
            sink,
            what="conversation_agent",
        )
    if on_partial is not None:
        raise ConfigError("on_partial needs a streaming model (a LangChain4j StreamingChatModel)")
    return java_call(
        agents.blocking,
        java_model,
        ts,
        options.round_trips(),
        options.system_message,
        memory_json,
        what="conversation_agent",
    )


_CONSUMER: Any = None


def _consumer_class() -> Any:
    """A ``java.util.function.Consumer<String>`` calling a Python function (declared once, after the JVM starts)."""
    global _CONSUMER
    if _CONSUMER is None:
        from jpype import JImplements, JOverride

        @JImplements("java.util.function.Consumer")
        class _PartialSink:
            def __init__(self, fn: PartialFn) -> None:
                self.fn = fn

            @JOverride
            def accept(self, token: Any) -> None:
                self.fn(str(token))

        _CONSUMER = _PartialSink
    return _CONSUMER
