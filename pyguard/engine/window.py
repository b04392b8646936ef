"""The part of an observation the engine reads: at most :data:`WINDOW_CHARS` characters of it, so that a decision
about a 50 MB tool result costs what one about 128 K characters costs.

An observation up to :data:`WINDOW_CHARS` characters is read whole (decisions about it are those of an engine without
a window). A longer one is read as its first and last :data:`EDGE_CHARS` characters with one line between them that
stands for the rest: how many characters were left out and a checksum of the whole text (CRC-32 of its UTF-8 bytes,
written in letters, which no masking of volatile tokens touches). So two long results that differ anywhere read as
different texts, and the same long result twice reads as the same text. The checksum reads the whole text once, in
slices of :data:`_SLICE_CHARS` (memory: the window plus one slice, whatever the observation's size); everything else
the engine does (normalising, shingling, matching) sees the window only.

A window is itself at most :data:`WINDOW_CHARS` characters (the edges leave :data:`MARKER_ROOM` for the line), so it
is read whole: ``observed_text(observed_text(t)) == observed_text(t)``. That is what lets the sensor send the window
instead of the text. The Java sensor (``dev.pyguard.bridge.ObservationWindow``) computes the same window of a tool
result, in code points, with the same checksum, and sends it with the whole text's size
(:attr:`pyguard.base.events.Observation.whole_chars`): the engine decides on it exactly as on the whole text, and a trace
records it (docs/trace-format.md). Java replaces lone surrogates by U+FFFD before anything else; Python checksums
them as ``surrogatepass`` encodes them, which only a text that never passed through Java can hold.

The largest observation in the real recordings (``python benchmarks/run.py real_replay``) is 41,623 characters
(mini-swe-agent, measured 2026-12-01), and the golden-decisions test pads results to 70 KB: both inside the window,
so their decisions are unchanged. Thresholds counted in
characters (``novelty.absolute_chars``, ``stall.polling_allowance_chars``) see at most a window's worth per
observation; with their defaults (5,000 and 8,000) one window is past both already.
"""

from __future__ import annotations

import zlib

__all__: list[str] = []

WINDOW_CHARS = 131_072
"""Observations up to this many characters are read whole; a window is never longer."""
MARKER_ROOM = 128
"""Room for the line standing for the left-out middle (at most 116 characters, for sizes of 19 digits)."""
EDGE_CHARS = (WINDOW_CHARS - MARKER_ROOM) // 2
"""A longer observation is read as its first and last this many characters (65,472), and one line for the rest."""
_SLICE_CHARS = 1 << 20
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _checksum(text: str) -> int:
    """CRC-32 of ``text`` as UTF-8 (lone surrogates passed through), read one slice at a time."""
    crc = 0
    for start in range(0, len(text), _SLICE_CHARS):
        crc = zlib.crc32(text[start : start + _SLICE_CHARS].encode("utf-8", "surrogatepass"), crc)
    return crc


def _in_letters(value: int) -> str:
    """``value`` (non-negative) written in base 26 with the letters a-z, at least 7 of them (a 32-bit value's)."""
    out: list[str] = []
    while value or len(out) < 7:
        value, digit = divmod(value, 26)
        out.append(_LETTERS[digit])
    return "".join(reversed(out))


def marker_line(left_out: int, size: int, checksum: int) -> str:
    """The line between a window's edges: how many characters were left out of how many, and the whole text's CRC-32
    in letters (at most :data:`MARKER_ROOM` characters)."""
    return (
        f"\n[pyguard window: {left_out} characters of {size} not read here;"
        f" whole text checksum {_in_letters(checksum)}]\n"
    )


def observed_text(text: str) -> str:
    """``text`` when it is at most :data:`WINDOW_CHARS` characters, else its window (see the module docstring)."""
    size = len(text)
    if size <= WINDOW_CHARS:
        return text
    return f"{text[:EDGE_CHARS]}{marker_line(size - 2 * EDGE_CHARS, size, _checksum(text))}{text[-EDGE_CHARS:]}"
