"""``pyguard replay RUNS``: where the guard would have stopped each recorded run, and what that saves.

Exit status (:mod:`pyguard.cli.exit_codes`): 0 replayed; 2 bad input or configuration (the message says what and
where); 3 an optional extra missing (Parquet, Ray); 1 any other pyguard error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pyguard.base.errors import InputError, PyguardError
from pyguard.cli._policy import config_option, load_policy, policy_line
from pyguard.cli._runs import RUNS_PATH, runs_options, via_columns
from pyguard.cli.exit_codes import fail
from pyguard.parallel import replay_parallel
from pyguard.replay import ReplayReport

if TYPE_CHECKING:
    from rich.console import JustifyMethod

    from pyguard.parallel import Backend

__all__: list[str] = []


def _fmt(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _share(part: int | None, total: int | None) -> str:
    """``"53% of 169"``: the share saved of the total (the saved count itself is in --json)."""
    if part is None or total is None:
        return "-"
    return f"{part / total:.0%} of {total:,}" if total else "0 of 0"


def _type_name(name: str) -> str:
    return "all runs" if name == "*" else escape(name)


def render_runs(report: ReplayReport, console: Console) -> None:
    """One table row per run (``--runs``): short cells, so that a row stays on one line at 80 columns (CI logs); each
    stopped run's reason follows the table on lines of its own, wrapped."""
    table = Table(title="pyguard replay: runs", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for name, justify in [
        ("run", "left"),
        ("type", "left"),
        ("ok", "center"),
        ("iters", "right"),
        ("stop", "right"),
        ("why", "left"),
        ("reflect", "left"),
        ("calls saved", "right"),
        ("tokens saved", "right"),
    ]:
        # ids up to 24 characters stay whole on their line (longer ones fold), task types are cut short
        width = {"run": (10, 20), "type": (4, 10), "reflect": (None, 9)}.get(name, (None, None))
        table.add_column(
            name,
            justify=justify,  # type: ignore[arg-type]
            overflow="ellipsis" if name == "type" else "fold",
            min_width=width[0],
            max_width=width[1],
        )
    reasons: list[str] = []
    for r in report.runs:
        iters = f"{r.iterations}" + ("" if r.complete else "?") + ("+" if r.censored else "")
        why = (r.outcome.value if r.outcome is not None else "stop") if r.stop_at is not None else "-"
        if r.stop_at is not None and r.reason:
            reasons.append(f"{escape(r.id)} (stop at {r.stop_at}): {escape(r.reason)}")
        table.add_row(
            escape(r.id),
            escape(r.task_type or "-"),
            _fmt(r.success),
            iters,
            _fmt(r.stop_at),
            why,
            ",".join(map(str, r.reflect_at)) or "-",
            _short_saved(r.tool_calls, r.tool_calls_saved),
            _short_saved(None if r.tokens_partial else r.tokens, r.tokens_saved),  # a share of a lower bound: none
        )
    table.caption = "iters: ? incomplete (no footer), + cut off; saved: of the run's own (share)"
    console.print(table)
    for line in reasons:
        console.print(line, highlight=False, soft_wrap=False)


def _short_saved(total: int | None, saved: int | None) -> str:
    """Saved of the run's total, short: ``3 (43%)``; ``0``; ``-`` when unknown."""
    if total is None or saved is None:
        return "-"
    if not saved:
        return "0"
    return f"{saved:,} ({saved / total:.0%})" if total else f"{saved:,}"


def _ids(ids: list[str], limit: int = 5) -> str:
    shown = ", ".join(escape(i) for i in ids[:limit])
    return shown + (f" and {len(ids) - limit:,} more" if len(ids) > limit else "")


def render_report(report: ReplayReport, console: Console, *, runs: bool = False) -> None:
    """The human form: the summary per task type and overall (the per-run table first with ``runs=True``)."""
    if runs:
        render_runs(report, console)
    s = report.summary
    table = Table(
        title=f"pyguard replay: {s.runs:,} runs, {s.stopped:,} would be stopped",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
        caption="false stops: successful runs stopped, of the successful; failed stopped: failed runs "
        "stopped, of the failed; tool calls saved: of the failed runs' tool calls; tokens saved: "
        "of the tokens of the runs with usage; no usage: runs without token usage",
        caption_justify="left",
    )
    columns: list[tuple[str, JustifyMethod]] = [
        ("task type", "left"),
        ("runs", "right"),
        ("stopped", "right"),
        ("false\nstops", "right"),
        ("failed\nstopped", "right"),
        ("tool calls\nsaved\n(failed)", "right"),
        ("tokens\nsaved", "right"),
        ("no\nusage", "right"),
    ]
    for name, justify in columns:
        first = name == "task type"
        table.add_column(
            name,
            justify=justify,
            overflow="fold",
            no_wrap=not first,
            min_width=12 if first else None,
        )
    for t in s.task_types:
        if t.task_type == "*":
            table.add_section()
        table.add_row(
            _type_name(t.task_type),
            f"{t.runs:,}",
            f"{t.stopped:,}",
            f"{t.successful_stopped}/{t.successful}",
            f"{t.failed_stopped}/{t.failed}",
            _share(t.failed_tool_calls_saved, t.failed_tool_calls),
            _share(t.tokens_saved, t.tokens),
            f"{t.runs_without_usage:,}",
        )
    console.print(table)
    if s.successful.stopped:
        console.print(f"[yellow]{s.successful.stopped:,} successful run(s) would have been stopped.[/yellow]")
    if s.incomplete:
        console.print(f"Incomplete (no footer, counted as unlabelled): {_ids(s.incomplete)}")
    if s.censored:
        console.print(f"Cut off while still requesting tools: {len(s.censored):,} ({_ids(s.censored)})")
    console.print(s.reflections)
    if not runs:
        console.print("Per-run table: pass --runs; every figure per run: --json.")


@click.command(name="replay")
@click.argument("runs", type=RUNS_PATH)
@runs_options
@config_option("Policy configuration")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
@click.option("--runs", "per_run", is_flag=True, help="Also print one table row per run (the default is the summary).")
@click.option(
    "--backend",
    type=click.Choice(["processes", "ray", "serial"]),
    default="processes",
    show_default=True,
    help="Where runs are replayed: local worker processes (in-process for a few hundred runs), a Ray "
    "cluster (the 'ray' extra), or this process.",
)
@click.option(
    "--workers", type=click.IntRange(min=1), default=None, help="Worker processes (default: all local cores)."
)
@click.option("--ray-address", default=None, help="With --backend ray: the cluster's address (default: a local Ray).")
def replay(
    runs: str,
    fmt: str | None,
    config_path: Path | None,
    as_json: bool,
    per_run: bool,
    backend: Backend,
    workers: int | None,
    ray_address: str | None,
) -> None:
    """Replay recorded RUNS (a file or a directory of pyguard traces or OpenAI recordings) through a policy:
    where it would stop each run and why, and the tool calls and tokens that saves."""

    try:
        config, used = load_policy(config_path)

        def replay_from(source: Any) -> ReplayReport:
            return replay_parallel(source, config, backend=backend, workers=workers, address=ray_address)

        def loaded(records: Any) -> ReplayReport:
            if not records:
                raise InputError(f"{str(runs)!r} holds no runs; nothing to replay")
            return replay_from(records)

        # a Parquet file with no load option: the workers read its row groups; else the one loader
        report = via_columns(runs, fmt, lambda: replay_from(runs), loaded)
    except PyguardError as exc:  # bad input or configuration 2, a missing extra 3, the engine driven wrongly 1
        fail(exc)
    if as_json:
        click.echo(json.dumps({**report.to_dict(), "config": str(used) if used else None}, indent=2))
    else:
        click.echo(policy_line(used, given=config_path is not None))
        render_report(report, Console(), runs=per_run)
