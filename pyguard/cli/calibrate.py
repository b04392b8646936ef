"""``pyguard calibrate``: recommend maxIterations per task type, from recorded runs or from a live calibration.

    pyguard calibrate RUNS --failure-cost D [--format pyguard|openai] [--json] [--out DIR]
    pyguard calibrate --live TASKS --repeats R --failure-cost D --out DIR [--traces DIR] [--threads N]
                      [--cap N] [--max-runs N] [--json]

The live form runs each task of TASKS R times against the Java agent (observe-only, with a generous cap), writing
one trace per run to ``--traces`` (default ``OUT/traces``) as runs finish; the same command again resumes where it
stopped. The traces are ordinary recorded runs: ``pyguard calibrate OUT/traces --failure-cost D2`` recalibrates
them for another failure cost without running anything.

Exit status (:mod:`pyguard.cli.exit_codes`): 0 when a recommendation was made (or a live calibration stopped at
--max-runs with runs still to do), 1 when a run failed, 2 on bad input (the message names the value and what to do),
3 when the JVM cannot start or an optional extra is missing, 130 when interrupted.
"""

from __future__ import annotations

import json
from typing import Any

import click
from rich.console import Console
from rich.markup import escape

from pyguard.base.errors import InputError, PyguardError
from pyguard.calibrate import calibrate_runs, make_config
from pyguard.calibrate.parquet import calibrate_parquet
from pyguard.calibrate.report import report_json, report_table, require_plots, write_report
from pyguard.cli._runs import RUNS_PATH, runs_options, via_columns
from pyguard.cli.exit_codes import ExitCode, exit_code_for

__all__: list[str] = []

_LIVE_ONLY = ("repeats", "traces", "threads", "cap", "max_runs")


@click.command(name="calibrate")
@click.argument("runs", required=False, type=RUNS_PATH)
@click.option(
    "--live",
    "live_tasks",
    type=click.Path(path_type=str),
    default=None,
    metavar="TASKS",
    help="Run the task set TASKS (.toml or .json) against the Java agent, then calibrate from those runs.",
)
@runs_options
@click.option(
    "--failure-cost",
    type=float,
    default=None,
    help="d: cost of a run that does not succeed within the cap (same unit as the price; tokens without one).",
)
@click.option(
    "--price-per-1k-tokens", type=float, default=None, help="Price of 1,000 tokens; cost is in tokens without it."
)
@click.option(
    "--cost-per-call",
    type=float,
    default=None,
    help="Cost of one model call (unit of --failure-cost) for task types without token usage: they are "
    "calibrated in model calls at this cost.",
)
@click.option(
    "--estimate-tokens-from-text",
    is_flag=True,
    help="Estimate the tokens of calls without usage from text length (4 characters per token); the "
    "report says which figures are estimates.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object on stdout.")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=str),
    default=None,
    help="Write report.md, PNG plots, calibration.json and Java/properties/TOML snippets to this directory.",
)
@click.option("--repeats", type=int, default=None, help="--live: runs per task (default: the task file's 'repeats').")
@click.option(
    "--traces",
    type=click.Path(path_type=str),
    default=None,
    help="--live: directory of the run traces (default OUT/traces); rerunning resumes from it.",
)
@click.option("--threads", type=int, default=None, help="--live: runs in parallel (default 2).")
@click.option(
    "--cap",
    type=int,
    default=None,
    help="--live: the agent's own cap per run, generous (default: the task file's 'cap', else 100).",
)
@click.option(
    "--max-runs",
    type=int,
    default=None,
    help="--live: run at most this many new runs, then stop (run the command again to continue).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@click.option("--bootstrap", type=int, default=1000, show_default=True, help="Bootstrap resamples (at least 20).")
@click.option("--confidence", type=float, default=0.95, show_default=True, help="Level of the intervals.")
@click.pass_context
def calibrate(
    ctx: click.Context,
    runs: str | None,
    live_tasks: str | None,
    fmt: str | None,
    failure_cost: float | None,
    price_per_1k_tokens: float | None,
    cost_per_call: float | None,
    estimate_tokens_from_text: bool,
    as_json: bool,
    out_dir: str | None,
    repeats: int | None,
    traces: str | None,
    threads: int | None,
    cap: int | None,
    max_runs: int | None,
    seed: int,
    bootstrap: int,
    confidence: float,
) -> None:
    """Recommend maxIterations per task type from recorded runs (RUNS: pyguard traces or OpenAI messages), or from
    a live calibration (--live TASKS: each task run --repeats times against the Java agent)."""
    err = Console(stderr=True)
    live_opts: dict[str, Any] = dict(repeats=repeats, traces=traces, threads=threads, cap=cap, max_runs=max_runs)
    live_info: dict | None = None
    try:
        _check_inputs(runs, live_tasks, fmt, failure_cost, live_opts)
        if out_dir is not None:
            require_plots()  # a missing 'plot' extra is said before any run, not after
        config = make_config(
            failure_cost=failure_cost,
            price_per_1k_tokens=price_per_1k_tokens,
            seed=seed,
            bootstrap=bootstrap,
            confidence=confidence,
            cost_per_call=cost_per_call,
            estimate_tokens_from_text=estimate_tokens_from_text,
        )
        if live_tasks is not None:
            result = _run_live(live_tasks, out_dir, err, **live_opts)
            live_info = {"tasks": live_tasks, "traces": result[1], **result[0].summary()}
            if not result[0].complete:
                _print_incomplete(live_info, as_json, err)
                return
            report = calibrate_runs(result[0].records, config)
            _agent_caps_json(result[0].records, live_info)
        else:
            assert runs is not None  # checked above: RUNS or --live TASKS
            path = runs
            # a Parquet file with no load option: DuckDB summarises its columns; else (or a row it cannot read) the loader
            report = via_columns(
                path, fmt, lambda: calibrate_parquet(path, config), lambda loaded: calibrate_runs(loaded, config)
            )
        written = write_report(report, out_dir) if out_dir is not None else []
    except PyguardError as exc:  # bad input 2; no JVM or a missing extra (Parquet needs 'columnar') 3; a run failed 1
        err.print(f"[bold red]Error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        ctx.exit(exit_code_for(exc))
        return
    except KeyboardInterrupt:
        err.print(
            "interrupted: the runs finished so far are kept; run the same command again to resume",
            highlight=False,
            soft_wrap=True,
        )
        ctx.exit(ExitCode.INTERRUPTED)
        return
    _print_result(report, live_info, as_json, err, written, out_dir)


def _check_inputs(
    runs: str | None, live_tasks: str | None, fmt: str | None, failure_cost: float | None, live_opts: dict[str, Any]
) -> None:
    """InputError unless the command was given RUNS or --live TASKS (not both), only options that apply to it, and
    --failure-cost."""
    if runs is None and live_tasks is None:
        raise InputError(
            "nothing to calibrate: pass RUNS (recorded runs: a trace file or folder) or "
            "--live TASKS (a task set to run against the Java agent)"
        )
    if runs is not None and live_tasks is not None:
        raise InputError(
            f"pass either RUNS ({runs!r}) or --live TASKS ({live_tasks!r}), not both; to calibrate "
            "from a live calibration's runs again, pass its traces folder as RUNS"
        )
    if runs is not None:
        given = [f"--{k.replace('_', '-')}" for k in _LIVE_ONLY if live_opts[k] is not None]
        if given:
            raise InputError(f"{', '.join(given)} only apply with --live TASKS; RUNS are already recorded")
    elif fmt is not None:
        raise InputError(f"--format {fmt} applies to RUNS; a live calibration writes pyguard traces")
    if failure_cost is None:
        raise InputError(
            "missing --failure-cost D: the cost of a run that does not succeed within the cap (a human picking "
            "it up, a lost sale), in the unit of --price-per-1k-tokens, or in tokens without a price"
        )


def _print_result(
    report: Any, live_info: dict | None, as_json: bool, err: Console, written: list, out_dir: str | None
) -> None:
    """The result on stdout (JSON, or the table fitted to the console's width), the notes on stderr."""

    if as_json:
        if live_info is None:
            click.echo(report_json(report))
        else:
            click.echo(json.dumps({**json.loads(report_json(report)), "live": live_info}, indent=2))
    else:
        out = Console()
        out.print(report_table(report, out.width))
    for skipped in report.skipped:
        err.print(
            f"[yellow]not calibrated:[/] {escape(skipped.task_type)} ({skipped.runs} runs): {escape(skipped.reason)}",
            highlight=False,
            soft_wrap=True,
        )
    for warning in report.warnings:
        err.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False, soft_wrap=True)
    if live_info is not None and not as_json:
        err.print(
            f"live: {live_info['ran']} runs now, {live_info['already_done']} resumed from {live_info['traces']}",
            highlight=False,
            soft_wrap=True,
        )
    if written:
        err.print(f"wrote {len(written)} files to {out_dir} (report.md, plots/, snippets)", highlight=False)


def _run_live(
    tasks_path: str,
    out_dir: str | None,
    err: Console,
    *,
    repeats: int | None,
    traces: str | None,
    threads: int | None,
    cap: int | None,
    max_runs: int | None,
):  # noqa: ANN202
    from pathlib import Path

    # lazy: only with --live: live calibration loads the guard and the JVM edge, an offline one never does
    from pyguard.live.calibration import load_tasks, run_live

    if traces is None:
        if out_dir is None:
            raise InputError(
                "--live needs somewhere to keep its runs so an interrupted calibration resumes: pass "
                "--out DIR (runs go to DIR/traces) or --traces DIR"
            )
        traces = str(Path(out_dir) / "traces")
    for name, value in (("--repeats", repeats), ("--threads", threads), ("--cap", cap), ("--max-runs", max_runs)):
        if value is not None and value < 1:
            raise InputError(f"{name} {value} must be a positive integer")
    task_set = load_tasks(tasks_path)
    result = run_live(
        task_set,
        traces,
        repeats=repeats,
        cap=cap,
        threads=threads or 2,
        limit=max_runs,
        progress=True if err.is_terminal else "lines",  # a bar on a terminal, plain lines in a log or a pipe
    )
    for run_id in result.ignored[:5]:
        err.print(
            f"[yellow]warning:[/] {escape(run_id)} in {escape(traces)} is not in the plan: not used",
            highlight=False,
            soft_wrap=True,
        )
    return result, traces


def _agent_caps_json(records: Any, live_info: dict) -> None:
    """The agent's own maxToolCallingRoundTrips where it ended runs, in the live JSON (the report warns of it)."""
    # lazy: only with --live: live calibration loads the guard and the JVM edge, an offline one never does
    from pyguard.live.calibration.caps import agent_caps

    caps = agent_caps(records)
    if caps:
        live_info["agent_caps"] = [c.model_dump() for c in caps]


def _print_incomplete(info: dict, as_json: bool, err: Console) -> None:
    err.print(
        f"stopped at --max-runs: {info['ran']} runs now, {info['planned'] - info['remaining']} of "
        f"{info['planned']} done, {info['remaining']} to go; run the same command again to continue",
        highlight=False,
        soft_wrap=True,
    )
    if as_json:
        click.echo(json.dumps({"task_types": [], "live": info}, indent=2))
