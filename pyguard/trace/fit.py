"""A record over the per-record limit is written as a window, never refused.

One trace line may hold at most :data:`pyguard.base.safe_reader.MAX_LINE_BYTES` (64 MiB): readers refuse longer lines
before parsing them. The sensor already sends a tool result over 131,072 characters as its window
(:mod:`pyguard.engine.window`), but one response can still make a longer record: 200 parallel tool results of 131,072
CJK characters each are 78 MB of UTF-8. Such a record is written with each of its long strings cut to the same
window shape, smaller: its first and last characters and one line between them stating how many characters were left
out of how many, and the whole string's checksum. An observation cut so also states its whole size in
``whole_chars`` (kept when the sensor had set it already). So the trace still records every record, with its whole
sizes stated; what it cannot hold is the text left out (the agent's own logs or chat memory have it).

The guard decided on the event before it was written: cutting the *record* changes no decision. A replay of such a
trace reads the smaller windows, so it may decide differently on that iteration; the writer logs each record it cut.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

from pydantic import BaseModel

from pyguard.engine.window import MARKER_ROOM, marker_line
from pyguard.trace.records import encode_record

__all__: list[str] = []

MIN_WINDOW_CHARS = 4 * MARKER_ROOM
"""No string is cut below this many characters: a record that does not fit even then is refused."""

_KEEP = frozenset({"type", "run_id", "version", "kind", "name", "id", "tool_call_id", "tool_name", "outcome", "action"})
"""Keys whose strings are never cut: they identify a record or its parts."""


def fit_record(record_type: str, model: BaseModel, limit: int, **prefix: object) -> tuple[bytes, int]:
    """The trace line of ``model`` (:func:`~pyguard.trace.records.encode_record`) and how many strings were cut to
    fit it within ``limit`` bytes (newline excluded); 0 when it fits whole. Raises ValueError when it cannot fit even
    with every long string cut to :data:`MIN_WINDOW_CHARS`."""
    line = encode_record(record_type, model, **prefix)
    if len(line) - 1 <= limit:
        return line, 0
    data = model.model_dump(mode="json", exclude_none=True)
    lengths = sorted(_long_strings(data), reverse=True)
    cap = _first_cap(lengths, len(line) - 1, limit)
    while cap >= MIN_WINDOW_CHARS:
        cut = [0]
        shrunk = _shrink(data, cap, cut, observation=False)
        line = _encode(record_type, shrunk, prefix)
        if len(line) - 1 <= limit:
            return line, cut[0]
        cap = cap * 3 // 4
    raise ValueError(
        f"a {record_type} record of {len(encode_record(record_type, model, **prefix)) - 1} bytes does not fit the"
        f" per-record limit of {limit} bytes even with each of its {len(lengths)} long strings cut to"
        f" {MIN_WINDOW_CHARS} characters"
    )


def _first_cap(lengths: list[int], size: int, limit: int) -> int:
    """A first guess at the longest string kept: cut the longest strings until the characters removed, at the
    record's own bytes per character, bring it under 90% of the limit."""
    if not lengths:
        return MIN_WINDOW_CHARS - 1
    ratio = size / max(sum(lengths), 1)  # bytes per character of the record, at least
    excess_chars = (size - int(limit * 0.9)) / max(ratio, 1.0)
    lo, hi = MIN_WINDOW_CHARS, lengths[0]
    while lo < hi:  # the largest cap that removes at least excess_chars
        mid = (lo + hi + 1) // 2
        if sum(n - mid for n in lengths if n > mid) >= excess_chars:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _long_strings(value: Any) -> list[int]:
    if isinstance(value, str):
        return [len(value)] if len(value) > MIN_WINDOW_CHARS else []
    if isinstance(value, dict):
        return [n for k, v in value.items() if k not in _KEEP for n in _long_strings(v)]
    if isinstance(value, list):
        return [n for v in value for n in _long_strings(v)]
    return []


def window(text: str, cap: int) -> str:
    """``text`` when it has at most ``cap`` characters, else its window of at most ``cap`` characters."""
    if len(text) <= cap:
        return text
    edge = (cap - MARKER_ROOM) // 2
    size = len(text)
    return f"{text[:edge]}{marker_line(size - 2 * edge, size, _checksum(text))}{text[-edge:]}"


def _checksum(text: str) -> int:
    """CRC-32 of ``text`` as UTF-8, one megabyte-sized slice at a time: the checksum a window line states
    (:func:`pyguard.engine.window.marker_line`)."""
    crc = 0
    for start in range(0, len(text), 1 << 20):
        crc = zlib.crc32(text[start : start + (1 << 20)].encode("utf-8", "surrogatepass"), crc)
    return crc


def _shrink(value: Any, cap: int, cut: list[int], *, observation: bool) -> Any:
    if isinstance(value, str):
        if len(value) <= cap:
            return value
        cut[0] += 1
        return window(value, cap)
    if isinstance(value, list):
        return [_shrink(v, cap, cut, observation=observation) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, v in value.items():
        out[key] = v if key in _KEEP else _shrink(v, cap, cut, observation=key == "observations")
    if observation and isinstance(value.get("text"), str) and len(value["text"]) > cap:
        out["whole_chars"] = value.get("whole_chars", len(value["text"]))
    return out


def _encode(record_type: str, data: dict, prefix: dict[str, object]) -> bytes:
    head = {"type": record_type, **prefix}
    text = json.dumps({**head, **data}, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")
