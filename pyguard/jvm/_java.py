"""Lazy access to the bridge's Java classes (after :func:`pyguard.jvm.start_jvm`)."""

from __future__ import annotations

from functools import cache
from typing import Any

from pyguard.base.errors import ConfigError, InputError
from pyguard.jvm.bootstrap import check_jvm

__all__: list[str] = []


def jclass(name: str) -> Any:
    """The Java class ``name``; :class:`JvmError` saying what to call first when the JVM is not running (where
    ``jpype.JClass`` raises a bare ``JVMNotRunning``), or that it cannot restart when it was shut down."""
    check_jvm()
    return _jclass(name)


@cache
def _jclass(name: str) -> Any:
    import jpype

    return jpype.JClass(name)


def java_call(fn: Any, *args: Any, what: str = "") -> Any:
    """Call into Java; turn Java argument errors into pyguard errors (ScenarioException -> InputError, else ConfigError)."""
    import jpype

    try:
        return fn(*args)
    except jpype.JException as e:
        scenario_exc = jclass("dev.pyguard.bridge.scripted.ScenarioException")
        iae = jclass("java.lang.IllegalArgumentException")
        msg = str(e.getMessage())
        if isinstance(e, scenario_exc):
            raise InputError(msg) from None
        if isinstance(e, iae):
            raise ConfigError(f"{what}: {msg}" if what else msg) from None
        raise


def detach_thread() -> None:
    """Detach the calling thread from the JVM (JPype attaches any thread that calls Java and keeps it attached until
    told otherwise): a short-lived thread must call this before it ends, or each one leaves a Java thread behind.
    Harmless when the thread is not attached or no JVM runs."""
    import sys

    if "jpype" not in sys.modules:
        return
    import _jpype

    _jpype.detachThreadFromJVM()
