"""The JVM fixtures: ``pyguard_jvm``, ``pyguard_guard``, ``pyguard_scripted_model``, ``pyguard_openai_server``.

Everything JVM-side is imported inside the fixtures (from :mod:`pyguard.jvm` and :mod:`pyguard.guard`), so the
plugin stays cheap to import and a session that uses none of these fixtures never starts a JVM.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

__all__ = [
    "pyguard_jvm",
    "pyguard_guard",
    "pyguard_scripted_model",
    "pyguard_openai_server",
    "openai_chat_model",
]


@pytest.fixture(scope="session")
def pyguard_jvm(request: pytest.FixtureRequest) -> Any:
    """The session's JVM, started once with pyguard's bridge jars and ``--pyguard-classpath``."""
    from pyguard.jvm import start_jvm
    from pyguard.pytest_plugin import settings

    return start_jvm(classpath=settings(request.config).resolved_classpath())


@pytest.fixture
def pyguard_guard(request: pytest.FixtureRequest, pyguard_jvm: Any, pyguard_runs: Any) -> Iterator[Any]:
    from pyguard.pytest_plugin.guarding import make_test_guard

    guard = make_test_guard(request, pyguard_runs)
    yield guard


@pytest.fixture
def pyguard_scripted_model(pyguard_jvm: Any) -> Any:
    from pyguard.jvm import scripted_model

    return scripted_model


@pytest.fixture
def pyguard_openai_server(pyguard_jvm: Any) -> Iterator[Any]:
    from pyguard.jvm import start_openai_server

    servers: list[Any] = []

    def start(scenario: str, **options: Any) -> str:
        server = start_openai_server(scenario, **options)
        servers.append(server)
        return server.base_url

    yield start
    for server in servers:
        server.stop()


def openai_chat_model(base_url: str, model_name: str, **options: Any) -> Any:
    from pyguard.jvm import openai_chat_model as build

    return build(base_url, model_name, **options)
