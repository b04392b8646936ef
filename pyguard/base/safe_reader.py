"""The one safe reader: every file, stream and JSON text pyguard reads as recorded runs goes through it.

Three limits, each refused with a :class:`~pyguard.base.errors.TraceFormatError` that names the place and the limit,
never with a traceback:

- **line size**: a physical line longer than :data:`MAX_LINE_BYTES` (64 MiB) is never held whole: :func:`read_source`
  reads past it in chunks and reports its number (parsing a line costs many times its size in memory);
- **nesting depth**: JSON nested deeper than the parser can follow (Python's recursion limit,
  :func:`sys.getrecursionlimit`, about 1,000 levels);
- **integer size**: an integer longer than :func:`sys.get_int_max_str_digits` digits (4,300), which Python refuses
  to convert (converting one costs time quadratic in its length).

Invalid JSON is not hostile: :func:`loads` lets its :class:`json.JSONDecodeError` through, so a tolerant reader can
skip the line and count it.

Every other file a user hands pyguard — a policy (TOML, or ``[tool.pyguard]`` in a ``pyproject.toml``), a scenario,
a task file for ``calibrate --live``, labels, a baseline, an escalation handle — is read whole through
:func:`read_file_bytes`, :func:`load_json_file` or :func:`load_toml_text`, with the same limits: at most
:data:`MAX_FILE_BYTES` (64 MiB, the size of the largest record), nested at most :data:`MAX_DEPTH` levels (a TOML file's
dotted keys and table headers count as levels: ``[a.b.c]`` is three), integers of at most 4,300 digits. A file over a
limit is refused before it is parsed, or as its parser meets it, in time linear in its size, with an error naming the
file and the limit (exit status 2 in the CLI, never a traceback).
"""

from __future__ import annotations

import functools
import json
import os
import re
import select
import stat
import sys
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from pyguard.base.errors import InputError, TraceFormatError

__all__: list[str] = []

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest line (newline excluded) pyguard reads or writes: 64 MiB. It is also the largest trace record."""

MAX_FILE_BYTES = MAX_LINE_BYTES
"""The largest configuration file pyguard reads whole (a policy, a scenario, a task file, labels, a baseline, a
handle): 64 MiB, the size of the largest record."""

MAX_DEPTH = 200
"""The deepest nesting pyguard reads in a configuration file: tables, arrays, objects, and a TOML key's dotted parts.
Real files nest a few levels; parsers and messages recurse once per level, and Python's own limit is 1,000 frames."""

FIFO_WAIT_S = float(os.environ.get("PYGUARD_FIFO_WAIT_S", "30"))
"""How long a FIFO may stay silent before it is given up: a named pipe nobody writes to would block a reader
forever. Process substitution (``<(...)``, ``/dev/fd/N``) and a pipe with a writer start at once."""

TOO_LARGE = "record that cannot be read (too large, too deep, a huge number)"
"""The reason a tolerant reader counts a record under when a limit refused it."""

_CHUNK = 1 << 20


def loads(
    data: str | bytes,
    *,
    source: str,
    line: int | None = None,
    allow_nan: bool = True,
    parse_float: Callable[[str], Any] | None = None,
) -> Any:
    """``json.loads`` whose hostile cases (nesting too deep, an integer too long, NaN or infinity when
    ``allow_nan`` is False, bytes that are not UTF-8) raise :class:`TraceFormatError` naming ``source`` and
    ``line``; invalid JSON stays a :class:`json.JSONDecodeError` for the caller. ``parse_float``: as for
    ``json.loads`` (``decimal.Decimal`` keeps a number's digits as written)."""
    try:
        if allow_nan and parse_float is None:
            return json.loads(data)
        if isinstance(data, str) and not data.startswith("\ufeff"):  # what json.loads does, minus a new decoder
            return _decoder(parse_float, allow_nan).decode(data)
        return json.loads(data, parse_float=parse_float, parse_constant=None if allow_nan else _refuse_constant)
    except RecursionError:
        raise TraceFormatError(
            f"the JSON is nested deeper than pyguard reads (Python's recursion limit, {sys.getrecursionlimit()}"
            " levels); a recording is never nested that deep",
            path=source,
            line=line,
        ) from None
    except json.JSONDecodeError:
        raise
    except UnicodeDecodeError as exc:
        raise TraceFormatError(
            f"not valid UTF-8 ({exc.reason} at byte {exc.start}); save the recording as UTF-8", path=source, line=line
        ) from None
    except ValueError as exc:  # "Exceeds the limit (4300 digits) for integer string conversion", NaN refused
        if "integer string conversion" in str(exc):
            message = (
                f"an integer is longer than the limit of {sys.get_int_max_str_digits()} digits pyguard reads;"
                " a recording never holds one that long"
            )
        else:
            message = f"a number cannot be read ({exc})"
        raise TraceFormatError(message, path=source, line=line) from None


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not a number pyguard accepts (JSON has no NaN or infinity)")


@functools.lru_cache(maxsize=8)
def _decoder(parse_float: Callable[[str], Any] | None, allow_nan: bool) -> json.JSONDecoder:
    """One decoder per setting: ``json.loads`` with keyword arguments builds a new one per call, which costs more
    than decoding a tool call's arguments (the engine parses every call's, with ``parse_float=Decimal``)."""
    return json.JSONDecoder(parse_float=parse_float, parse_constant=None if allow_nan else _refuse_constant)


def oversize_error(source: str, line: int, limit: int | None = None) -> TraceFormatError:
    """The error for a line longer than the line-size limit."""
    limit = MAX_LINE_BYTES if limit is None else limit
    return TraceFormatError(
        f"the line is longer than the per-line limit of {limit} bytes"
        + (f" ({limit >> 20} MiB)" if limit >= 1 << 20 else "")
        + ";"
        " a record that large is not one pyguard reads. Split the recording or cut the text in it",
        path=source,
        line=line,
    )


@dataclass(frozen=True)
class SourceBytes:
    """One file or stream read through the line-size limit."""

    name: str
    """The name to show (``<stdin>`` for ``-``)."""
    data: bytes
    """The bytes read, each over-size line left empty (so line numbers still count)."""
    oversize: tuple[int, ...] = ()
    """The numbers of the lines longer than the limit: never read whole."""
    limit: int = MAX_LINE_BYTES

    def refuse_oversize(self) -> None:
        """Raise the error for the first over-size line, if any (readers that accept no damaged line)."""
        if self.oversize:
            raise oversize_error(self.name, self.oversize[0], self.limit)

    def text(self) -> str:
        """The bytes as text (UTF-8, a byte-order mark dropped)."""
        try:
            return self.data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise TraceFormatError(f"not UTF-8 text ({exc}); save the recording as UTF-8", path=self.name) from None


def is_stream(path: str) -> bool:
    """True for ``-`` (standard input), a FIFO, a character device or a socket: read once, never stat-ed again."""
    if path == "-":
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


def read_source(path: str | os.PathLike[str], *, max_line_bytes: int | None = None) -> SourceBytes:
    """A file, ``-`` (standard input), a FIFO or a device, read line by line through the line-size limit: an
    over-size line is read past in chunks and left empty, so memory stays within the file's other lines plus
    one limit. Raises :class:`InputError` when it cannot be read."""
    name = str(path)
    limit = MAX_LINE_BYTES if max_line_bytes is None else max_line_bytes
    shown = "<stdin>" if name == "-" else name
    if name == "-":
        return _collect(sys.stdin.buffer, shown, limit)
    try:
        if stat.S_ISFIFO(os.stat(name).st_mode):
            return _read_fifo(name, limit)
        with open(name, "rb") as f:  # regular files, devices and sockets
            if _fits(f, limit):  # no line of it can be over the limit: read at once, not line by line
                data = f.read(limit + 1)
                if len(data) <= limit:  # (a file that grew since is read by line after all)
                    return SourceBytes(name=shown, data=data, oversize=(), limit=limit)
                f.seek(0)
            return _collect(f, shown, limit)
    except OSError as exc:
        raise InputError(f"cannot read {name!r}: {exc.strerror or exc}") from None


def _fits(f: IO[bytes], limit: int) -> bool:
    """True for a regular file no larger than ``limit`` bytes (so no line of it is over the limit)."""
    try:
        st = os.fstat(f.fileno())
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size <= limit


def _read_fifo(name: str, limit: int) -> SourceBytes:
    """A FIFO read whole, waiting at most :data:`FIFO_WAIT_S` for its writer to send something (or hang up)."""
    fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK)  # never blocks, writer or not
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLHUP)
        if not poller.poll(int(FIFO_WAIT_S * 1000)):
            raise InputError(
                f"{name!r} is a FIFO (named pipe) and nothing was written to it in {FIFO_WAIT_S:g} s; start its"
                " writer first, or pass a regular file (PYGUARD_FIFO_WAIT_S sets the wait)"
            )
        os.set_blocking(fd, True)
        with os.fdopen(os.dup(fd), "rb") as f:
            return _collect(f, name, limit)
    finally:
        os.close(fd)


def _collect(f: IO[bytes], name: str, limit: int) -> SourceBytes:
    kept: list[bytes] = []
    oversize: list[int] = []
    for number, raw, too_long in _physical_lines(f, limit):
        if too_long:
            oversize.append(number)
            kept.append(b"\n")
        else:
            kept.append(raw)
    return SourceBytes(name=name, data=b"".join(kept), oversize=tuple(oversize), limit=limit)


def _physical_lines(f: IO[bytes], limit: int) -> Iterator[tuple[int, bytes, bool]]:
    """``(number, line with its newline, too_long)``; a too-long line is read past in chunks, its bytes dropped."""
    number = 0
    while True:
        raw = f.readline(limit + 2)  # + "\r\n": a line of exactly ``limit`` bytes is not over it
        if not raw:
            return
        number += 1
        if len(raw.rstrip(b"\r\n")) <= limit:
            yield number, raw, False
            continue
        while not raw.endswith(b"\n"):
            raw = f.readline(_CHUNK)
            if not raw:
                break
        yield number, b"", True


# -- whole files a user hands pyguard: policies, scenarios, task files, labels, baselines, handles -----------------

ErrorFactory = Callable[[str], Exception]


def read_file_bytes(path: str | os.PathLike[str], *, what: str, error: ErrorFactory = InputError) -> bytes:
    """The bytes of the ``what`` at ``path`` (a regular file, at most :data:`MAX_FILE_BYTES`), or ``error(message)``
    naming the file: missing, unreadable, not a regular file (a FIFO could block forever), too large."""
    name = str(path)
    try:
        if not stat.S_ISREG(os.stat(name).st_mode):
            raise error(f"{what} {name!r} is not a regular file; pass the path of a file")
        with open(name, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise error(f"cannot read {what} {name!r}: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise error(
            f"{what} {name!r} is larger than the limit of {MAX_FILE_BYTES} bytes ({MAX_FILE_BYTES >> 20} MiB) pyguard"
            " reads; a file of that kind is never that large"
        )
    return data


def _too_deep(source: str, depth: int | None) -> str:
    """The message for nesting over :data:`MAX_DEPTH` (``depth``: how deep, when known)."""
    deep = f"nested {depth} levels deep" if depth is not None else f"nested more than {MAX_DEPTH} levels deep"
    return (
        f"{source} is {deep}, over the limit of {MAX_DEPTH} levels pyguard reads (tables, arrays, objects and dotted"
        " key parts each count); a real file nests a few"
    )


def check_depth(value: Any, *, source: str, error: ErrorFactory = InputError) -> None:
    """``error`` naming ``source`` when ``value`` (parsed JSON or TOML) nests deeper than :data:`MAX_DEPTH`; iterative,
    so it never recurses itself."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise error(_too_deep(source, None))
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values() if isinstance(v, dict | list))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, dict | list))


def load_json_file(path: str | os.PathLike[str], *, what: str, error: ErrorFactory = InputError) -> Any:
    """A JSON file read whole through every limit; invalid JSON is ``error`` too, naming the file, line and column."""
    name = str(path)
    data = read_file_bytes(path, what=what, error=error)
    try:
        value = loads(data, source=name)
    except TraceFormatError as exc:
        raise error(f"{what}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise error(f"{what} {name!r} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    check_depth(value, source=f"{what} {name!r}", error=error)
    return value


_TOML_TOKENS = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*'
    r"|(?<![\w.])[+-]?\d[\d_]*\.\d[\d_]*(?:[eE][+-]?\d[\d_]*)?(?![\d.])|[\[\]{}\n.]"
)
"""What the nesting scan of a TOML text looks at: strings and comments (skipped whole), a whole number with a decimal
point (skipped: ``1.5``, ``00.25`` of a time, never ``1.2.3``, a dotted key), brackets, newlines and the dots of dotted
keys."""


def toml_nesting(text: str) -> int:
    """How deep ``text`` (TOML) nests, counted without parsing it: open brackets, plus the dotted parts of the current
    table header and of the key on the line. Linear in the text (one regular-expression pass)."""
    worst = depth = table = line = 0
    header: int | None = None  # the levels of the table header being read
    for match in _TOML_TOKENS.finditer(text):
        token = match.group()
        first = token[0]
        if first in "\"'#" or first.isdigit():
            continue
        if token == "\n":
            line = 0
        elif token == ".":
            if header is not None:
                header += 1
            else:
                line += 1
        elif token in "[{":
            if depth == 0 and token == "[" and not text[text.rfind("\n", 0, match.start()) + 1 : match.start()].strip():
                header = 0
            depth += 1
            if header is not None:
                header += 1
        else:
            depth = max(depth - 1, 0)
            if depth == 0 and header is not None:
                table, header = header, None
        worst = max(worst, (header or 0) + (0 if header is not None else table + line + depth))
    return worst


def load_toml_text(text: str, *, source: str, error: ErrorFactory = InputError) -> dict[str, Any]:
    """TOML text parsed through every limit: its nesting scanned first (:func:`toml_nesting`: a deep file is refused
    before ``tomllib``, whose time grows with the square of a dotted key's parts), then parsed and checked. Invalid
    TOML is ``error`` too, naming ``source``."""
    depth = toml_nesting(text)
    if depth > MAX_DEPTH:
        raise error(_too_deep(source, depth))
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{source} is not valid TOML: {exc}") from None
    except RecursionError:
        raise error(_too_deep(source, None)) from None
    except ValueError as exc:  # an integer over Python's 4,300-digit conversion limit
        digits = "integer string conversion" in str(exc)
        raise error(
            f"{source}: an integer is longer than the limit of {sys.get_int_max_str_digits()} digits pyguard reads"
            if digits
            else f"{source}: a value cannot be read ({exc})"
        ) from None
    check_depth(data, source=source, error=error)
    return data


def load_config_file(path: str | os.PathLike[str], *, what: str, error: ErrorFactory = InputError) -> Any:
    """A ``.json`` file (:func:`load_json_file`) or any other as TOML (:func:`load_toml_text`), through every limit."""
    if str(path).lower().endswith(".json"):
        return load_json_file(path, what=what, error=error)
    name = f"{what} {str(path)!r}"
    try:
        text = read_file_bytes(path, what=what, error=error).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{name} is not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8") from None
    return load_toml_text(text, source=name, error=error)
