"""Shared pieces of the plugin's tests: pytester, and synthetic runs that need no JVM."""

from __future__ import annotations

import pytest

# The plugin reads the session's policy at configure time, which imports the engine (and numpy). pytester's in-process
# runs restore sys.modules after each inner run, and numpy cannot be imported twice in one process: import it once
# here, so every inner run finds it loaded.
import pyguard.engine  # noqa: F401


def pytest_configure(config: pytest.Config) -> None:
    # pytester is pytest's own plugin for testing plugins; load it for these tests only if nobody else did.
    if not config.pluginmanager.has_plugin("pytester"):
        config.pluginmanager.import_plugin("pytester")


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytest's pytester, with inner runs that skip plugins these tests do not need (faster in-process runs)."""
    # The test folder is the root and its pytest.ini the config, whatever config files lie above it in /tmp.
    # (Tests that need ini keys overwrite this pytest.ini.)
    pytester.makefile(".ini", pytest="[pytest]\n")
    # no:phoenix: arize-phoenix-client's pytest11 plugin (the phoenix extra) imports all of Phoenix into every inner run
    # (seconds and gigabytes each); pyproject's addopts do not reach inner runs, which read this pytest.ini.
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:hypothesispytest -p no:cacheprovider -p no:phoenix")
    return pytester
