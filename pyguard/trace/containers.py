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

from pyguard.base import safe_reader
from pyguard.base.errors import TraceFormatError, UnreadableRecord
from pyguard.base.safe_reader import TOO_LARGE, loads, oversize_error
from pyguard.trace.tolerance import SkipLog

__all__: list[str] = []


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
            data = loads(text, source=source)
        except json.JSONDecodeError:
            data = _NOT_WHOLE
        except TraceFormatError:  # a limit: refused, unless the text is JSON Lines (then that line is skipped)
            if len(stripped.rstrip().splitlines()) <= 1:
                raise
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
            if len(line) > safe_reader.MAX_LINE_BYTES:  # text given in memory (files: left empty by the safe reader)
                raise oversize_error(source, number)
            objects.append((None, loads(line, source=source, line=number)))
        except TraceFormatError as exc:
            if log.strict:
                raise
            log.skip(UnreadableRecord(str(exc), reason=TOO_LARGE))
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
