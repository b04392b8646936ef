"""Run one benchmark suite: ``python benchmarks/run.py NAME [--quick] [--json] [--data DIR] [--config TOML] [--loso]``.

Each suite is a module ``benchmarks/suites/NAME.py`` with:

- ``run(quick: bool) -> dict``: does the measuring and returns a JSON-serialisable dict;
- ``render(result: dict, console) -> None`` (optional): prints rich tables for people.

With ``--json`` exactly one JSON object is printed on stdout (progress, if any, goes to stderr).
Every result carries ``suite``, ``quick``, ``date``, ``command`` (as typed, with the ``PYGUARD_*`` environment
variables that were set), ``commit``, ``run_seconds`` and ``machine`` (with the load average when the suite started and ended) so a figure can
be traced to its run. A run worth keeping goes to ``benchmarks/results/`` (see ``benchmarks/results_page.py``).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib
import inspect
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def available() -> list[str]:
    return sorted(p.stem for p in (HERE / "suites").glob("*.py") if not p.stem.startswith("_"))


def machine() -> dict:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def command(argv: list[str]) -> str:
    """The command line as typed, with the ``PYGUARD_*`` environment variables set for it."""
    env = [f"{k}={shlex.quote(v)}" for k, v in sorted(os.environ.items()) if k.startswith("PYGUARD_")]
    return " ".join([*env, shlex.join(["python", "benchmarks/run.py", *argv])])


def commit() -> str | None:
    """The checked-out commit (with ``+dirty`` when tracked files differ from it), or None outside git."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=HERE, capture_output=True).returncode != 0
    except (OSError, subprocess.CalledProcessError):
        return None
    return sha + ("+dirty" if dirty else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/run.py", description=__doc__.splitlines()[0])
    parser.add_argument("name", help="suite name: " + ", ".join(available()))
    parser.add_argument("--quick", action="store_true", help="small sizes, finishes in under a minute")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument("--data", default=None, help="data directory, for suites that read one (real_replay)")
    parser.add_argument("--config", default=None, help="policy TOML, for suites that take one (real_replay)")
    parser.add_argument(
        "--loso",
        action="store_true",
        help="leave-one-source-out: choose the default without each source, measure on it (real_replay)",
    )
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    if args.name not in available():
        parser.error(f"unknown suite {args.name!r}; choose one of: {', '.join(available())}")
    suite = importlib.import_module(f"suites.{args.name}")
    extra = {
        k: v for k, v in (("data", args.data), ("config", args.config), ("loso", args.loso or None)) if v is not None
    }
    accepted = inspect.signature(suite.run).parameters
    if any(k not in accepted for k in extra):
        parser.error(f"suite {args.name!r} takes no {', '.join('--' + k for k in extra if k not in accepted)}")
    started = {"date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), "machine": machine()}
    clock = time.monotonic()
    result = suite.run(quick=args.quick, **extra)
    started["run_seconds"] = round(time.monotonic() - clock, 1)
    started["machine"]["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    result = {
        "suite": args.name,
        "quick": args.quick,
        **started,
        **result,
        "command": command(argv),
        "commit": commit(),
    }
    if args.json:
        json.dump(result, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        from rich.console import Console

        console = Console()
        render = getattr(suite, "render", None)
        if render is not None:
            render(result, console)
        else:
            console.print_json(json.dumps(result, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
