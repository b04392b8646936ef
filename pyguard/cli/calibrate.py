"""``pyguard calibrate RUNS --failure-cost D``: recommend maxIterations per task type from recorded runs.

Exit status: 0 when a recommendation was made, 2 on bad input (the message names the value and what to do).
"""

from __future__ import annotations

import click
from rich.console import Console
from rich.markup import escape

from pyguard.errors import InputError

__all__ = ["calibrate"]


@click.command(name="calibrate")
@click.argument("runs", type=click.Path(path_type=str))
@click.option("--format", "fmt", type=click.Choice(["pyguard", "openai"]), default=None,
              help="Format of RUNS (detected per file when left out).")
@click.option("--failure-cost", type=float, default=None,
              help="d: cost of a run that does not succeed within the cap (same unit as the price; tokens without one).")
@click.option("--price-per-1k-tokens", type=float, default=None, help="Price of 1,000 tokens; cost is in tokens without it.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object on stdout.")
@click.option("--out", "out_dir", type=click.Path(path_type=str), default=None,
              help="Write report.md, PNG plots, calibration.json and Java/properties/TOML snippets to this directory.")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@click.option("--bootstrap", type=int, default=1000, show_default=True, help="Bootstrap resamples (at least 20).")
@click.option("--confidence", type=float, default=0.95, show_default=True, help="Level of the intervals.")
@click.pass_context
def calibrate(
    ctx: click.Context,
    runs: str,
    fmt: str | None,
    failure_cost: float | None,
    price_per_1k_tokens: float | None,
    as_json: bool,
    out_dir: str | None,
    seed: int,
    bootstrap: int,
    confidence: float,
) -> None:
    """Recommend maxIterations per task type from recorded runs (pyguard traces or OpenAI messages)."""
    err = Console(stderr=True)
    try:
        if failure_cost is None:
            raise InputError(
                "missing --failure-cost D: the cost of a run that does not succeed within the cap (a human picking "
                "it up, a lost sale), in the unit of --price-per-1k-tokens, or in tokens without a price"
            )
        from pyguard.calibrate import calibrate_runs, make_config
        from pyguard.calibrate.report import report_json, report_table, write_report
        from pyguard.trace import load_runs

        config = make_config(failure_cost=failure_cost, price_per_1k_tokens=price_per_1k_tokens, seed=seed,
                             bootstrap=bootstrap, confidence=confidence)
        report = calibrate_runs(load_runs(runs, format=fmt), config)
        written = write_report(report, out_dir) if out_dir is not None else []
    except InputError as exc:
        err.print(f"[bold red]Error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        ctx.exit(2)
        return
    if as_json:
        click.echo(report_json(report))
    else:
        Console().print(report_table(report))
    for warning in report.warnings:
        err.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False, soft_wrap=True)
    if written:
        err.print(f"wrote {len(written)} files to {out_dir} (report.md, plots/, snippets)", highlight=False)
