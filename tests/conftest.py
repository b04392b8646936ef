"""What every test folder shares: the one JVM of the test process, and the ``jvm`` marker on the folders that need it.

A JVM starts once per process and cannot restart, so the JVM folders share this session fixture (under
pytest-xdist, each worker process has its own).
"""

from __future__ import annotations

import pytest

JVM_FOLDERS = ("tests/jvm/", "tests/e2e/", "tests/jvm_calibrate/")


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = str(item.fspath).replace("\\", "/")
        if any(folder in path for folder in JVM_FOLDERS):
            item.add_marker(pytest.mark.jvm)


@pytest.fixture(scope="session")
def jvm(pyguard_jvm):
    # the plugin's fixture: it also turns Python's fault handler off before the JVM starts, as a user's session gets
    return pyguard_jvm
