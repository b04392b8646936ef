"""Load recorded runs from a file or a directory, in either format, detecting which when asked to.

``load_runs(path, format=None)``: ``format`` is ``"pyguard"`` (pyguard JSONL traces), ``"openai"``
(OpenAI chat-completions messages) or None to detect it per file. A directory is read recursively (files
ending in ``.jsonl``, ``.ndjson`` or ``.json``; hidden files skipped) in sorted order; its files must all be
in one format. Run ids must be unique across everything loaded.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Literal

from pyguard.errors import InputError, TraceFormatError
from pyguard.events import RunRecord
from pyguard.trace.openai_import import import_openai
from pyguard.trace.reader import iter_lines, parse_json_line, read_trace
from pyguard.trace.records import RECORD_TYPES, TraceFile, TraceRun, TraceWarning

__all__ = ["FORMATS", "TraceFormatName", "detect_format", "load_traces", "load_runs"]

TraceFormatName = Literal["pyguard", "openai"]
FORMATS: tuple[str, ...] = ("pyguard", "openai")
_SUFFIXES = (".jsonl", ".ndjson", ".json")


def detect_format(path: str | os.PathLike[str]) -> TraceFormatName | None:
    """The format of one file from its first record; None when the file is empty (nothing to tell)."""
    p = str(path)
    first = next(iter_lines(p), None)
    if first is None:
        return None
    number, raw, _ = first
    if raw.lstrip().startswith(b"["):
        return "openai"
    try:
        obj = parse_json_line(raw)
    except ValueError:  # invalid, too deep, a huge integer: not a record either way
        obj = None
    if not isinstance(obj, dict):
        try:  # one pretty-printed OpenAI run object
            with open(p, "rb") as f:
                whole = json.load(f)
        except (ValueError, RecursionError):
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
    if path.exists():
        from pyguard.trace.reader import check_regular_file

        check_regular_file(path, "trace file or recording")  # a FIFO, a socket, a device: says which
    raise InputError(f"{str(path)!r} does not exist; pass a trace file, a recording, or a directory of them")


def load_traces(path: str | os.PathLike[str], format: str | None = None) -> list[TraceFile]:
    """Every file under ``path`` read into a :class:`TraceFile` (OpenAI recordings have no decisions)."""
    if format is not None and format not in FORMATS:
        raise InputError(f"unknown format {format!r}; use 'pyguard', 'openai' or leave it out to detect it")
    root = Path(path)
    files = _files(root)
    in_dir = root.is_dir()
    skipped: list[str] = []
    chosen: dict[str, str] = {}
    for f in files:
        try:
            fmt = format or detect_format(f)
        except TraceFormatError as exc:
            if not in_dir:
                raise
            _skip(skipped, exc)
            continue
        if fmt is not None:
            chosen[str(f)] = fmt
    kinds = sorted(set(chosen.values()))
    if len(kinds) > 1:
        example = {k: next(f for f, v in chosen.items() if v == k) for k in kinds}
        raise InputError(
            f"{str(root)!r} mixes formats: {example['pyguard']!r} is a pyguard trace, {example['openai']!r} is an"
            " OpenAI recording; load them separately"
        )
    if not chosen:
        raise InputError(f"{str(root)!r} holds no records; nothing to load")
    out: list[TraceFile] = []
    owner: dict[str, str] = {}
    for name, fmt in chosen.items():
        try:
            if fmt == "pyguard":
                tf = read_trace(name)
            else:
                tf = TraceFile(path=name, runs=[TraceRun(record=r, source=name) for r in import_openai(name)])
        except TraceFormatError as exc:
            if not in_dir:
                raise
            _skip(skipped, exc)
            continue
        for run in tf.runs:
            if run.run_id in owner:
                raise InputError(
                    f"run id {run.run_id!r} appears in {owner[run.run_id]!r} and in {name!r}; run ids must be unique"
                )
            owner[run.run_id] = name
        out.append(tf)
    if skipped:
        warnings.warn(TraceWarning(f"{len(skipped)} of {len(files)} file(s) in {str(root)!r} could not be read and were"
                                   " skipped (each named in the warning before)"), stacklevel=2)
    if in_dir and not out and skipped:
        raise InputError(f"no file in {str(root)!r} could be read ({len(skipped)} skipped); nothing to load")
    return out


def _skip(skipped: list[str], exc: TraceFormatError) -> None:
    """One unreadable file of a directory: warned about by name, counted, the others still read."""
    skipped.append(str(exc))
    warnings.warn(TraceWarning(f"skipped: {exc}"), stacklevel=3)


def load_runs(path: str | os.PathLike[str], format: str | None = None) -> list[RunRecord]:
    """All runs in a file or directory, in file order. Runs with no footer come back with ``end=None``."""
    return [run.record for tf in load_traces(path, format) for run in tf.runs]
