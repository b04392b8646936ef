"""JVM tests: one session-scoped fixture starts the JVM once (a JVM cannot restart in a process).

Every test here is marked ``jvm``. JVM start/stop error paths run in subprocesses (test_jvm_bootstrap.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_collection_modifyitems(config, items):
    # (a conftest hook sees every collected item of the session: mark only this directory's)
    here = str(Path(__file__).resolve().parent)
    for item in items:
        if str(Path(str(item.fspath)).resolve().parent) == here:
            item.add_marker(pytest.mark.jvm)


@pytest.fixture(scope="session")
def jvm():
    from pyguard.jvm import start_jvm

    return start_jvm()


@pytest.fixture
def J(jvm):
    """Shortcut to Java classes: J("demo.LogisticsTools") -> dev.pyguard.bridge.demo.LogisticsTools."""
    import jpype

    return lambda name: jpype.JClass(name if name.startswith(("java.", "dev.langchain4j")) else "dev.pyguard.bridge." + name)
