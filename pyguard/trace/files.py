"""Opening a trace file safely: never through a symbolic link, created owner-only, never overwritten by ``mode="x"``,
and a torn last line cut off before appending (:class:`~pyguard.trace.writer.TraceWriter` writes through it)."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from pyguard.base.errors import TraceFormatError
from pyguard.trace.records import TraceWarning

__all__: list[str] = []


_FLAGS = {  # O_APPEND in every mode: a partial line cut off again leaves the next write at the end, not past a hole
    "a": os.O_RDWR | os.O_CREAT | os.O_APPEND,  # read too: to find a torn tail
    "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND,
    "x": os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND,
}


def open_safely(path: Path, mode: str, file_mode: int) -> int:
    """Open ``path`` for ``mode`` without following a symlink, creating it with ``file_mode``; repair a torn tail.
    Returns the file descriptor (records are written with ``os.write``: no buffer holds part of a line)."""
    flags = _FLAGS[mode] | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, file_mode)
    except FileExistsError:
        raise TraceFormatError(
            "a file is already there; a trace is never overwritten: give the run another id or use another folder",
            path=str(path),
        ) from None
    except OSError as exc:
        if path.is_symlink():
            raise TraceFormatError(
                "this path is a symbolic link; traces are never written through a link: remove it or pick another path",
                path=str(path),
            ) from None
        raise TraceFormatError(f"cannot open the trace for writing: {exc.strerror}", path=str(path)) from None
    try:
        if mode == "a":
            _cut_torn_tail(fd, path)
        return fd
    except BaseException:
        os.close(fd)
        raise


def _cut_torn_tail(fd: int, path: Path) -> None:
    """If the file does not end with a newline, its last line was cut mid-record: truncate it away (with a warning)."""
    size = os.fstat(fd).st_size
    if size == 0:
        return
    if os.pread(fd, 1, size - 1) == b"\n":
        return
    keep = 0
    pos = size
    while pos > 0:
        start = max(0, pos - 65536)
        chunk = os.pread(fd, pos - start, start)
        nl = chunk.rfind(b"\n")
        if nl != -1:
            keep = start + nl + 1
            break
        pos = start
    os.ftruncate(fd, keep)
    warnings.warn(
        TraceWarning(f"{path}: its last line was torn ({size - keep} bytes, cut mid-record): removed before appending"),
        stacklevel=4,
    )
