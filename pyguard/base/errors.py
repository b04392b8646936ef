"""The one error hierarchy of pyguard.

Every error pyguard raises on purpose is a :class:`PyguardError`. Messages name the offending value and say
what to do about it. The same situation always raises the same type.

    PyguardError
    ├── ConfigError (also ValueError)        bad configuration: key, value, file
    │   └── MissingExtraError (also ImportError)  an optional extra is not installed (names the extra)
    ├── InputError (also ValueError)         bad input data: a trace, a recording, a CLI argument
    │   ├── TraceFormatError                 a malformed trace line (carries path and line number)
    │   └── UnreadableRecord                 one record of a recording that cannot be read (tolerant loaders skip
    │                                        and count it by its ``reason``; strict loading raises it)
    ├── JvmError (also RuntimeError)         the JVM edge: no JDK, jars not built, JVM started without them
    ├── BudgetError                          the engine was used wrongly (event after the run ended, ...)
    └── RunError                             a guarded run could not be carried out
        └── HandleError                      an escalation handle cannot be resumed (malformed, other version,
                                             edited, another agent, already resumed)
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

__all__: list[str] = []


class PyguardError(Exception):
    """Base class of every error pyguard raises on purpose."""


class ConfigError(PyguardError, ValueError):
    """A configuration value is invalid. The message names the key, the value and what is expected."""


class MissingExtraError(ConfigError, ImportError):
    """A feature needs an optional extra that is not installed. The message names the extra and the pip command."""


class InputError(PyguardError, ValueError):
    """Input data (a recording, a trace, a CLI argument) is invalid."""


class TraceFormatError(InputError):
    """A trace or recording file is malformed at a given line."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f":{line}"
            where += ": "
        super().__init__(where + message)
        self.path = path
        self.line = line


class UnreadableRecord(InputError):
    """One record (a run, a message, a line) of a recording cannot be read.

    ``reason`` is a short category ("unknown role 'exit'", "no assistant message", ...) under which tolerant
    loading counts what it skipped; the message says which record and what to do, as for any InputError.
    """

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class JvmError(PyguardError, RuntimeError):
    """The JVM could not be started or used (no JDK, bridge jars missing, JVM started without them)."""


class BudgetError(PyguardError):
    """The engine was driven incorrectly (for example an event after the run already ended)."""


class RunError(PyguardError, RuntimeError):
    """A guarded run could not be carried out."""


class HandleError(RunError):
    """An escalation handle cannot be resumed: malformed, of another format version, edited after it was written, for
    another agent, or already resumed. The message names the problem and what to do."""


def value_shown(value: Any, limit: int = 80) -> str:
    """``repr(value)`` for an error message, cut to ``limit`` characters (ending in ``...`` when cut)."""
    shown = repr(value)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` naming the choice closest to a misspelt ``name``, or ``""`` when none is close."""
    close = difflib.get_close_matches(name, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
