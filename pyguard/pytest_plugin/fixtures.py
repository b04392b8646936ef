"""The JVM fixtures: ``pyguard_jvm``, ``pyguard_guard``, ``pyguard_scripted_model``, ``pyguard_openai_server``.

Everything JVM-side is imported inside the fixtures (from :mod:`pyguard.jvm` and :mod:`pyguard.live.guard`), so the
plugin stays cheap to import and a session that uses none of these fixtures never starts a JVM.

A scenario is a shipped scenario name (``"logistics_incident"``), a dict, or a path to a JSON file; a relative path
is looked up next to the test file first, then in the folder pytest runs in.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pyguard.base.errors import JvmError, PyguardError, RunError
from pyguard.pytest_plugin.guarding import make_test_guard

__all__: list[str] = []


def resolve_scenario(source: Any, test_dir: Path) -> Any:
    """A relative scenario path found next to the test file wins; names, dicts and other paths pass unchanged."""
    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        looks_like_path = isinstance(source, os.PathLike) or text.endswith(".json") or "/" in text or os.sep in text
        if looks_like_path and not os.path.isabs(text) and (test_dir / text).is_file():
            return str(test_dir / text)
    return source


def lint_against(source: Any, tools: Any) -> None:
    """Check the scenario ``source`` against the ``@Tool`` methods of ``tools``; raises ``ScenarioLintError``."""
    # lazy: the plugin loads in every pytest session; the JVM edge only for a test that uses it
    from pyguard.jvm.scenarios import load_scenario
    from pyguard.jvm.tool_specs import tool_specs
    from pyguard.testing.scenario_lint import check_scenario

    shown = source if isinstance(source, (str, os.PathLike)) else "(dict)"
    check_scenario(load_scenario(source), tool_specs(tools), source=str(shown))


def call_for_test(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` for a fixture factory: a pyguard error raised for what the test handed it (a bad scenario:
    its file, line and column) shows with the test's own frame, not pyguard's internal ones (its traceback is cut
    here, and this frame is hidden)."""
    __tracebackhide__ = True

    try:
        return fn(*args, **kwargs)
    except PyguardError as exc:
        raise exc.with_traceback(None) from None


def keep_jvm_signal_handlers(*, starting: bool = False) -> bool:
    """Turn Python's fault handler (pytest's faulthandler plugin) off when a JVM runs in this process, or is about to
    (``starting``). The JVM raises SIGSEGV on purpose (implicit null checks, JIT safepoints) and handles it itself;
    Python's handler, when it sits on top, turns such a signal into a fatal crash of the test process (JPype's own
    advice is ``-p no:faulthandler``). True when it was on and is now off."""
    import faulthandler

    jpype = sys.modules.get("jpype")  # not imported here: a session without a JVM pays nothing
    running = jpype is not None and bool(jpype.isJVMStarted())
    if faulthandler.is_enabled() and (starting or running):
        faulthandler.disable()
        return True
    return False


@pytest.fixture(scope="session")
def pyguard_jvm(request: pytest.FixtureRequest) -> Any:
    """The session's JVM (a ``pyguard.jvm.JvmInfo``), started once with pyguard's bridge jars and the user's
    ``--pyguard-classpath``. Under pytest-xdist each worker process starts its own."""
    # lazy: the plugin loads in every pytest session; the JVM edge only for a test that uses it
    from pyguard.jvm import start_jvm

    # lazy: settings() is defined in pyguard.pytest_plugin, which imports this module before defining it
    from pyguard.pytest_plugin import settings

    keep_jvm_signal_handlers(starting=True)
    try:
        return start_jvm(classpath=settings(request.config).resolved_classpath())
    except JvmError as exc:
        pytest.fail(f"pyguard_jvm: {exc}", pytrace=False)


@pytest.fixture
def pyguard_guard(request: pytest.FixtureRequest, pyguard_jvm: Any, pyguard_runs: Any) -> Iterator[Any]:
    """A ``pyguard.live.guard.Guard`` for this test, with the policy of the session and the test's pyguard marker; every
    ``RunResult`` it produces is recorded in ``pyguard_runs`` (and kept as a trace if the test fails)."""

    guard = make_test_guard(request, pyguard_runs)
    try:
        yield guard
    finally:
        close = getattr(guard, "close", None)
        if callable(close):
            close()


@pytest.fixture
def pyguard_scripted_model(request: pytest.FixtureRequest, pyguard_jvm: Any) -> Any:
    """Factory: ``pyguard_scripted_model(scenario, seed=None, tools=None)`` -> a LangChain4j ``ChatModel`` playing the
    scenario. With ``tools`` (the agent's ``@Tool`` objects or classes, as given to ``.tools(...)``), every tool call the
    scenario scripts is first checked against them (:mod:`pyguard.testing.scenario_lint`): a misspelt tool or argument
    fails the test naming it, instead of reaching the tool as ``null``."""
    # lazy: the plugin loads in every pytest session; the JVM edge only for a test that uses it
    from pyguard.jvm import scripted_model

    test_dir = Path(str(request.path)).parent

    def make(scenario: Any, *, seed: int | None = None, tools: Any = None) -> Any:
        __tracebackhide__ = True
        source = resolve_scenario(scenario, test_dir)
        if tools is not None:
            call_for_test(lint_against, source, tools)
        return call_for_test(scripted_model, source, seed=seed)

    return make


class OpenAiServers:
    """Factory of local OpenAI-compatible servers: ``pyguard_openai_server(scenario, **options)`` -> base URL.

    Options are those of :func:`pyguard.jvm.start_openai_server` (``seed``, ``fault``, ``fault_from``). Every server
    started is stopped when the test ends; ``.servers`` holds them (``LocalServer``: request counts, faults).
    """

    def __init__(self, test_dir: Path) -> None:
        self._test_dir = test_dir
        self.servers: list[Any] = []

    def __call__(self, scenario: Any, **options: Any) -> str:
        # lazy: the plugin loads in every pytest session; the JVM edge only for a test that uses it
        from pyguard.jvm import start_openai_server

        __tracebackhide__ = True
        server = call_for_test(start_openai_server, resolve_scenario(scenario, self._test_dir), **options)
        self.servers.append(server)
        return server.base_url

    @property
    def last(self) -> Any:
        """The server started last (``LocalServer``)."""
        if not self.servers:
            raise RunError(
                "no local OpenAI server was started in this test: call pyguard_openai_server(scenario) first"
            )
        return self.servers[-1]

    def stop_all(self) -> None:
        while self.servers:
            self.servers.pop().stop()


@pytest.fixture
def pyguard_openai_server(request: pytest.FixtureRequest, pyguard_jvm: Any) -> Iterator[OpenAiServers]:
    """Factory: ``pyguard_openai_server(scenario, **options)`` -> the base URL (``http://127.0.0.1:PORT/v1``) of a
    local OpenAI-compatible server playing the scenario; stopped at teardown."""
    servers = OpenAiServers(Path(str(request.path)).parent)
    try:
        yield servers
    finally:
        servers.stop_all()


def openai_chat_model(base_url: str, model_name: str, **options: Any) -> Any:
    """LangChain4j's ``OpenAiChatModel`` for ``base_url`` (see :func:`pyguard.jvm.openai_chat_model`)."""
    # lazy: the plugin loads in every pytest session; the JVM edge only for a test that uses it
    from pyguard.jvm import openai_chat_model as build

    return build(base_url, model_name, **options)
