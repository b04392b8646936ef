"""JVM tests of the live calibration: one session-scoped JVM (a JVM cannot restart in a process)."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/jvm_calibrate" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.jvm)


@pytest.fixture(scope="session")
def jvm():
    from pyguard.jvm import start_jvm

    return start_jvm()
