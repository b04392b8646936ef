"""The ``pyguard`` command line. Each subcommand lives in its own module of this package.

Subcommands are imported lazily so that ``pyguard --help`` stays fast and a broken subcommand cannot take
the others down.

Common to every subcommand: one exit-status convention (:mod:`pyguard.cli.exit_codes`: 0 ok, 1 the answer is no,
2 bad input or usage, 3 the environment lacks something, 130 interrupted); Ctrl-C exits 130 after the command has cancelled or finished what it had running and
closed its traces (a subcommand prints what was kept and how to resume; otherwise a generic line says it was
interrupted), never click's "Aborted!" with status 1; and every :class:`pyguard.trace.records.TraceWarning` (a torn
line skipped, an unreadable file of a directory skipped) is printed to stderr as ``warning: ...``.
"""

from __future__ import annotations

import importlib
import sys
import warnings

import click

from pyguard._version import __version__
from pyguard.cli.exit_codes import EPILOG, ExitCode

__all__ = ["main"]

# name -> (module, attribute, one-line help)
_COMMANDS: dict[str, tuple[str, str, str]] = {
    "demo": ("pyguard.cli.demo", "demo", "Run the logistics incident unguarded and guarded, side by side."),
    "replay": (
        "pyguard.cli.replay",
        "replay",
        "Replay recorded runs through a policy: where it would stop, what it saves.",
    ),
    "calibrate": ("pyguard.cli.calibrate", "calibrate", "Recommend maxIterations per task type from recorded runs."),
    "check": ("pyguard.cli.check", "check", "CI gate: compare a set of runs with thresholds and a baseline."),
    "report": (
        "pyguard.cli.report",
        "report",
        "Write recorded runs as one HTML page: gain per call, tokens, budget, where the guard acted.",
    ),
    "tune": ("pyguard.cli.tune", "tune", "Fit the policy to your labelled runs, with a cross-validated estimate."),
    "scenario": ("pyguard.cli.scenario", "scenario", "Check scenario files against your agent's @Tool methods."),
    "fuzz": ("pyguard.cli.fuzz", "fuzz", "Search for model misbehaviours on your agent's tools that escape the guard."),
}


def _show_trace_warnings() -> None:
    # lazy: the CLI's start-up (`pyguard --help`) loads no command's dependencies: the trace records (and the
    # engine under them) load once a command runs
    from pyguard.trace.records import TraceWarning

    default = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001, ANN202
        if issubclass(category, TraceWarning):
            click.echo(f"warning: {message}", err=True)
        else:
            default(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    warnings.simplefilter("always", TraceWarning)


class _NotInBuild(click.ClickException):
    exit_code = ExitCode.ENVIRONMENT


class _LazyGroup(click.Group):
    def invoke(self, ctx: click.Context):  # noqa: ANN201
        try:
            with warnings.catch_warnings():  # the hook and the filter last for this command only
                _show_trace_warnings()
                return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo(
                "interrupted (Ctrl-C): runs in progress were cancelled and their traces closed with a footer; what was"
                " written so far is kept",
                err=True,
            )
            sys.stderr.flush()
            ctx.exit(ExitCode.INTERRUPTED)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in _COMMANDS:
            return None
        module, attr, _ = _COMMANDS[name]
        try:
            return getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            help_text = _COMMANDS[name][2]

            @click.command(name=name, help=help_text + " (not available in this build)")
            def _missing() -> None:
                raise _NotInBuild(f"'pyguard {name}' is not available in this build")

            return _missing


@click.group(cls=_LazyGroup, epilog=EPILOG)
@click.version_option(__version__, prog_name="pyguard")
def main() -> None:
    """pyguard: guard Java LangChain4j agents' tool-calling loops from Python."""
