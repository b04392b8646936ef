"""Python's fault handler never sits on top of a running JVM's SIGSEGV handling: the JVM raises SIGSEGV on purpose
(implicit null checks, JIT safepoints), and with Python's handler on top such a signal kills the test process (a
pytest-xdist worker crashed this way in an in-process pytester run)."""

from __future__ import annotations

import faulthandler
import subprocess
import sys
import textwrap

import pytest

from pyguard.pytest_plugin.fixtures import keep_jvm_signal_handlers

NESTED = """
import faulthandler


def test_the_fault_handler_is_off_while_the_jvm_runs():
    assert not faulthandler.is_enabled()
"""


@pytest.mark.jvm
def test_a_session_started_while_the_jvm_runs_keeps_the_fault_handler_off(jvm, pytester):
    # pytest's faulthandler plugin enables Python's handler in the nested (in-process) session; pyguard's plugin,
    # configured after it, turns it off again because a JVM runs in this process.
    pytester.makepyfile(NESTED)
    result = pytester.runpytest_inprocess("-p", "faulthandler")
    result.assert_outcomes(passed=1)
    assert not faulthandler.is_enabled()


def test_the_handler_is_turned_off_before_a_jvm_starts_and_left_alone_without_one():
    code = textwrap.dedent(
        """
        import faulthandler
        from pyguard.pytest_plugin.fixtures import keep_jvm_signal_handlers
        faulthandler.enable()
        print(keep_jvm_signal_handlers(), faulthandler.is_enabled())  # no JVM: left on
        print(keep_jvm_signal_handlers(starting=True), faulthandler.is_enabled())  # a JVM about to start: off
        print(keep_jvm_signal_handlers(starting=True), faulthandler.is_enabled())  # already off: nothing to do
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split("\n")[:3] == ["False True", "True False", "False False"], out


def test_the_helper_is_what_the_plugin_uses():
    import pyguard.pytest_plugin as plugin

    assert plugin.keep_jvm_signal_handlers is keep_jvm_signal_handlers
