"""``pyguard_live_model``: a real model server in a container (Ollama, through testcontainers), or a clear skip.

Needs the ``containers`` extra (``pip install 'pyguard[containers]'``, which brings testcontainers and the Docker SDK)
and a reachable Docker engine (the local socket, or ``DOCKER_HOST``). Where either is missing, every test using the
fixture is skipped with the reason. The server is started once per session (per xdist worker), pulls the model
(``--pyguard-live-model``, default ``qwen2.5:0.5b``) and is stopped at the end of the session.

Ollama serves an OpenAI-compatible API under ``/v1``, so the agent reaches it with LangChain4j's ``OpenAiChatModel``:
``pyguard_live_model.chat_model()`` builds one (it needs the JVM: ask for ``pyguard_jvm`` too).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from pyguard.base.errors import RunError
from pyguard.pytest_plugin.fixtures import openai_chat_model

__all__: list[str] = []


class LiveModel(BaseModel):
    """Where the live model server listens, and which model it serves."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str
    """The server's own endpoint, e.g. ``http://localhost:32768`` (Ollama's native API)."""
    model_name: str
    image: str

    @property
    def openai_base_url(self) -> str:
        """The OpenAI-compatible endpoint, for ``OpenAiChatModel.builder().baseUrl(...)``."""
        return self.base_url.rstrip("/") + "/v1"

    def chat_model(self, **options: Any) -> Any:
        """A LangChain4j ``OpenAiChatModel`` for this server (``timeout_ms`` default 120 s: a small CPU model is slow).

        Needs the JVM: ask for ``pyguard_jvm`` too. Options are those of :func:`pyguard.jvm.openai_chat_model`."""

        return openai_chat_model(self.openai_base_url, self.model_name, **{"timeout_ms": 120_000, **options})


def docker_unavailable_reason(timeout: float = 3.0) -> str | None:
    """Why no container can be started here (None when a Docker engine answers)."""
    try:
        import docker  # noqa: F401  - comes with testcontainers
        import testcontainers  # noqa: F401
    except ImportError as exc:
        return (
            f"pyguard_live_model needs testcontainers ({exc.name} is not installed): pip install 'pyguard[containers]'"
        )
    where = os.environ.get("DOCKER_HOST") or "the default socket unix:///var/run/docker.sock"
    client = None
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except Exception as exc:  # the Docker SDK raises DockerException, requests' ConnectionError, ...
        detail = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        return (
            f"no Docker engine reachable at {where} ({detail}); pyguard_live_model needs Docker: "
            "start a Docker engine or set DOCKER_HOST"
        )
    finally:
        if client is not None:
            client.close()
    return None


def start_live_model(
    image: str, model_name: str, *, container_factory: Callable[..., Any] | None = None
) -> tuple[LiveModel, Callable[[], None]]:
    """Start the Ollama container, pull ``model_name`` if it is not there, and return it with its stop function."""
    if container_factory is None:
        try:
            from testcontainers.community.ollama import OllamaContainer
        except ImportError:  # testcontainers releases before the "community" package
            from testcontainers.ollama import OllamaContainer
        container_factory = OllamaContainer

    container = container_factory(image=image)
    container.start()
    try:
        present = {m.get("name") for m in container.list_models()}
        if model_name not in present:
            exit_code, output = container.exec(["ollama", "pull", model_name])
            if exit_code != 0:
                text = output.decode(errors="replace") if isinstance(output, bytes) else str(output)
                tail = " / ".join(line.strip() for line in text.strip().splitlines()[-2:])[-300:]
                raise RunError(
                    f"ollama could not pull model {model_name!r} (exit {exit_code}): {tail}; "
                    "check the name (--pyguard-live-model) and the engine's network access"
                )
        live = LiveModel(base_url=container.get_endpoint(), model_name=model_name, image=image)
    except BaseException:
        container.stop()
        raise
    return live, container.stop


@pytest.fixture(scope="session")
def pyguard_live_model(request: pytest.FixtureRequest) -> Iterator[LiveModel]:
    """A live model server in a container for the session; skips with the reason where Docker is unavailable."""
    # lazy: settings() is defined in pyguard.pytest_plugin, which imports this module before defining it
    from pyguard.pytest_plugin import settings

    s = settings(request.config)
    reason = docker_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    live, stop = start_live_model(s.live_image, s.live_model)
    try:
        yield live
    finally:
        stop()
