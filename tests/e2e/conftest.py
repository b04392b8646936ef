"""End-to-end tests of the Guard API and `pyguard demo`: real LangChain4j loops in one JVM, the real engine."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/e2e" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.jvm)


@pytest.fixture(scope="session")
def jvm():
    from pyguard.jvm import start_jvm

    return start_jvm()
