"""The containers recordings come in, read tolerantly: a JSON array, JSON Lines, one object, or an id-keyed object.

``parse_container(text, source, log)`` returns ``[(id_hint, object), ...]``: ``id_hint`` is the key of an
id-keyed mapping (``{"6238": {run}, "5388": {run}}``, as FireAct writes) and None otherwise. A JSON Lines line
that is not JSON is skipped and counted (strict: raises) — except a last line cut mid-write, which is the mark
of a writer killed while writing and is counted under its own reason.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pyguard.errors import TraceFormatError, UnreadableRecord
from pyguard.trace import records
from pyguard.trace.tolerance import SkipLog

__all__ = ["parse_container", "read_json_text", "text_runs"]


def read_json_text(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TraceFormatError(f"not UTF-8 text ({exc}); save the recording as UTF-8", path=source) from None


def parse_container(
    text: str,
    source: str,
    log: SkipLog,
    *,
    is_run: Callable[[Any], bool] | None = None,
) -> list[tuple[str | None, Any]]:
    """The run objects in ``text``. ``is_run`` tells a run object from an id-keyed mapping of them."""
    stripped = text.lstrip()
    if not stripped:
        raise TraceFormatError("the file is empty: there are no runs in it", path=source)
    if stripped.startswith("[") or stripped.startswith("{"):
        try:
            data = _loads(text, source, None)
        except json.JSONDecodeError:
            data = _NOT_WHOLE
        if data is not _NOT_WHOLE:
            if isinstance(data, list):
                return [(None, x) for x in data]
            if (
                isinstance(data, dict)
                and is_run is not None
                and not is_run(data)
                and data
                and all(isinstance(v, dict) and is_run(v) for v in data.values())
            ):
                return [(str(k), v) for k, v in data.items()]
            return [(None, data)]
    objects: list[tuple[str | None, Any]] = []
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            if len(line) > records.MAX_RECORD_BYTES:  # characters >= bytes / 4: refuse before parsing (memory)
                raise TraceFormatError(
                    f"the line is longer than the per-record limit of {records.MAX_RECORD_BYTES} bytes;"
                    " split the recording",
                    path=source,
                    line=number,
                )
            objects.append((None, _loads(line, source, number)))
        except TraceFormatError as exc:
            if log.strict:
                raise
            log.skip(
                UnreadableRecord(str(exc), reason="record that cannot be read (too large, too deep, a huge number)")
            )
        except json.JSONDecodeError as exc:
            last = number == len(lines) and not text.endswith("\n")
            reason = "torn last line (writer cut off mid-write)" if last else "line that is not JSON"
            message = (
                f"not valid JSON ({exc.msg}, column {exc.colno}); expected a JSON array, one run object,"
                " or one run object per line"
            )
            if log.strict:
                raise TraceFormatError(message, path=source, line=number) from exc
            log.skip(UnreadableRecord(f"{source}:{number}: {message}", reason=reason))
    return objects


def text_runs(
    text: str,
    source: str,
    log: SkipLog | None,
    *,
    is_run: Callable[[Any], bool],
    bare: Callable[[str], Any] | None = None,
) -> tuple[SkipLog, list[tuple[str | None, Any]]]:
    """The start every text importer shares: its skip log (a strict one when ``log`` is None: the first bad record
    raises) and the run objects of ``text`` with their id hints (:func:`parse_container`). With ``bare``, a text that
    is not JSON at all (no ``[`` or ``{`` first) is one run, ``bare(text)``."""
    log = log if log is not None else SkipLog(strict=True)
    if bare is not None and not text.lstrip().startswith(("[", "{")):
        return log, [(None, bare(text))]
    return log, parse_container(text, source, log, is_run=is_run)


_NOT_WHOLE = object()


def _loads(text: str, source: str, line: int | None) -> Any:
    """``json.loads`` whose hostile cases (nesting too deep, an integer too long to convert) are a
    :class:`TraceFormatError` naming the place; invalid JSON stays a ``JSONDecodeError`` for the caller."""
    try:
        return json.loads(text)
    except RecursionError:
        raise TraceFormatError("the JSON is nested too deeply to read", path=source, line=line) from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:
        raise TraceFormatError(f"a number cannot be read ({exc})", path=source, line=line) from None
