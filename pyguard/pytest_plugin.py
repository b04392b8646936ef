"""pyguard's pytest plugin (registered through the ``pytest11`` entry point).

Cheap to import: nothing here starts a JVM at collection time.
"""

from __future__ import annotations


def pytest_configure(config):  # pragma: no cover - replaced by the full plugin
    config.addinivalue_line("markers", "pyguard: a test of a guarded Java agent")
