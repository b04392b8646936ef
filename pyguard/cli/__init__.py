"""The ``pyguard`` command line. Each subcommand lives in its own module of this package.

Subcommands are imported lazily so that ``pyguard --help`` stays fast and a broken subcommand cannot take
the others down.
"""

from __future__ import annotations

import importlib

import click

from pyguard import __version__

__all__ = ["main"]

# name -> (module, attribute, one-line help)
_COMMANDS: dict[str, tuple[str, str, str]] = {
    "demo": ("pyguard.cli.demo", "demo", "Run the logistics incident unguarded and guarded, side by side."),
    "replay": ("pyguard.cli.replay", "replay", "Replay recorded runs through a policy: where it would stop, what it saves."),
    "calibrate": ("pyguard.cli.calibrate", "calibrate", "Recommend maxIterations per task type from recorded runs."),
    "check": ("pyguard.cli.check", "check", "CI gate: compare a set of runs with thresholds and a baseline."),
    "tune": ("pyguard.cli.tune", "tune", "Fit the policy to your labelled runs, with a cross-validated estimate."),
}


class _LazyGroup(click.Group):
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
                raise click.ClickException(f"'pyguard {name}' is not available in this build")

            return _missing


@click.group(cls=_LazyGroup)
@click.version_option(__version__, prog_name="pyguard")
def main() -> None:
    """pyguard: guard Java LangChain4j agents' tool-calling loops from Python."""
