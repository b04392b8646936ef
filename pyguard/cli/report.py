"""``pyguard report RUNS -o report.html``: recorded runs as one self-contained HTML page (:mod:`pyguard.report`).

RUNS is anything ``replay`` reads (pyguard traces, recordings of other agents, OTLP JSON, ...). A run whose trace
recorded the guard's decisions is drawn as it happened; any other is replayed through the policy (``--config``, else
the nearest pyguard.toml, else the defaults) and said so on the page.

Exit status (:mod:`pyguard.cli.exit_codes`): 0 the page was written; 2 bad input or options; 3 the ``plot`` extra
(matplotlib) is missing; 1 any other pyguard error.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import tempfile
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import click

from pyguard.base.errors import InputError, PyguardError
from pyguard.base.safe_reader import is_stream
from pyguard.cli._policy import config_option, load_policy
from pyguard.cli._runs import RUNS_PATH, load_cli_runs, runs_options
from pyguard.cli.exit_codes import fail
from pyguard.loading import load_traces
from pyguard.otel.capture import capture_on_spans
from pyguard.report import build_data, calibrate_figures, check_figures, render_page

__all__: list[str] = []


def _recorded_decisions(runs: str, fmt: str | None) -> dict[str, list]:
    """Run id -> the guard's decisions its trace recorded (the loader's runs carry none); read once more, its
    warnings already printed by the first read."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        files = load_traces(runs, fmt)
    return {run.run_id: list(run.decisions) for tf in files for run in tf.runs if run.decisions}


@contextlib.contextmanager
def _readable_twice(runs: str) -> Iterator[str]:
    """``runs`` itself, or for a stream (``-``, a pipe) a temporary copy: the runs and their decisions are two reads."""
    if not is_stream(runs):
        yield runs
        return
    with tempfile.TemporaryDirectory(prefix="pyguard-report-") as folder:
        copy = Path(folder) / "runs"
        with open(copy, "wb") as dst:
            if runs == "-":
                shutil.copyfileobj(sys.stdin.buffer, dst)
            else:
                with open(runs, "rb") as src:
                    shutil.copyfileobj(src, dst)
        yield str(copy)


def _content(flag: bool | None) -> bool:
    if flag is not None:
        return flag
    return capture_on_spans(None)


@click.command(name="report")
@click.argument("runs", type=RUNS_PATH)
@runs_options
@click.option(
    "-o",
    "--out",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The HTML file to write (one self-contained page).",
)
@config_option("Policy used to replay runs whose traces recorded no decisions")
@click.option(
    "--content/--no-content",
    default=None,
    help="Show the task, answers, reasons and evidence messages (default: the content-capture switch"
    " OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, off when unset).",
)
@click.option("--check", "with_check", is_flag=True, help="Add `pyguard check`'s figures per task type.")
@click.option(
    "--failure-cost",
    type=click.FloatRange(min=0.0, min_open=True),
    default=None,
    help="Add `pyguard calibrate`'s maxIterations per task type, with this failure cost (as in calibrate).",
)
@click.option("--price-per-1k-tokens", type=click.FloatRange(min=0.0), default=None, help="As in calibrate.")
@click.option(
    "--max-runs",
    type=click.IntRange(min=0),
    default=50,
    show_default=True,
    help="Draw the timelines of this many runs.",
)
@click.option("--title", default="pyguard report", show_default=True, help="The page's title.")
def report(
    runs: str,
    fmt: str | None,
    out: Path,
    config_path: Path | None,
    content: bool | None,
    with_check: bool,
    failure_cost: float | None,
    price_per_1k_tokens: float | None,
    max_runs: int,
    title: str,
) -> None:
    """Write recorded runs as one HTML page: per run its calls' information gain, tokens and budget, and where the
    guard reflected and stopped; for the set the outcome mix per task type."""
    try:
        if price_per_1k_tokens is not None and failure_cost is None:
            raise InputError("--price-per-1k-tokens applies to the calibration: give --failure-cost D with it")
        config, used = load_policy(config_path)
        with _readable_twice(runs) as source:
            loaded = load_cli_runs(source, fmt)
            decisions = _recorded_decisions(source, fmt)
        records = list(loaded)
        data = build_data(
            records,
            decisions,
            generated_at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            title=title,
            content=_content(content),
            config=config,
            max_runs=max_runs,
            check=check_figures(records, used) if with_check else None,
            calibrate=calibrate_figures(records, failure_cost, price_per_1k_tokens) if failure_cost else None,
            skipped=loaded.skipped,
        )
        page = render_page(data)
        try:
            out.write_text(page, encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot write the report to {str(out)!r}: {exc.strerror or exc}") from None
    except PyguardError as exc:
        fail(exc)
    drawn = len(data.runs)
    click.echo(
        f"report written to {out} ({len(page) / 1024:,.0f} KiB): {data.runs_total:,} run(s), {drawn:,} drawn"
        + ("" if data.content else "; content capture off (--content to show the runs' text)")
    )
