"""What every test folder shares: the one JVM of the test process, the ``jvm`` marker on the folders that need it, and
the guard's callback deadline as a hang guard only in the tests that run the JVM.

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


HANG_GUARD_MS = 600_000
"""The callback deadline of a ``Guard`` built without one in a test that runs the JVM: long enough to be only a guard
against a hung build. The default (``pyguard.live.guard.DEFAULT_CALLBACK_TIMEOUT_MS``, 10 s) is a time limit: on a loaded
machine (two cores, load 20) a decision that loads the engine's compiled kernel, or waits for the GIL behind 63 other
runs, took longer, and the run ended ``guard_error`` with its decision discarded, so a test of decisions failed or
passed by the machine's load. The deadline's own behaviour is tested with an engine that hangs until the test
releases it (tests/e2e/test_guard_reliability.py), with deadlines given explicitly, and the default's value there."""


@pytest.fixture(autouse=True)
def _callback_deadline_as_a_hang_guard(request, monkeypatch):
    if not {"jvm", "pyguard_jvm"} & set(request.fixturenames):
        return
    from pyguard.live.guard import Guard

    defaults = Guard.__init__.__kwdefaults__
    assert defaults["callback_timeout_ms"] > 0, defaults  # the default deadline mode (a pool thread) stays tested
    monkeypatch.setitem(defaults, "callback_timeout_ms", HANG_GUARD_MS)
