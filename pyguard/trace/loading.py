"""Load recorded runs from a file or a directory, in either format, detecting which when asked to.

``load_runs(path, format=None)``: ``format`` is ``"pyguard"`` (pyguard JSONL traces), ``"openai"``
(OpenAI chat-completions messages) or None to detect it per file. A directory is read recursively (files
ending in ``.jsonl``, ``.ndjson`` or ``.json``; hidden files skipped) in sorted order; its files must all be
in one format. Run ids must be unique across everything loaded.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from pyguard.errors import InputError, TraceFormatError
from pyguard.events import RunRecord
from pyguard.trace.openai_import import import_openai
from pyguard.trace.reader import iter_lines, read_trace
from pyguard.trace.extra_formats import EXTRA_FORMATS, EXTRA_SUFFIXES, detect_extra, load_extra
from pyguard.trace.records import RECORD_TYPES, TraceFile, TraceRun

__all__ = ["FORMATS", "TraceFormatName", "detect_format", "load_traces", "load_runs"]

TraceFormatName = Literal["pyguard", "openai"]
FORMATS: tuple[str, ...] = ("pyguard", "openai", *EXTRA_FORMATS)
_SUFFIXES = (".jsonl", ".ndjson", ".json", *EXTRA_SUFFIXES)


def detect_format(path: str | os.PathLike[str]) -> TraceFormatName | None:
    """The format of one file from its first record; None when the file is empty (nothing to tell)."""
    p = str(path)
    if (extra := detect_extra(p)) is not None:  # hook: OTLP JSON spans, Parquet (pyguard/trace/extra_formats.py)
        return extra  # type: ignore[return-value]
    first = next(iter_lines(p), None)
    if first is None:
        return None
    number, raw, _ = first
    if raw.lstrip().startswith(b"["):
        return "openai"
    try:
        obj = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        obj = None
    if not isinstance(obj, dict):
        try:  # one pretty-printed OpenAI run object
            with open(p, "rb") as f:
                whole = json.load(f)
        except (json.JSONDecodeError, UnicodeDecodeError):
            whole = None
        if isinstance(whole, dict) and ("messages" in whole or "traj" in whole):
            return "openai"
        raise TraceFormatError(
            "cannot tell the format: the first record is not a JSON object; pass format='pyguard' or 'openai'",
            path=p,
            line=number,
        )
    is_pyguard = obj.get("type") in RECORD_TYPES
    is_openai = "messages" in obj or "traj" in obj
    if is_pyguard and is_openai:
        raise TraceFormatError(
            "the format is ambiguous: the first record has both a pyguard 'type' and OpenAI 'messages';"
            " pass format='pyguard' or 'openai'",
            path=p,
            line=number,
        )
    if is_pyguard:
        return "pyguard"
    if is_openai:
        return "openai"
    raise TraceFormatError(
        f"cannot tell the format: the first record has neither a pyguard 'type' ({', '.join(RECORD_TYPES)}) nor"
        " OpenAI 'messages'/'traj'; pass format='pyguard' or 'openai'",
        path=p,
        line=number,
    )


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(
            f
            for f in path.rglob("*")
            if f.is_file()
            and f.suffix.lower() in _SUFFIXES
            and not any(part.startswith(".") for part in f.relative_to(path).parts)
        )
        if not files:
            raise InputError(f"directory {str(path)!r} holds no .jsonl, .ndjson or .json files; nothing to load")
        return files
    raise InputError(f"{str(path)!r} does not exist; pass a trace file, a recording, or a directory of them")


def load_traces(path: str | os.PathLike[str], format: str | None = None) -> list[TraceFile]:
    """Every file under ``path`` read into a :class:`TraceFile` (OpenAI recordings have no decisions)."""
    if format is not None and format not in FORMATS:
        raise InputError(f"unknown format {format!r}; use {', '.join(map(repr, FORMATS))} or leave it out to detect it")
    root = Path(path)
    files = _files(root)
    chosen: dict[str, str] = {}
    for f in files:
        fmt = format or detect_format(f)
        if fmt is not None:
            chosen[str(f)] = fmt
    kinds = sorted(set(chosen.values()))
    if len(kinds) > 1:
        example = {k: next(f for f, v in chosen.items() if v == k) for k in kinds}
        raise InputError(
            f"{str(root)!r} mixes formats: "
            + ", ".join(f"{example[k]!r} is {k}" for k in kinds)
            + "; load them separately"
        )
    if not chosen:
        raise InputError(f"{str(root)!r} holds no records; nothing to load")
    out: list[TraceFile] = []
    owner: dict[str, str] = {}
    for name, fmt in chosen.items():
        if fmt in EXTRA_FORMATS:
            tf = load_extra(name, fmt)
        elif fmt == "pyguard":
            tf = read_trace(name)
        else:
            tf = TraceFile(path=name, runs=[TraceRun(record=r, source=name) for r in import_openai(name)])
        for run in tf.runs:
            if run.run_id in owner:
                raise InputError(
                    f"run id {run.run_id!r} appears in {owner[run.run_id]!r} and in {name!r}; run ids must be unique"
                )
            owner[run.run_id] = name
        out.append(tf)
    return out


def load_runs(path: str | os.PathLike[str], format: str | None = None) -> list[RunRecord]:
    """All runs in a file or directory, in file order. Runs with no footer come back with ``end=None``."""
    return [run.record for tf in load_traces(path, format) for run in tf.runs]
