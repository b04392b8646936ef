"""pyguard's pytest plugin, registered through the ``pytest11`` entry point (``pyguard = "pyguard.pytest_plugin"``).

Cheap to import: importing it starts no JVM and imports no jpype; the JVM fixtures import the JVM edge lazily,
the first time a test asks for one. Under pytest-xdist each worker is its own process, so each starts its own JVM.

Options (group "pyguard", each with an ini twin): ``--pyguard-classpath``, ``--pyguard-trace-dir``,
``--pyguard-policy``, ``--pyguard-keep-traces=failed|all|none``, ``--pyguard-live-image``, ``--pyguard-live-model``.
Marker: ``@pytest.mark.pyguard(task_type=..., policy=..., max_iterations=...)``, checked at collection (a bad one
fails its own test).
Fixtures: ``pyguard_jvm``, ``pyguard_guard``, ``pyguard_runs``, ``pyguard_scripted_model``,
``pyguard_openai_server``, ``pyguard_live_model``, ``pyguard_cassette`` (record a real model once, replay offline).
See docs/pytest-plugin.md.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path

import pytest

from pyguard.pytest_plugin.artifacts import RunCollector, keep_traces, remove_earlier_traces
from pyguard.pytest_plugin.cassettes import pyguard_cassette
from pyguard.pytest_plugin.fixtures import (
    keep_jvm_signal_handlers,
    pyguard_guard,
    pyguard_jvm,
    pyguard_openai_server,
    pyguard_scripted_model,
)
from pyguard.pytest_plugin.live import pyguard_live_model
from pyguard.pytest_plugin.marker import MARKER_HELP, MarkerError, marker_args
from pyguard.pytest_plugin.reporting import SUMMARY_PLUGIN, SessionRuns, classpath_hint, run_stats
from pyguard.pytest_plugin.settings import PluginSettings, add_options, settings_from_config

__all__ = [
    "SETTINGS_KEY",
    "RUNS_KEY",
    "settings",
    "trace_dir",
    "pytest_addoption",
    "pytest_configure",
    "pytest_report_header",
    "pytest_collection_modifyitems",
    "pytest_runtest_setup",
    "pytest_runtest_makereport",
    "pyguard_runs",
    "pyguard_jvm",
    "pyguard_guard",
    "pyguard_scripted_model",
    "pyguard_openai_server",
    "pyguard_live_model",
    "pyguard_cassette",
]

SETTINGS_KEY = pytest.StashKey[PluginSettings]()
RUNS_KEY = pytest.StashKey[RunCollector]()
_TRACE_DIR_KEY = pytest.StashKey[Path]()
_MARKER_ERROR_KEY = pytest.StashKey[str]()
_REMOVED_KEY = pytest.StashKey[int]()


def settings(config: pytest.Config) -> PluginSettings:
    """The session's pyguard settings (read from the options and ini keys at configure time)."""
    return config.stash[SETTINGS_KEY]


def trace_dir(config: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where kept traces go: ``--pyguard-trace-dir``, or ``<pytest basetemp>/pyguard-traces``."""
    if _TRACE_DIR_KEY not in config.stash:
        chosen = settings(config).trace_dir
        config.stash[_TRACE_DIR_KEY] = (
            chosen if chosen is not None else tmp_path_factory.getbasetemp() / "pyguard-traces"
        )
    return config.stash[_TRACE_DIR_KEY]


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    config.stash[SETTINGS_KEY] = settings_from_config(config)
    by_conversation = bool(config.getoption("pyguard_by_conversation", default=False))
    config.pluginmanager.register(SessionRuns(by_conversation), SUMMARY_PLUGIN)  # the end-of-session summary
    s = config.stash[SETTINGS_KEY]
    is_worker = hasattr(config, "workerinput")  # under xdist the controller clears the folder, once, before the workers
    if s.trace_dir is not None and not s.keep_earlier_traces and not is_worker:
        config.stash[_REMOVED_KEY] = remove_earlier_traces(s.trace_dir)
    # Last, after pytest's faulthandler plugin enabled Python's fault handler: a session that starts while a JVM runs
    # in this process (pytester's in-process runs) must not put that handler over the JVM's own SIGSEGV handling.
    keep_jvm_signal_handlers()


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Which policy file the session's guards start from, and the agent's classpath, when there are any."""
    s = settings(config)
    lines = [f"pyguard policy: {s.policy}"] if s.policy is not None else []
    if s.classpath:
        lines.append("pyguard classpath: " + os.pathsep.join(s.classpath))
    if config.stash.get(_REMOVED_KEY, 0):
        lines.append(
            f"pyguard traces: removed {config.stash[_REMOVED_KEY]} kept by an earlier session from {s.trace_dir} "
            "(--pyguard-keep-earlier-traces leaves them)"
        )
    return lines


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Check every test's pyguard markers now; a bad one is kept to fail that test alone when it runs."""
    for item in items:
        if item.get_closest_marker("pyguard") is not None:
            try:
                marker_args(item)
            except MarkerError as exc:
                item.stash[_MARKER_ERROR_KEY] = str(exc)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test whose pyguard marker is bad fails here, before its fixtures start a JVM, with the one-line message."""
    if _MARKER_ERROR_KEY in item.stash:
        pytest.fail(item.stash[_MARKER_ERROR_KEY], pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    hint = classpath_hint(call.excinfo, settings(item.config).classpath)
    addsection = getattr(report.longrepr, "addsection", None)  # a TerminalRepr's; not a plain string's
    if hint is not None and callable(addsection):
        addsection("pyguard classpath", hint)
    if report.when == "call" and RUNS_KEY in item.stash and len(item.stash[RUNS_KEY]):
        collector = item.stash[RUNS_KEY]
        s = settings(item.config)
        kept = None
        if s.keep_traces != "none":
            kept = keep_traces(item, report, collector, item.config.stash[_TRACE_DIR_KEY], s.keep_traces, s.trace_mode)
        trace = str(kept) if kept is not None else None
        report.pyguard = run_stats(collector.results, trace)  # type: ignore[attr-defined]
    return report


@pytest.fixture
def pyguard_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> RunCollector:
    """The RunResults this test produced (``pyguard_guard`` adds its own); kept as a trace if the test fails."""
    trace_dir(request.config, tmp_path_factory)
    collector = RunCollector()
    request.node.stash[RUNS_KEY] = collector
    return collector
