"""The options every command that reads recorded RUNS shares, and the one way they load them.

    @click.command()
    @click.argument("runs", type=RUNS_PATH)
    @runs_options                 # --format, --strict, --terminal-tools, --labels
    def replay(runs, fmt, ...):
        records = load_cli_runs(runs, fmt)     # prints what was skipped on stderr

RUNS may be a file, a directory, ``-`` (standard input) or a stream such as ``/dev/fd/63`` (process
substitution). Loading is tolerant: unreadable records are skipped and counted, and the counts are printed on
stderr (``--strict`` fails on the first instead). ``--strict``, ``--terminal-tools`` and ``--labels`` are kept
in the click context, so a command's signature only gains ``fmt``.

Every option applies to every format, Parquet included: a command reads RUNS through :func:`load_cli_runs` (the
one loader). Its only shortcut is :func:`columnar_shortcut`: a Parquet file read with none of these options may be
summarised or replayed column-wise (DuckDB, row groups in the workers), which gives the same counts without building
every run first; with any of them it is loaded like every other format.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from pyguard.base.errors import InputError
from pyguard.loading import FORMATS, load_runs, reads_columns
from pyguard.trace import LoadResult

__all__: list[str] = []

T = TypeVar("T")

RUNS_PATH = click.Path(path_type=str, allow_dash=True)
"""The RUNS argument: a path, a directory, ``-`` or a stream (never checked as a regular file)."""

_KEY = "pyguard.runs_options"


def runs_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--format`` (as ``fmt``), ``--strict``, ``--terminal-tools`` and ``--labels`` to a click command."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        ctx.meta[_KEY] = {key: kwargs.pop(key) for key in ("strict", "terminal_tools", "labels")}
        return command(*args, **kwargs)

    options = [
        click.option(
            "--format",
            "fmt",
            type=click.Choice(list(FORMATS)),
            default=None,
            help="Format of RUNS (default: detected per file): " + ", ".join(FORMATS) + ".",
        ),
        click.option(
            "--strict",
            is_flag=True,
            help="Fail on the first record that cannot be read (default: skip it, count it, go on).",
        ),
        click.option(
            "--terminal-tools",
            default=None,
            metavar="NAMES",
            help="Comma-separated tools that end a run when called last (finish, submit, a purchase, a"
            " hand-off); replaces the default guess.",
        ),
        click.option(
            "--labels",
            type=click.Path(path_type=str),
            default=None,
            help="Outcome labels kept apart from the runs: a JSON file or folder (run id -> success,"
            " SWE-bench reports, BFCL score files).",
        ),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


def _opts() -> dict[str, Any]:
    ctx = click.get_current_context(silent=True)
    return dict(ctx.meta.get(_KEY, {})) if ctx is not None else {}


def _report(skipped: str) -> None:
    if skipped:
        click.echo(f"pyguard: {skipped} (pass --strict to fail on them instead)", err=True)


def load_cli_runs(path: str | Path, fmt: str | None) -> LoadResult:
    """Load RUNS with the command's options; print the skip counts on stderr."""
    o = _opts()
    result = load_runs(
        str(path),
        format=fmt,
        strict=bool(o.get("strict")),
        terminal_tools=o.get("terminal_tools"),
        labels=o.get("labels"),
    )
    _report(result.skip_summary())
    return result


def via_columns(path: str | Path, fmt: str | None, columnar: Callable[[], T], loaded: Callable[[LoadResult], T]) -> T:
    """``columnar()`` when :func:`columnar_shortcut` allows it and it reads the file, else ``loaded`` on the runs the
    one loader reads. A row the shortcut cannot read (an :class:`InputError`) sends the file to the loader, which
    skips and counts it like any unreadable record (or, for an error of the whole input, raises it again)."""
    if columnar_shortcut(path, fmt):
        try:
            return columnar()
        except InputError:
            pass
    return loaded(load_cli_runs(path, fmt))


def columnar_shortcut(path: str | Path, fmt: str | None) -> bool:
    """True when RUNS is a Parquet file read with no load option (``--strict``, ``--terminal-tools``, ``--labels``):
    the command may then read its columns directly (:func:`pyguard.loading.reads_columns`). With an option it must
    use :func:`load_cli_runs`, which applies it (an option is never silently ignored)."""
    return reads_columns(path, fmt, **_opts())
