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

from pyguard.cli._runs import RUNS_PATH, load_cli_runs, runs_options
from pyguard.errors import ConfigError, InputError, PyguardError
from pyguard.replay import GroupSummary, ReplayReport

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


@click.command(name="replay")
@click.argument("runs", type=RUNS_PATH)
@runs_options
@click.option("--config", "config_path", type=click.Path(path_type=Path), default=None,
              help="Policy configuration: a TOML file, or a pyproject.toml with [tool.pyguard] (default: the default policy).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
def replay(runs: str, fmt: str | None, config_path: Path | None, as_json: bool) -> None:
    """Replay recorded RUNS (a file or a directory of pyguard traces or OpenAI recordings) through a policy:
    where it would stop each run and why, and the tool calls and tokens that saves."""
    from pyguard.replay import replay_runs

    try:
        config = None
        if config_path is not None:
            from pyguard.engine import PolicyConfig

            config = PolicyConfig.from_toml(config_path)
        records = load_cli_runs(runs, fmt)
        if not records:
            raise InputError(f"{str(runs)!r} holds no runs; nothing to replay")
        report = replay_runs(records, config)
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
