"""Lazy access to the bridge's Java classes (after :func:`pyguard.jvm.start_jvm`)."""

from __future__ import annotations

from functools import cache
from typing import Any

from pyguard.errors import ConfigError, InputError, JvmError

__all__ = ["jclass", "java_call"]


@cache
def jclass(name: str) -> Any:
    from pyguard.jvm.bootstrap import jvm_started

    if not jvm_started():
        raise JvmError("the JVM is not running: call pyguard.jvm.start_jvm() first")
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
