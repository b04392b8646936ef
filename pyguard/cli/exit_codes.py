"""The exit status of every ``pyguard`` command: one convention, defined here and nowhere else.

======  ===============  ==========================================================================================
status  name             when
======  ===============  ==========================================================================================
0       ``OK``           the command did its job (``check``: every check holds; ``demo``: the runs were shown,
                         whatever their outcomes)
1       ``FAILED``       the command ran and its answer is "no": ``check``'s gate failed, or a run the command
                         carried out could not be completed (a live calibration run), or pyguard itself erred
2       ``USAGE``        bad input or usage: an option, a file, a configuration or a recording pyguard cannot use
                         (the message names the value and what to do); click's own usage errors are 2 as well
3       ``ENVIRONMENT``  the machine lacks something the command needs: no JDK or bridge jars (the JVM cannot
                         start), an optional extra not installed (the message names the pip command), a
                         subcommand not in this build
130     ``INTERRUPTED``  Ctrl-C (128 + SIGINT, as shells report it), after what was running was cancelled and
                         its traces closed
======  ===============  ==========================================================================================

:func:`exit_code_for` maps pyguard's error hierarchy (:mod:`pyguard.base.errors`) onto it; :func:`fail` prints the
error and exits with its status.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NoReturn

import click

from pyguard.base.errors import ConfigError, InputError, JvmError, MissingExtraError

__all__: list[str] = []


class ExitCode(IntEnum):
    """The exit status of a ``pyguard`` command (see the module docstring for when each applies)."""

    OK = 0
    FAILED = 1
    USAGE = 2
    ENVIRONMENT = 3
    INTERRUPTED = 130


EPILOG = (
    "Exit status (every command): 0 ok; 1 the command's answer is no (check's gate failed, a run it carried out"
    " failed); 2 bad input or usage; 3 the environment lacks something (no JDK or bridge jars, an optional extra"
    " not installed); 130 interrupted (Ctrl-C)."
)
"""The exit-status summary shown by ``pyguard --help``."""


def exit_code_for(exc: BaseException) -> ExitCode:
    """The exit status for an error that ended a command."""
    if isinstance(exc, KeyboardInterrupt):
        return ExitCode.INTERRUPTED
    if isinstance(exc, MissingExtraError | JvmError):  # before ConfigError: a missing extra is one
        return ExitCode.ENVIRONMENT
    if isinstance(exc, InputError | ConfigError | click.UsageError):
        return ExitCode.USAGE
    return ExitCode.FAILED


def fail(exc: BaseException, *, message: str | None = None) -> NoReturn:
    """Print ``Error: <message or the error>`` to stderr and exit with the error's status."""
    click.echo(f"Error: {message if message is not None else exc}", err=True)
    raise SystemExit(exit_code_for(exc)) from None
