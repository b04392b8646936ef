"""``pyguard replay RUNS``: where the guard would have stopped each recorded run, and what that saves.

Exit codes: 0 replayed; 2 bad input or configuration (the message says what and where); 1 any other
pyguard error.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from pyguard.errors import ConfigError, InputError, PyguardError
from pyguard.replay import GroupSummary, ReplayReport
from pyguard.trace.loading import FORMATS

__all__ = ["replay", "render_report"]


def _fmt(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _saved(total: int | None, saved: int | None) -> str:
    if total is None:
        return "-"
    if not saved:
        return f"{total} / 0"
    share = f" ({saved / total:.0%})" if total else ""
    return f"{total} / {saved}{share}"


def render_report(report: ReplayReport, console: Console) -> None:
    """The human form: one table row per run, then the summary by recorded outcome."""
    table = Table(title="pyguard replay", show_lines=False)
    for name, justify in [("run", "left"), ("success", "center"), ("iters", "right"), ("stop at", "right"),
                          ("reason", "left"), ("reflect at", "left"), ("tool calls / saved", "right"),
                          ("tokens / saved", "right")]:
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for r in report.runs:
        iters = f"{r.iterations}" + ("" if r.complete else " (incomplete)") + (" (cut off)" if r.censored else "")
        table.add_row(
            r.id, _fmt(r.success), iters, _fmt(r.stop_at), r.reason or "-",
            ", ".join(map(str, r.reflect_at)) or "-", _saved(r.tool_calls, r.tool_calls_saved),
            _saved(r.tokens, r.tokens_saved),
        )
    console.print(table)
    s = report.summary
    summary = Table(title=f"summary: {s.runs} runs, {s.stopped} stopped", show_lines=False)
    summary.add_column("recorded", no_wrap=True, min_width=10)
    for name in ("runs", "stopped", "reflected", "tool calls / saved", "tokens / saved", "no usage"):
        summary.add_column(name, justify="right")
    groups: list[tuple[str, GroupSummary]] = [("successful", s.successful), ("failed", s.failed),
                                              ("unlabelled", s.unlabelled)]
    for label, g in groups:
        summary.add_row(label, str(g.runs), str(g.stopped), str(g.reflected), _saved(g.tool_calls, g.tool_calls_saved),
                        _saved(g.tokens, g.tokens_saved), str(g.runs_without_usage))
    console.print(summary)
    if s.successful.stopped:
        console.print(f"[yellow]{s.successful.stopped} successful run(s) would have been stopped.[/yellow]")
    if s.incomplete:
        console.print(f"Incomplete (no footer, counted as unlabelled): {', '.join(s.incomplete)}")
    if s.censored:
        console.print(f"Cut off while still requesting tools: {', '.join(s.censored)}")
    console.print(s.reflections)


def _is_parquet(path: Path) -> bool:
    from pyguard.store.parquet import is_parquet

    return is_parquet(path)


@click.command(name="replay")
@click.argument("runs", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default=None,
              help="Format of RUNS (default: detect it from each file).")
@click.option("--config", "config_path", type=click.Path(path_type=Path), default=None,
              help="Policy configuration: a TOML file, or a pyproject.toml with [tool.pyguard] (default: the default policy).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
@click.option("--backend", type=click.Choice(["processes", "ray", "serial"]), default="processes", show_default=True,
              help="Where runs are replayed: local worker processes (in-process for a few hundred runs), a Ray "
                   "cluster (the 'ray' extra), or this process.")
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Worker processes (default: all local cores).")
@click.option("--ray-address", default=None, help="With --backend ray: the cluster's address (default: a local Ray).")
def replay(runs: Path, fmt: str | None, config_path: Path | None, as_json: bool, backend: str,
           workers: int | None, ray_address: str | None) -> None:
    """Replay recorded RUNS (a file or a directory of pyguard traces or OpenAI recordings) through a policy:
    where it would stop each run and why, and the tool calls and tokens that saves."""
    from pyguard.parallel import replay_parallel
    from pyguard.trace import load_runs

    try:
        config = None
        if config_path is not None:
            from pyguard.engine import PolicyConfig

            config = PolicyConfig.from_toml(config_path)
        source = runs if fmt in (None, "parquet") and runs.is_file() and _is_parquet(runs) else None
        records = load_runs(runs, format=fmt) if source is None else None
        if records is not None and not records:
            raise InputError(f"{str(runs)!r} holds no runs; nothing to replay")
        report = replay_parallel(source if source is not None else records, config, backend=backend,  # type: ignore[arg-type]
                                 workers=workers, address=ray_address)
    except (InputError, ConfigError) as exc:
        click.echo(f"Error: {exc}", err=True)
        raise SystemExit(2) from None
    except PyguardError as exc:  # the engine was driven wrongly: not the input's fault
        click.echo(f"Error: {exc}", err=True)
        raise SystemExit(1) from None
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        render_report(report, Console())
