"""Outcome labels kept apart from the runs: a mapping run id -> success, read from the files benchmarks write.

``load_labels(path_or_mapping)`` accepts:

- a mapping ``{run_id: bool}`` (in memory or as a JSON object of booleans);
- SWE-bench reports: ``{"resolved_ids": [...], "unresolved_ids": [...], ...}`` (sb-cli / harness summaries;
  ids under ``completed_ids``/``submitted_ids`` that are not resolved count as failed), a per-instance
  ``report.json`` ``{instance_id: {"resolved": bool, ...}}``, or ``{"instances": [{"instance_id", "resolved"}]}``;
- JSON Lines / a JSON list of objects with an id (``id``, ``instance_id``, ``run_id``, ``task_id``) and a label
  (``success``, ``resolved``, ``valid``, ``reward`` (1 is success), ``passed``);
- a BFCL score file: a summary line ``{"accuracy", "correct_count", "total_count"}`` followed by the *failed*
  entries only: those are failed, every other run of the result file passed (``Labels.default`` is True).

A directory is read file by file (``report.json`` files of a SWE-bench log tree, for example) and merged.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pyguard.base.errors import InputError
from pyguard.base.safe_reader import check_depth, loads, read_source

__all__: list[str] = []

_ID_KEYS = ("id", "instance_id", "run_id", "task_id")
_LABEL_KEYS = ("success", "resolved", "valid", "passed", "reward")


class Labels(dict[str, bool]):
    """run id -> success; ``default`` is the label of a run the mapping does not name (None: unknown)."""

    def __init__(self, data: Mapping[str, bool] | None = None, default: bool | None = None) -> None:
        super().__init__(data or {})
        self.default = default

    def label(self, run_id: str) -> bool | None:
        return self.get(run_id, self.default)


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and math.isfinite(value):
        return value == 1
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def _from_object(obj: dict) -> Labels | None:
    if any(k in obj for k in ("resolved_ids", "unresolved_ids")):
        out = Labels()
        for key in ("completed_ids", "submitted_ids", "unresolved_ids", "error_ids", "empty_patch_ids"):
            for i in obj.get(key) or []:
                out[str(i)] = False
        for i in obj.get("resolved_ids") or []:
            out[str(i)] = True
        return out
    if isinstance(obj.get("instances"), list):
        return _from_rows(obj["instances"])
    if {"accuracy", "correct_count", "total_count"} <= set(obj):
        return Labels(default=True)  # a BFCL score summary with no failures listed
    out = Labels()
    for key, value in obj.items():
        b = _as_bool(value)
        if b is None and isinstance(value, dict):
            b = next((_as_bool(value[k]) for k in _LABEL_KEYS if k in value), None)
        if b is not None:
            out[str(key)] = b
    return out if out else None


def _from_rows(rows: list) -> Labels:
    out = Labels()
    for row in rows:
        if not isinstance(row, dict):
            continue
        rid = next(
            (row[k] for k in _ID_KEYS if isinstance(row.get(k), (str, int)) and not isinstance(row.get(k), bool)), None
        )
        b = next((_as_bool(row[k]) for k in _LABEL_KEYS if k in row and _as_bool(row[k]) is not None), None)
        if rid is not None and b is not None:
            out[str(rid)] = b
    return out


def _parse(text: str, name: str) -> Labels:
    stripped = text.strip()
    if not stripped:
        raise InputError(f"labels file {name!r} is empty; give a JSON mapping of run id -> true/false")
    try:
        data = loads(stripped, source=name)
    except json.JSONDecodeError:
        data = None
        rows = []
        for number, line in enumerate(stripped.splitlines(), start=1):
            try:
                rows.append(loads(line, source=name, line=number))
            except json.JSONDecodeError:
                continue
        if rows and isinstance(rows[0], dict) and {"accuracy", "total_count"} <= set(rows[0]):
            failed = [r for r in rows[1:] if isinstance(r, dict) and "id" in r]  # BFCL: failures only
            return Labels({str(r["id"]): False for r in failed}, default=True)
        data = rows
    check_depth(data, source=f"labels file {name!r}")  # the safe reader's nesting limit, as for every file
    if isinstance(data, dict):
        found = _from_object(data)
        if found is not None:
            return found
    elif isinstance(data, list):
        return _from_rows(data)
    raise InputError(
        f"cannot read labels from {name!r}: expected a JSON object of run id -> true/false, a SWE-bench report"
        " (resolved_ids / instances / report.json), JSON rows with an id and a label, or a BFCL score file"
    )


def load_labels(source: str | os.PathLike[str] | Mapping[str, Any] | None) -> Labels | None:
    """Labels from a mapping, a file or a directory of label files (merged; later files win)."""
    if source is None:
        return None
    if isinstance(source, Labels):
        return source
    if isinstance(source, Mapping):
        if any(_as_bool(v) is None for v in source.values()):  # a report object in memory
            found = _from_object(dict(source))
            if found is None:
                raise InputError(
                    "labels must map run ids to true/false, or be a SWE-bench report; got "
                    f"{dict(list(source.items())[:3])!r}"
                )
            return found
        return Labels({str(k): bool(_as_bool(v)) for k, v in source.items()})
    p = Path(source)
    if p.is_dir():
        merged = Labels()
        files = sorted(f for f in p.rglob("*.json") if f.is_file())
        if not files:
            raise InputError(f"labels directory {str(p)!r} holds no .json files")
        for f in files:
            got = _parse(_read(f), str(f))
            merged.update(got)
            if got.default is not None:
                merged.default = got.default
        return merged
    return _parse(_read(p), str(p))


def _read(path: Path) -> str:
    """A labels file through the safe reader (:mod:`pyguard.base.safe_reader`): no line over the limit."""
    if not path.exists():
        raise InputError(f"cannot read labels file {str(path)!r}: no such file; pass a JSON file of labels")
    src = read_source(path)
    src.refuse_oversize()
    return src.text()
