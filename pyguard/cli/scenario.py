"""``pyguard scenario check``: each scripted tool call of a scenario checked against the agent's real ``@Tool`` methods.

    pyguard scenario check tests/scenarios/*.json --tools com.acme.LogisticsTools --classpath target/agent.jar \\
        --classpath 'target/dependency/*.jar'

Exit 0 when every call fits, 1 when some do not (each named with where it is in the file and the closest name), 2 for
a scenario that cannot be read, 3 when the JVM or a tool class cannot be had.
"""

from __future__ import annotations

import glob
from pathlib import Path

import click

from pyguard.base.errors import JvmError, PyguardError
from pyguard.cli.exit_codes import ExitCode, fail
from pyguard.testing.scenario_lint import lint_scenario

__all__: list[str] = []


@click.group()
def scenario() -> None:
    """Scenario files for the scripted model: check them against your agent's tools."""


@scenario.command("check")
@click.argument("scenarios", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--tools",
    "tools",
    multiple=True,
    required=True,
    metavar="CLASS",
    help="a class with the agent's @Tool methods (fully qualified; repeatable)",
)
@click.option(
    "--classpath",
    "classpath",
    multiple=True,
    metavar="PATHS",
    help="jars, class folders or globs holding those classes (repeatable)",
)
def check(scenarios: tuple[Path, ...], tools: tuple[str, ...], classpath: tuple[str, ...]) -> None:
    """Check that every tool call SCENARIOS script names a real tool, its real arguments, with values of their types."""
    # lazy: the guard and the JVM edge load once this command runs, not when the CLI lists it
    from pyguard.jvm import start_jvm
    from pyguard.jvm.scenarios import load_scenario
    from pyguard.jvm.tool_specs import tool_specs

    entries = [p for entry in classpath for p in (sorted(glob.glob(entry)) if glob.has_magic(entry) else [entry])]
    try:
        loaded = [(path, load_scenario(path)) for path in scenarios]
        start_jvm(classpath=entries)
        specs = tool_specs(list(tools))
    except TypeError as exc:  # JPype's "Class x is not found"
        fail(JvmError(f"{exc}: check --tools and --classpath ({', '.join(entries) or 'none given'})"))
    except PyguardError as exc:
        fail(exc)
    bad = 0
    for path, data in loaded:
        problems = lint_scenario(data, specs)
        bad += bool(problems)
        if problems:
            click.echo(f"{path}: {len(problems)} tool call(s) the agent's tools would not accept")
            for problem in problems:
                click.echo(f"  {problem}")
        else:
            click.echo(f"{path}: ok")
    names = ", ".join(sorted(s.name for s in specs))  # by name: Java lists methods in no fixed order
    click.echo(f"{len(loaded) - bad} of {len(loaded)} scenario(s) fit the tools ({names})")
    raise SystemExit(ExitCode.FAILED if bad else ExitCode.OK)
