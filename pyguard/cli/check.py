"""``pyguard check``: the CI gate. Exit 0 when every check holds, 1 when one fails, 2 on bad input, 3 when an optional
extra is missing (:mod:`pyguard.cli.exit_codes`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console

from pyguard.base.errors import PyguardError
from pyguard.check import (
    GateConfig,
    GateReport,
    check_runs,
    junit_xml,
    markdown,
    policy_replayer,
    read_baseline,
    render,
    report_json,
    write_baseline,
)
from pyguard.check.conversations import ConversationReport, by_conversation, render_conversations
from pyguard.check.parquet import check_parquet
from pyguard.check.report import write_text
from pyguard.cli._policy import config_option, policy_file, policy_line
from pyguard.cli._runs import RUNS_PATH, load_cli_runs, runs_options, via_columns
from pyguard.cli.exit_codes import fail
from pyguard.trace import LoadResult

__all__: list[str] = []


_rate = click.FloatRange(0.0, 1.0)


@click.command(name="check")
@click.argument("runs", type=RUNS_PATH)
@runs_options
@config_option("Policy used to replay recordings")
@click.option(
    "--baseline",
    "baseline_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Baseline JSON to compare with (made by --write-baseline).",
)
@click.option(
    "--write-baseline",
    "write_baseline_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write these runs' summary as a baseline JSON.",
)
@click.option("--max-stall-rate", type=_rate, help="Fail when a task type's stalled share is above this.")
@click.option("--max-expired-rate", type=_rate, help="Fail when a task type's expired share is above this.")
@click.option(
    "--max-p95-iterations",
    type=click.IntRange(min=1),
    help="Fail when a task type's 95th percentile of model calls per run is above this.",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="Family-wise false-alarm rate of the baseline comparison (Holm).",
)
@click.option(
    "--underpowered",
    type=click.Choice(["fail", "warn"]),
    default="fail",
    show_default=True,
    help="A large worsening the runs are too few to confirm: fail the gate, or pass it with a loud warning.",
)
@click.option(
    "--junit-xml",
    "junit_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write JUnit XML, one test case per check.",
)
@click.option(
    "--markdown",
    "markdown_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write a Markdown summary for a pull-request comment.",
)
@click.option(
    "--by-conversation",
    "by_conversation_",
    is_flag=True,
    help="Also report the runs per conversation (an attached agent's chat-memory id): spend, outcomes, budget stops.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with every check instead of tables.")
def check(
    runs: str,
    fmt: str | None,
    config_path: Path | None,
    baseline_path: Path | None,
    write_baseline_path: Path | None,
    max_stall_rate: float | None,
    max_expired_rate: float | None,
    max_p95_iterations: int | None,
    alpha: float,
    underpowered: str,
    junit_path: Path | None,
    markdown_path: Path | None,
    by_conversation_: bool,
    as_json: bool,
) -> None:
    """Check the runs in RUNS against thresholds and a baseline.

    Statistics per task type (and overall): the outcome mix, iterations p50/p95, tokens per run. The baseline
    comparison uses one-sided two-proportion z-tests (Fisher's exact for small counts) for rates and
    Mann-Whitney U tests for iterations and tokens, Holm-adjusted so that unchanged behaviour fails the gate
    with probability at most --alpha; below 10 runs the rank test is a permutation test. Every baseline check says
    the smallest change it detects; a large worsening too few runs cannot confirm fails (--underpowered), a check
    that cannot detect a change of the size that matters is a warning. Exit 0: all checks hold; 1: a check failed; 2: bad input; 3: an optional extra missing.
    """
    try:
        used = policy_file(config_path)
        gate = GateConfig(
            max_stall_rate=max_stall_rate,
            max_expired_rate=max_expired_rate,
            max_p95_iterations=max_p95_iterations,
            alpha=alpha,
            underpowered=underpowered,
        )
        baseline = read_baseline(baseline_path) if baseline_path is not None else None

        def columnar() -> GateReport:  # DuckDB: runs never loaded (no load option to apply)

            return check_parquet(runs, gate, baseline, make_replayer=lambda: policy_replayer(used))

        seen: list[LoadResult] = []

        def loaded(records: LoadResult) -> GateReport:
            seen.append(records)
            told = fmt if fmt in ("pyguard", "openai") else None
            return check_runs(list(records), gate, baseline, fmt=told, make_replayer=lambda: policy_replayer(used))

        report = via_columns(runs, fmt, columnar, loaded)
        conversations: ConversationReport | None = None
        if by_conversation_:
            conversations = by_conversation(seen[0] if seen else load_cli_runs(runs, fmt))
        if write_baseline_path is not None:
            write_baseline(report.summary, write_baseline_path)
        if junit_path is not None:
            write_text(junit_path, junit_xml(report), "JUnit XML report")
        if markdown_path is not None:
            write_text(markdown_path, markdown(report), "Markdown summary")
    except PyguardError as exc:
        fail(exc)
    if as_json:
        extra = {} if conversations is None else {"conversations": conversations.model_dump(mode="json")}
        click.echo(
            json.dumps(
                {**json.loads(report_json(report)), "config": str(used) if used else None, **extra}, sort_keys=True
            )
        )
    else:
        click.echo(policy_line(used, given=config_path is not None))
        render(report, Console(file=sys.stdout))
        if conversations is not None:
            render_conversations(conversations, Console(file=sys.stdout))
        if write_baseline_path is not None:
            click.echo(f"baseline written to {write_baseline_path}")
    click.get_current_context().exit(report.exit_code)
