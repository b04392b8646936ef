"""Shared pieces of the plugin's tests: pytester, and synthetic runs that need no JVM."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    # pytester is pytest's own plugin for testing plugins; load it for these tests only if nobody else did.
    if not config.pluginmanager.has_plugin("pytester"):
        config.pluginmanager.import_plugin("pytester")
