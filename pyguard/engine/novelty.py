"""Information gain: how much of an observation is new to the run.

:class:`NoveltyEstimator` is the pluggable interface (an embedding-based one may come later). The default,
:class:`ShingleNovelty`, scores a text by the fraction of its character shingles (``shingle_size`` bytes of the
prepared text, packed into one 64-bit word and mixed) that the run has not seen before, then remembers them:

- the fraction of its *distinct* shingles not seen before: near 1 for new content, 0 for an exact repeat,
  in between for partly new content;
- the text is *prepared* first (:func:`prepare_text`): lower case, whitespace collapsed, volatile tokens
  (timestamps, clock times, UUIDs, long hex ids, durations, epoch times) masked, and the action's own argument
  values removed (a tool echoing ``order 12345`` back is not news);
- memory is a blocked Bloom filter (two bits in one 64-bit word, 16 bits per remembered shingle, false-positive
  rate about 2%) whose table doubles from the remembered keys while it is small and, once it holds
  ``window_shingles``, rotates into a second generation: the estimator remembers at least the last
  ``window_shingles`` distinct shingles;
- cost per observation is O(size of the observation) amortised, independent of how long the run is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol, runtime_checkable

import numpy as np

from pyguard.engine.config import NoveltyConfig
from pyguard.engine.fingerprint import normalised_value
from pyguard.engine.shingles import add_keys, score_batch, thread_scratch

__all__: list[str] = []

_VOLATILE = re.compile(
    # Matches volatile tokens standing alone (not inside a longer word):
    #   ISO date-times   \d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:z|[+-]\d{2}:?\d{2})?
    #   clock times      \d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?
    #   UUIDs            [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}
    #   long hex ids     (?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{12,}
    #   durations        \d+(?:\.\d+)?\s?(?:ms|us|µs|ns|s|secs?|seconds?|milliseconds?)
    #   epoch s / ms     1[5-9]\d{8}(?:\d{3})?
    # each preceded by (?<![0-9a-z]) and followed by (?![0-9a-z]) (the readable form the tests hold it to:
    # tests/unit/engine/masking_reference.py). Here the first
    # character is taken out of the alternatives (each checks it with a lookbehind) so that the pattern starts
    # with a character class and the regex engine skips every other character without trying a match there;
    # the alternatives, their order and their backtracking are those of the reference.
    r"[\da-f](?<![0-9a-z].)(?:"
    r"(?<=\d)\d{3}-\d{2}-\d{2}[t ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:z|[+-]\d{2}:?\d{2})?"
    r"|(?<=\d)\d?:\d{2}:\d{2}(?:[.,]\d+)?"
    r"|(?<=[0-9a-f])[0-9a-f]{7}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|(?<=[0-9a-f])(?:(?<=\d)|(?=[0-9a-f]*\d))(?:(?<=[a-f])|(?=[0-9a-f]*[a-f]))[0-9a-f]{11,}"
    r"|(?<=\d)\d*(?:\.\d+)?\s?(?:ms|us|\u00b5s|ns|s|secs?|seconds?|milliseconds?)"
    r"|(?<=1)[5-9]\d{8}(?:\d{3})?"
    r")(?![0-9a-z])"
)
_VOLATILE_DIGIT = re.compile(r"\d" + _VOLATILE.pattern[len(r"[\da-f]") :])
""":data:`_VOLATILE` for tokens that start with a digit only: the same matches in a text where no 8 hexadecimal
characters follow each other (:func:`_no_hex_run`), which no token starting with a letter can lack (a UUID starts
with 8, a hex id with 12). It tries a match at far fewer places (each letter a-f is a place :data:`_VOLATILE` tries,
and fails at, in every such text)."""
_HEX_TO_X = bytes(0x78 if chr(b) in "0123456789abcdef" else 0x20 for b in range(256))
_HEX_RUN = b"x" * 8


def _no_hex_run(raw: bytes) -> bool:
    """No 8 characters in a row of ``raw`` (ASCII) are hexadecimal digits."""
    return _HEX_RUN not in raw.translate(_HEX_TO_X)


_DIGITS = tuple(bytes([b]) for b in b"0123456789")
_OTHER_WHITESPACE = tuple(bytes([b]) for b in range(0x80) if chr(b).isspace() and b != 0x20)


def _class_of(b: int) -> int:
    if b < 0x80 and chr(b).isspace() and b != 0x20:
        return 1  # whitespace str.split() splits on, other than a space
    if 0x30 <= b <= 0x39 or b == 0x2D:
        return 2  # a digit or a dash: a volatile token may be there
    return 3 if b in (1, 2) else b


_CLASSES = bytes(_class_of(b) for b in range(256))
SCAN_CHARS = 4096
"""Where :func:`prepare_text` changes method: to look for ASCII digits or whitespace, a text of ``SCAN_CHARS`` bytes or
more is searched byte value by byte value (``in`` on bytes runs at memory speed) and its echoed values go to their
regex directly; a shorter one is translated once (:data:`_CLASSES`) and compared with itself, which costs fewer
Python steps. Public so that tests can hold both methods to one reference on either side of it."""
_WHITESPACE_TO_SPACE = bytes(0x20 if chr(b).isspace() and b < 0x80 else b for b in range(256))
_NOT_ALNUM = bytes(b for b in range(256) if not (0x30 <= b <= 0x39 or 0x41 <= b <= 0x5A or 0x61 <= b <= 0x7A))
"""Translation tables for ASCII bytes: whitespace to a space; all but letters and digits (deleted)."""
_MASK = "\u2400"
_ECHO = "\u2405"


def mask_volatile(text: str) -> str:
    """``text`` (already lower-cased) with volatile tokens replaced by one mask character each."""
    if text.isascii():
        raw = text.encode("ascii")
        if not _has_volatile_chars(raw):
            return text
        if _no_hex_run(raw):
            return _VOLATILE_DIGIT.sub(_MASK, text)
    return _VOLATILE.sub(_MASK, text)


def _has_volatile_chars(raw: bytes) -> bool:
    """Every volatile token has a digit, except a UUID of letters only (which has dashes). (A long text's check: a
    short one's is part of :func:`_collapse_short`.)"""
    if b"-" in raw:
        return True
    return any(d in raw for d in _DIGITS)


def _double_space(raw: bytes) -> bool:
    """Two spaces in a row (``b"  " in raw``, which is slow on a long text full of single spaces: numpy there)."""
    if len(raw) < SCAN_CHARS:
        return b"  " in raw
    space = np.frombuffer(raw, dtype=np.uint8) == 0x20
    return bool((space[1:] & space[:-1]).any())


def _collapse_ascii(raw: bytes) -> bytes:
    """``" ".join(text.split())`` for ASCII bytes, with byte operations (no list of words): a long text's (a short
    one's is :func:`_collapse_short`)."""
    if not any(c in raw for c in _OTHER_WHITESPACE):
        if not raw.startswith(b" ") and not raw.endswith(b" ") and not _double_space(raw):
            return raw  # already collapsed (single spaces only, none at the ends)
    else:
        raw = raw.translate(_WHITESPACE_TO_SPACE)
    return _single_spaces(raw)


def _single_spaces(raw: bytes) -> bytes:
    """``raw`` (whitespace all spaces) with runs of spaces made one and none at the ends."""
    while b"  " in raw:
        raw = raw.replace(b"    ", b" ").replace(b"  ", b" ")
    return raw.strip(b" ")


def _collapse_short(raw: bytes) -> tuple[bytes, bool]:
    """:func:`_collapse_ascii` and :func:`_has_volatile_chars` of a short ASCII text (below ``SCAN_CHARS``) with
    one translation, marking the whitespace that is not a space as 1 and digits and dashes as 2 (what was 1 or 2 as
    3): when the text is its own translation, neither is there; else a byte search says which is."""
    classes = raw.translate(_CLASSES)
    if classes == raw:
        other = volatile = False
    else:
        other = b"\x01" in classes
        volatile = b"\x02" in classes
    if not other:
        if not raw.startswith(b" ") and not raw.endswith(b" ") and b"  " not in raw:
            return raw, volatile  # already collapsed (single spaces only, none at the ends)
    else:
        raw = raw.translate(_WHITESPACE_TO_SPACE)
    return _single_spaces(raw), volatile


@lru_cache(maxsize=4096)
def _echo_norm(value: str) -> str | None:
    """The normalised form of an echoed value the fuzzy match looks for, None when it has none (shorter than 3 or
    longer than 64 characters)."""
    norm = normalised_value(value)
    return norm if 3 <= len(norm) <= 64 else None


_PATTERNS: dict[str, re.Pattern[str] | None] = {}
_PATTERNS_MAX = 4096


def _echo_pattern(value: str) -> re.Pattern[str] | None:
    """A pattern for ``value`` written with or without separators between its letters and digits (one optional
    separator character between any two): the normalised form the action fingerprint compares
    (:func:`~pyguard.engine.fingerprint.normalised_value`), matched in the text however the tool echoes it. None for
    values whose normalised form is shorter than 3 or longer than 64 characters (those are matched as written).
    Cached in :data:`_PATTERNS` (cleared when full)."""
    if value in _PATTERNS:
        return _PATTERNS[value]
    norm = _echo_norm(value)
    pattern = None if norm is None else re.compile(r"[\W_]?".join(re.escape(c) for c in norm))
    if len(_PATTERNS) >= _PATTERNS_MAX:
        _PATTERNS.clear()
    _PATTERNS[value] = pattern
    return pattern


@lru_cache(maxsize=16)
def prepare_text(text: str, echo: tuple[str, ...] = (), mask: bool = True) -> str:
    """The form of an observation that is compared: lower case, whitespace collapsed, volatile tokens masked and
    echoed argument values (``echo``, at least 3 characters) removed, with the spaces around them."""
    low = text.lower()
    volatile_free = False
    if low.isascii():
        encoded = low.encode("ascii")
        if len(encoded) < SCAN_CHARS:
            raw, volatile = _collapse_short(encoded)
        else:
            raw = _collapse_ascii(encoded)
            volatile = _has_volatile_chars(raw)
        out = low if raw is encoded else raw.decode("ascii")
        volatile_free = not volatile
    else:
        out = " ".join(low.split())
    values = sorted({" ".join(e.lower().split()) for e in echo if len(e.strip()) >= 3}, key=len, reverse=True)
    for value in values:
        out = out.replace(value, _ECHO)
    letters: bytes | None = None
    encoded_out: bytes | None = None
    for value in values:  # the same value written another way (eu-west-1 / euwest1 / EU_WEST_1, SO-12345 / 12345)
        fuzzy = _PATTERNS.get(value, _ECHO)
        if fuzzy is None:
            continue
        if isinstance(fuzzy, str) or len(out) >= SCAN_CHARS:  # not compiled yet, or a long text to scan
            norm = _echo_norm(value)
            if norm is None:
                continue
            if norm.isascii():
                # a match is the value's letters and digits with at most one separator between two: each of them
                # is in the text, and without the separators (and all but ASCII letters and digits) the value is
                # there as written (a long text is not translated for this: its regex runs instead)
                if encoded_out is None:
                    encoded_out = out.encode("utf-8", "surrogatepass")
                if any(c not in encoded_out for c in set(norm.encode("ascii"))):
                    continue
                if len(encoded_out) < SCAN_CHARS:
                    if letters is None:
                        letters = encoded_out.translate(None, _NOT_ALNUM)
                    if norm.encode("ascii") not in letters:
                        continue
            fuzzy = _echo_pattern(value)
            if fuzzy is None:
                continue
        out, found = fuzzy.subn(_ECHO, out)
        if found:
            letters = encoded_out = None  # a mark is a separator too: look again
    if values and _ECHO in out:
        # whitespace is single spaces here: drop those next to an echo mark (what re.sub(r"\s*\u2405\s*") does)
        out = out.replace(" " + _ECHO, _ECHO).replace(_ECHO + " ", _ECHO)
    if not mask or volatile_free:
        return out
    # the field regex allows one space between the closing quote and the colon (``"checked_at" : 1``, as some
    # pretty-printers write JSON); whitespace is single spaces here, so these two cover every form it matches
    if '":' in out or '" :' in out:
        out = _VOLATILE_FIELD.sub(_mask_field, out)
    return mask_volatile(out)


_VOLATILE_FIELD = re.compile(
    r'("(?=[a-z0-9_]{0,50}"\s?:)(?:[a-z0-9_]{0,40}?(?:_(?:at|ms|us|ns|secs?|seconds)|timestamp|elapsed|duration|'
    r'latency|took|request_?id|trace_?id|span_?id|etag|nonce)|time|ts|date)")(\s?:\s?)'
    r'("[^"\\]{0,100}"|-?\d{1,30}(?:\.\d{1,30})?)'
)
"""A JSON field whose name says its value is volatile (``checked_at``, ``elapsed_ms``, ``request_id``, ``latency``,
``timestamp``): its value is masked whatever it looks like (a plain ``345678`` of milliseconds included).

The name is up to 40 characters of ``[a-z0-9_]`` then one of the volatile endings, or one of ``time``, ``ts``,
``date``. The lookahead first checks that a name (at most 50 such characters) and a colon follow the quote, so that
the endings are tried at names only, never inside a string value; it matches exactly what the readable form
(``"[a-z0-9_]{0,40}?(?:_at|_ms|...)"|"(?:time|ts|date)"``, kept in tests/unit/engine/masking_reference.py)
matches: the name is always the text up to the next quote, whichever ending matched."""


def _mask_field(m: re.Match[str]) -> str:
    value = _MASK if m.group(3)[0] != '"' else '"' + _MASK + '"'  # the JSON stays JSON
    return m.group(1) + m.group(2) + value


@runtime_checkable
class NoveltyEstimator(Protocol):
    """Scores how new a text is to the run, and remembers it. Stateful: one per run."""

    def observe(self, text: str, echo: Sequence[str] = ()) -> float:
        """Novelty of ``text`` in [0, 1] relative to everything seen so far (``echo``: argument values of the
        action that produced it, which are not news); then remember ``text``."""
        ...

    def learn(self, text: str) -> None:
        """Remember ``text`` without scoring it (e.g. what the model itself wrote)."""
        ...

    def reset(self) -> None:
        """Forget everything."""
        ...


class _Bloom:
    """A blocked Bloom filter: 2**bits bits in uint64 words; a key sets two bits (its low 12 bits choose them,
    :data:`~pyguard.engine.shingles.BITS_OF`) of one word (chosen by the key's top bits)."""

    __slots__ = ("bits", "shift", "words")

    def __init__(self, bits: int) -> None:
        self.bits = max(bits, 7)
        self.shift = 64 - (self.bits - 6)
        self.words = np.zeros(1 << (self.bits - 6), dtype=np.uint64)


class ShingleNovelty:
    """The default estimator: hashed character shingles in a growing, rotating Bloom filter (numpy; the batch step
    in :mod:`pyguard.engine.shingles`, compiled when the ``fast`` extra is installed)."""

    _BITS_PER_KEY = 16
    _START_BITS = 14

    def __init__(self, config: NoveltyConfig | None = None) -> None:
        self.config = config if config is not None else NoveltyConfig()
        self._shingle_size = self.config.shingle_size  # (the config is frozen)
        self._max_bits = max(self._START_BITS, (self.config.window_shingles * self._BITS_PER_KEY - 1).bit_length())
        self.reset()

    def reset(self) -> None:
        self._current = _Bloom(self._START_BITS)
        self._previous: _Bloom | None = None
        self._keys = np.empty(1 << (self._START_BITS - 4), dtype=np.uint64)
        self._count = 0
        self.rotations = 0

    def _grow_or_rotate(self) -> None:
        """The current generation holds more keys than it has room for: double it (from the remembered keys)
        while it is below its full size, else make it the previous generation and start an empty one."""
        if self._current.bits < self._max_bits:
            bits = self._current.bits
            while (1 << bits) // self._BITS_PER_KEY < self._count and bits < self._max_bits:
                bits += 1
            grown = _Bloom(bits)
            add_keys(grown.words, grown.shift, self._keys[: self._count])
            self._current = grown
            if bits >= self._max_bits:
                self._keys = np.empty(0, dtype=np.uint64)  # full size: keys no longer needed
        else:
            self._previous, self._current = self._current, _Bloom(self._max_bits)
            self._count = 0
            self.rotations += 1

    def _keep_keys(self, new: np.ndarray) -> None:
        """Append ``new`` keys to the list the current generation is rebuilt from when it grows."""
        need = self._count + new.size
        if need > self._keys.size:
            keys = np.empty(max(need, 2 * self._keys.size), dtype=np.uint64)
            keys[: self._count] = self._keys[: self._count]
            self._keys = keys
        self._keys[self._count : need] = new

    def score_prepared(self, prepared: str) -> float:
        """Novelty of an already prepared text (see :func:`prepare_text`): the fraction of its distinct shingles
        not seen before; then remember them (:func:`pyguard.engine.shingles.score_batch`)."""
        current, previous = self._current, self._previous
        size, new = score_batch(
            prepared,
            self._shingle_size,
            current.words,
            current.shift,
            previous.words if previous is not None else None,
            previous.shift if previous is not None else 0,
            thread_scratch(),
        )
        if size == 0:
            return 0.0
        count = int(new.size)
        if count:
            if current.bits < self._max_bits:
                self._keep_keys(new)
            self._count += count
            if self._count > (1 << current.bits) // self._BITS_PER_KEY:
                self._grow_or_rotate()
        return count / size

    def observe(self, text: str, echo: Sequence[str] = ()) -> float:
        return self.score_prepared(prepare_text(text, tuple(echo), self.config.mask_volatile))

    def learn(self, text: str) -> None:
        self.score_prepared(prepare_text(text, (), self.config.mask_volatile))


def make_estimator(config: NoveltyConfig) -> NoveltyEstimator:
    """The estimator named by ``config.kind``."""
    if config.kind == "shingles":
        return ShingleNovelty(config)
    raise ValueError(f"unknown novelty kind {config.kind!r}")  # unreachable: the config validates kind
