"""``pyguard fuzz``: search for the loops your guard misses on your agent's own tools, and for legitimate runs it stops.

    pyguard fuzz --tools com.acme.LogisticsTools --classpath target/agent.jar --task "Order 12345 is late. Why?" \\
        --budget 10 --examples 40 --out tests/scenarios/fuzz

Each finding is shrunk to the smallest script (hypothesis) and, with ``--out``, saved as a scenario file to keep as a
regression test. Exit 0 when nothing was found, 1 when something was, 2 for bad input, 3 when the JVM or a class
cannot be had.
"""

from __future__ import annotations

import glob
import json
from pathlib import Path

import click

from pyguard.base.errors import JvmError, PyguardError
from pyguard.cli.exit_codes import ExitCode, fail
from pyguard.engine import PolicyConfig

__all__: list[str] = []


@click.command()
@click.option(
    "--tools", "tools", required=True, metavar="CLASS", help="the agent's @Tool class (no-argument constructor)"
)
@click.option("--classpath", "classpath", multiple=True, metavar="PATHS", help="jars, folders or globs (repeatable)")
@click.option("--task", default="Please help with my request.", show_default=True, help="the user message of each run")
@click.option(
    "--budget",
    default=10,
    show_default=True,
    type=click.IntRange(1, 200),
    help="model calls within which the guard must stop a loop",
)
@click.option(
    "--examples", default=40, show_default=True, type=click.IntRange(1, 10_000), help="scripts tried per search"
)
@click.option(
    "--policy",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="the guard's policy TOML (default: the nearest pyguard.toml, else the defaults)",
)
@click.option(
    "--only", "only", multiple=True, metavar="TOOL", help="call only this tool (repeatable; the agent keeps all)"
)
@click.option(
    "--false-stops/--no-false-stops",
    default=True,
    show_default=True,
    help="also search for legitimate runs the guard stops",
)
@click.option(
    "--out", type=click.Path(file_okay=False, path_type=Path), help="save each finding as a scenario file here"
)
@click.option("--json", "as_json", is_flag=True, help="print the findings as JSON")
def fuzz(
    tools: str,
    classpath: tuple[str, ...],
    task: str,
    budget: int,
    examples: int,
    policy: Path | None,
    only: tuple[str, ...],
    false_stops: bool,
    out: Path | None,
    as_json: bool,
) -> None:
    """Search for misbehaving model scripts (repeat, rephrase, alternate, vary an id) that escape the guard."""
    # lazy: the guard and the JVM edge load once this command runs, not when the CLI lists it
    from pyguard.jvm import jclass, start_jvm
    from pyguard.live.fuzzing import AgentFuzzer
    from pyguard.live.guard import Guard

    entries = [p for e in classpath for p in (sorted(glob.glob(e)) if glob.has_magic(e) else [e])]
    try:
        config = PolicyConfig.from_file(policy) if policy is not None else PolicyConfig.discover()[0]
        start_jvm(classpath=entries)
        fuzzer = AgentFuzzer(Guard(config=config, trace_dir=None), jclass(tools)(), task=task, budget=budget, only=only)
    except TypeError as exc:  # JPype's "Class x is not found"
        fail(JvmError(f"{exc}: check --tools and --classpath ({', '.join(entries) or 'none given'})"))
    except PyguardError as exc:
        fail(exc)
    findings = [f for f in (fuzzer.escape(examples), fuzzer.false_stop(examples) if false_stops else None) if f]
    saved = [str(f.save(out)) for f in findings] if out is not None else []
    if as_json:
        click.echo(json.dumps({"findings": [f.model_dump(mode="json") for f in findings], "saved": saved}, indent=2))
    else:
        tools_called = ", ".join(s.name for s in fuzzer.specs)
        click.echo(f"searched {examples} scripts per search over {tools_called}, budget {budget} model calls")
        for f in findings:
            click.echo(f"{f.kind}: {f.summary()}")
        for path in saved:
            click.echo(f"saved {path}")
        if not findings:
            click.echo(
                "nothing found: every misbehaviour tried was stopped within the budget, no legitimate run stopped"
            )
    raise SystemExit(ExitCode.FAILED if findings else ExitCode.OK)
