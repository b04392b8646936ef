"""A directory of prepared real recordings: its sources (one folder each, with a ``source.toml`` manifest), their
files, and their runs read through pyguard's loader. Shared by the ``real_replay`` and ``tune`` suites."""

from __future__ import annotations

import glob
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = ["load_source", "manifests", "source_files"]


def manifests(data: Path) -> list[tuple[str, Path, dict]]:
    if not data.is_dir():
        raise SystemExit(f"--data {data}: not a directory; run benchmarks/real_data/prepare.py --out {data} first")
    found = []
    for manifest in sorted(data.glob("*/source.toml")):
        with open(manifest, "rb") as f:
            spec = tomllib.load(f)
        found.append((str(spec.get("name", manifest.parent.name)), manifest.parent, spec))
    if not found:
        raise SystemExit(
            f"--data {data}: no <source>/source.toml inside; run benchmarks/real_data/prepare.py --out {data}"
        )
    return found


def source_files(folder: Path, spec: dict) -> list[str]:
    files = sorted(
        {f for pattern in spec.get("runs", ["**/*.json*"]) for f in glob.glob(str(folder / pattern), recursive=True)}
    )
    if not files:
        raise SystemExit(f"{folder}: no file matches runs = {spec.get('runs')}")
    return files


def load_source(folder: Path, spec: dict, files: list[str] | None = None):  # noqa: ANN202
    from pyguard.loading import load_runs

    labels = spec.get("labels")
    return load_runs(
        files or source_files(folder, spec),
        format=spec.get("format"),
        terminal_tools=spec.get("terminal_tools") or None,
        labels=str(folder / labels) if labels else None,
    )
