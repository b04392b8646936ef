"""``pyguard tune RUNS``: fit the guard's policy to your own labelled runs, with a cross-validated estimate.

    pyguard tune RUNS [--format F] [--strict] [--terminal-tools N] [--labels L] [--config START.toml] [--max-false-stop-rate 0.01] [--by task_type|none]
                      [--folds 5] [--seed S] [--artifact] [--out FILE.toml] [--report DIR] [--json] [--workers N]

Exit status (:mod:`pyguard.cli.exit_codes`): 0 fitted (a task type that no stall setting keeps within the bound is
made reflect-only, stopped by its hard cap alone, and a type with no successful run keeps the starting budget; the
summary says so); 2 bad input (no labels at all, a bad option or file; the message says what to do); 3 an optional
extra missing; 1 any other pyguard error.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Sequence
from datetime import date
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from pyguard.base.errors import InputError, PyguardError
from pyguard.base.events import RunRecord
from pyguard.cli._policy import config_option, load_policy, policy_line
from pyguard.cli._runs import RUNS_PATH, load_cli_runs, runs_options
from pyguard.cli.exit_codes import fail
from pyguard.tune import SearchSpace, TuneOptions, write_policy, write_report
from pyguard.tune import tune as run_tune
from pyguard.tune.models import TuneResult
from pyguard.tune.output import pct, require_plots

__all__: list[str] = []


def tune_table(result, console: Console) -> None:

    table = Table(
        title=f"pyguard tune: {result.labelled_runs} labelled runs, {result.tasks} tasks,"
        f" {result.folds}-fold CV by task, bound {result.max_false_stop_rate:g}"
    )
    for col in ("task type", "figures", "false stops", "failed calls saved", "tokens saved", "failed caught"):
        table.add_column(col)

    def row(label: str, kind: str, f) -> None:
        if f is None:
            table.add_row(label, kind, "-", "-", "-", "-")
            return
        table.add_row(
            label,
            kind,
            f"{f.false_stops}/{f.successful_runs} {pct(f.false_stop_rate)}",
            pct(f.failed_tool_calls_saved),
            pct(f.failed_tokens_saved),
            pct(f.caught_failed_share),
        )

    row("all", "held-out (CV)", result.held_out)
    row("", "in-sample (optimistic)", result.in_sample)
    breaks = "starting policy (breaks the bound: not like-for-like)"
    row("", "starting policy" if result.default_meets_bound else breaks, result.default)
    for t in result.types:
        name = t.task_type or "(none)"
        if t.tuned:
            row(name, "held-out (CV), reflect-only" if t.reflect_only else "held-out (CV)", t.held_out)
            row("", "in-sample (optimistic)", t.in_sample)
        else:
            row(name, "not tuned", None)
        row("", "starting policy" if t.default_meets_bound else breaks, t.default)
    console.print(table)
    console.print(
        f"stall settings: {result.stall or 'unchanged'}; budgets: "
        + "; ".join(f"{t.task_type or '(none)'}: {t.budget}" for t in result.types)
        + "".join(
            f"; own stall settings for {name}: {own or 'the starting ones'}" for name, own in result.type_stall.items()
        )
        + "".join(
            f"; {t.task_type or '(none)'} is reflect-only (stopped by its hard cap alone)"
            for t in result.types
            if t.reflect_only
        )
    )
    for w in result.warnings:
        console.print(f"[yellow]warning:[/yellow] {w}")


def _tune_with_progress(records: Sequence[RunRecord], options: TuneOptions, err: Console) -> TuneResult:
    """The tuning, with a progress bar of its replays on a terminal (stderr)."""
    with Progress(
        TextColumn("tune: replaying runs"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    ) as bar:
        task = bar.add_task("replay", total=0)

        def progress(advance: int, add: int) -> None:
            if add:
                bar.update(task, total=(bar.tasks[0].total or 0) + add)
            if advance:
                bar.advance(task, advance)

        return run_tune(records, options, progress=progress)


@click.command(name="tune")
@click.argument("runs", type=RUNS_PATH)
@runs_options
@config_option("Starting policy")
@click.option(
    "--max-false-stop-rate",
    type=click.FloatRange(0, 1, max_open=True),
    default=0.01,
    show_default=True,
    help=(
        "Most successful runs a task type's policy may stop early, as a share. Where the starting policy itself"
        " stops more, tune says so: its savings are then no like-for-like baseline for the tuned policy's."
    ),
)
@click.option(
    "--by",
    type=click.Choice(["task_type", "none"]),
    default="task_type",
    show_default=True,
    help="A budget per task type ([task_types.X]) or one for all runs.",
)
@click.option(
    "--folds",
    type=click.IntRange(2, None),
    default=5,
    show_default=True,
    help="Cross-validation folds (runs of one task always in the same fold).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the folds and the bootstrap.")
@click.option(
    "--artifact",
    is_flag=True,
    help="Artifact-producing agents: a stop after the last file-changing action is not a false stop.",
)
@click.option(
    "--min-runs",
    type=click.IntRange(1, None),
    default=20,
    show_default=True,
    help="Task types with fewer labelled runs keep the starting budget.",
)
@click.option(
    "--min-successes",
    type=click.IntRange(1, None),
    default=5,
    show_default=True,
    help=(
        "Task types with fewer successful runs keep the starting budget. Independently, a fitted budget needs about"
        " 1/bound successes in every training fold (99 at 0.01): a type with fewer keeps the starting budget"
        " numbers and only the stall settings are tuned for it."
    ),
)
@click.option("--quick", is_flag=True, help="A smaller search space (fewer engine passes).")
@click.option(
    "--workers",
    type=click.IntRange(1, None),
    default=None,
    help="Worker processes (default: the CPU count, at most 4).",
)
@click.option(
    "--out",
    "out_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the fitted policy to this TOML file.",
)
@click.option(
    "--report",
    "report_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Write report.md and a trade-off plot per task type to this directory.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
def tune(
    runs: str,
    fmt: str | None,
    config_path: Path | None,
    max_false_stop_rate: float,
    by: str,
    folds: int,
    seed: int,
    artifact: bool,
    min_runs: int,
    min_successes: int,
    quick: bool,
    workers: int | None,
    out_path: Path | None,
    report_dir: Path | None,
    as_json: bool,
) -> None:
    """Fit the guard's policy to labelled RUNS (a file or directory of traces or recordings): the most failed-run
    tool calls and tokens saved with at most --max-false-stop-rate of successful runs stopped, per task type,
    estimated by cross-validation grouped by task."""

    err = Console(stderr=True)
    today = date.today().isoformat()
    command = "pyguard tune " + " ".join(shlex.quote(a) for a in sys.argv[2:]) if len(sys.argv) > 2 else "pyguard tune"
    try:
        if report_dir is not None:
            require_plots()  # a missing 'plot' extra is said before the tuning, not after it
        base, used = load_policy(config_path)
        records = load_cli_runs(runs, fmt)
        if not records:
            raise InputError(f"{str(runs)!r} holds no runs; nothing to tune")
        options = TuneOptions(
            max_false_stop_rate=max_false_stop_rate,
            by=by,
            folds=folds,
            seed=seed,
            artifact=artifact,
            min_runs=min_runs,
            min_successes=min_successes,
            base=base,
            workers=workers or min(4, os.cpu_count() or 1),
            space=SearchSpace.quick() if quick else SearchSpace(),
        )
        result = _tune_with_progress(records, options, err)
        written = None
        if out_path is not None:
            written = write_policy(result, out_path, str(runs), today)
        reports = write_report(result, report_dir, command, today) if report_dir is not None else []
    except OSError as exc:  # an output path that cannot be written: bad input
        fail(InputError(str(exc)), message=f"cannot write {exc.filename!r}: {exc.strerror}; check the path")
    except PyguardError as exc:
        fail(exc)
    if as_json:
        data = result.to_dict()
        data["policy"] = result.policy
        data["policy_file"] = str(written) if written else None
        data["report"] = [str(p) for p in reports]
        data["config"] = str(used) if used else None
        click.echo(json.dumps(data, indent=2))
        return
    console = Console()
    console.print(policy_line(used, given=config_path is not None), highlight=False, soft_wrap=True)
    tune_table(result, console)
    if written:
        console.print(f"policy written to {written} (use it with --config, --pyguard-policy or Guard.from_toml)")
    else:
        console.print("no --out given: the policy was not written")
    if reports:
        console.print(f"report written to {reports[0]}")
