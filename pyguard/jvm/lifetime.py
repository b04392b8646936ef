"""The JVM side of a guard attached to an agent for its lifetime: Java's ``AgentGuardedChatModel`` and the Python
object that opens its runs (``AgentGuardedChatModel.Runs``, implemented here with JPype).

:class:`pyguard.live.agent_guard.AgentGuard` is the API; this module only crosses into Java.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyguard.base.errors import ConfigError
from pyguard.jvm._java import java_call, jclass
from pyguard.jvm.bootstrap import check_jvm

__all__: list[str] = []

OpenRun = Callable[[str | None], Any]
"""``user message -> the Java GuardedChatModel of a new run``."""
EndRun = Callable[[str, "str | None", "BaseException | None"], Any]
"""``(run id, answer, error) -> Java GuardOutcome or None``: an implicit run ended; how it ended goes back to Java."""


def agent_guarded_model(model: Any, open_run: OpenRun, end_run: EndRun) -> Any:
    """A Java ``AgentGuardedChatModel`` around ``model`` (any LangChain4j ``ChatModel``) whose runs ``open_run`` opens
    and ``end_run`` hears the end of."""
    check_jvm()
    if isinstance(model, jclass("dev.langchain4j.model.chat.StreamingChatModel")):
        raise ConfigError(
            f"attach takes a ChatModel, got the StreamingChatModel {type(model).__name__}: a streaming agent cannot be "
            "attached; guard each streamed run with guard.start_run() and run.wrap_streaming(model) (docs/streaming.md"
            "; [caps] hold per run, [conversation] budgets do not), or attach a blocking ChatModel"
        )
    if not isinstance(model, jclass("dev.langchain4j.model.chat.ChatModel")):
        raise ConfigError(
            "model must be a Java LangChain4j ChatModel (scripted_model(...), openai_chat_model(...) or your own), "
            f"got {type(model).__name__}"
        )
    cls = jclass("dev.pyguard.bridge.AgentGuardedChatModel")
    return java_call(cls, model, _runs_class()(open_run, end_run), what="AgentGuard")


_RUNS: Any = None


def _runs_class() -> Any:
    global _RUNS
    if _RUNS is None:
        from jpype import JImplements, JOverride

        @JImplements("dev.pyguard.bridge.AgentGuardedChatModel$Runs")
        class _Runs:
            def __init__(self, open_run: OpenRun, end_run: EndRun) -> None:
                self.open_run = open_run
                self.end_run = end_run

            @JOverride
            def open(self, userMessage: Any) -> Any:  # noqa: N803 - Java name
                try:
                    return self.open_run(None if userMessage is None else str(userMessage))
                except Exception as e:  # a Java exception naming the Python one (the model call fails, never unguarded)
                    raise jclass("java.lang.IllegalStateException")(
                        f"pyguard could not open a guarded run for this user turn: {type(e).__name__}: {e}"
                    ) from None

            @JOverride
            def ended(self, runId: Any, answer: Any, error: Any) -> Any:  # noqa: N803 - Java names
                return self.end_run(str(runId), None if answer is None else str(answer), error)

        _RUNS = _Runs
    return _RUNS
