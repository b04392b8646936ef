"""The local OpenAI-compatible server (loopback, ephemeral port) and LangChain4j's real ``OpenAiChatModel`` for it.

::

    with start_openai_server("logistics_incident", fault="omit_usage") as server:
        model = server.chat_model()                       # OpenAiChatModel(baseUrl=server.base_url)
        result = run_agent("aiservices", model, "Where is 12345?", callback=policy, tools=server)

Token usage reaches the sensor through the HTTP ``usage`` field, as with a hosted provider. Faults
(``omit_usage``, ``http_500``, ``http_429``, ``malformed_json``) apply from the ``fault_from``-th request on; the client
has a timeout and ``max_retries=0`` by default, so each gives a clear outcome and never a hang.
"""

from __future__ import annotations

from typing import Any, Literal

from pyguard.base.errors import ConfigError
from pyguard.jvm._java import java_call, jclass
from pyguard.jvm.scenarios import ScenarioSource, load_scenario, scenario_json

__all__: list[str] = []

Fault = Literal["none", "omit_usage", "http_500", "http_429", "malformed_json"]
_FAULTS = ("none", "omit_usage", "http_500", "http_429", "malformed_json")


class LocalServer:
    """A running local server (``.java`` is the Java ``LocalOpenAiServer``). Stop it with :meth:`stop` or ``with``."""

    def __init__(self, java: Any, scenario_name: str) -> None:
        self.java = java
        self.scenario_name = scenario_name

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: what ``OpenAiChatModel.builder().baseUrl(...)`` takes."""
        return str(self.java.baseUrl())

    @property
    def port(self) -> int:
        return int(self.java.port())

    @property
    def requests(self) -> int:
        """HTTP requests received so far (faulty answers included)."""
        return int(self.java.requests())

    @property
    def completions(self) -> int:
        """Requests answered with a scripted completion."""
        return int(self.java.completions())

    def new_tools(self) -> Any:
        """Fresh tools for one run, as the served scenario declares them (a Java ``ToolSet``)."""
        return jclass("dev.pyguard.bridge.scripted.ScriptedChatModel").toolsFor(self.java.scenario())

    def chat_model(self, *, model_name: str | None = None, timeout_ms: int = 10_000, max_retries: int = 0) -> Any:
        return openai_chat_model(
            self.base_url, model_name or self.scenario_name, timeout_ms=timeout_ms, max_retries=max_retries
        )

    def set_fault(self, fault: Fault, fault_from: int = 1) -> None:
        _check_fault(fault)
        java_call(self.java.setFault, fault, int(fault_from), what="set_fault")

    def stop(self) -> None:
        self.java.stop()

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"LocalServer({self.scenario_name!r}, base_url={self.base_url!r})"


def _check_fault(fault: str | None) -> None:
    if fault is not None and fault not in _FAULTS:
        raise ConfigError(f"fault={fault!r} is unknown; use one of {', '.join(_FAULTS)}")


def start_openai_server(
    scenario: ScenarioSource,
    *,
    seed: int | None = None,
    port: int = 0,
    fault: Fault | None = None,
    fault_from: int = 1,
) -> LocalServer:
    """Start a local OpenAI-compatible server on 127.0.0.1 serving ``scenario`` (port 0 = ephemeral)."""
    _check_fault(fault)
    if fault_from < 1:
        raise ConfigError(f"fault_from={fault_from} must be >= 1 (the first faulty request, 1-based)")
    name = str(load_scenario(scenario).get("name", "scenario"))
    cls = jclass("dev.pyguard.bridge.server.LocalOpenAiServer")
    jseed = None if seed is None else jclass("java.lang.Long")(int(seed))
    java = java_call(
        cls.start, scenario_json(scenario), jseed, int(port), fault, int(fault_from), what="start_openai_server"
    )
    return LocalServer(java, name)


def openai_chat_model(
    base_url: str,
    model_name: str = "scripted",
    *,
    timeout_ms: int = 10_000,
    max_retries: int = 0,
    api_key: str | None = None,
) -> Any:
    """LangChain4j's real ``OpenAiChatModel`` for ``base_url``, with a timeout and bounded retries (never hangs)."""
    cls = jclass("dev.pyguard.bridge.server.OpenAiClients")
    return java_call(
        cls.chatModel, base_url, model_name, int(timeout_ms), int(max_retries), api_key, what="openai_chat_model"
    )
