"""JVM tests of the bridge. The session-wide ``jvm`` fixture and the ``jvm`` marker come from tests/conftest.py.

JVM start/stop error paths run in subprocesses (test_jvm_bootstrap.py).
"""

from __future__ import annotations

import pytest


@pytest.fixture
def J(jvm):
    """Shortcut to Java classes: J("demo.LogisticsTools") -> dev.pyguard.bridge.demo.LogisticsTools."""
    import jpype

    return lambda name: jpype.JClass(
        name if name.startswith(("java.", "dev.langchain4j")) else "dev.pyguard.bridge." + name
    )
