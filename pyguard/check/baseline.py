"""The stored baseline: a :class:`~pyguard.check.summary.RunSetSummary` as JSON.

It keeps counts per task type (runs per outcome, the iteration histogram, per-run token totals), so a later
run set can be compared with it by a statistical test. The file is versioned (``format``, ``version``) and
written deterministically (sorted keys) so that it diffs well in a repository.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from pyguard.base.errors import InputError
from pyguard.base.safe_reader import check_depth, loads, read_file_bytes
from pyguard.check.summary import RunSetSummary

__all__: list[str] = []


def baseline_json(summary: RunSetSummary) -> str:
    """The baseline file's text for ``summary``."""
    return json.dumps(summary.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"


def write_baseline(summary: RunSetSummary, path: str | Path) -> Path:
    """Write ``summary`` as a baseline file at ``path`` (parents created); returns the path."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(baseline_json(summary), encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write the baseline {str(path)!r}: {exc.strerror or exc}") from exc
    return path


def read_baseline(path: str | Path) -> RunSetSummary:
    """Read a baseline written by :func:`write_baseline`; InputError names the file and what is wrong."""
    path = Path(path)
    try:
        text = read_file_bytes(path, what="the baseline")  # the one safe reader: a regular file, its size limit
    except InputError as exc:
        raise InputError(f"{exc}; make one with --write-baseline") from None
    try:
        data = loads(text, source=str(path))  # the safe reader: depth and integer limits
        check_depth(data, source=f"the baseline {str(path)!r}")
    except json.JSONDecodeError as exc:
        raise InputError(
            f"the baseline {str(path)!r} is not JSON ({exc.msg} at line {exc.lineno}): "
            "regenerate it with --write-baseline"
        ) from exc
    if not isinstance(data, dict) or data.get("format") != "pyguard-check-baseline":
        raise InputError(
            f'{str(path)!r} is not a pyguard check baseline (no "format": '
            '"pyguard-check-baseline"): regenerate it with --write-baseline'
        )
    try:
        return RunSetSummary.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise InputError(
            f"the baseline {str(path)!r} is invalid at {where}: {first['msg']}; regenerate it with --write-baseline"
        ) from exc
