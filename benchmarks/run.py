"""Run one benchmark suite: ``python benchmarks/run.py NAME [--quick] [--json] [--data DIR] [--config TOML] [--loso]``.

Each suite is a module ``benchmarks/suites/NAME.py`` with:

- ``run(quick: bool) -> dict``: does the measuring and returns a JSON-serialisable dict;
- ``render(result: dict, console) -> None`` (optional): prints rich tables for people.

With ``--json`` exactly one JSON object is printed on stdout (progress, if any, goes to stderr).
Every result carries ``suite``, ``quick``, ``date`` and ``machine`` so a figure can be traced to its run.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib
import inspect
import json
import os
import platform
import sys
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
    }


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
    result = suite.run(quick=args.quick, **extra)
    result = {
        "suite": args.name,
        "quick": args.quick,
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        **result,
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
