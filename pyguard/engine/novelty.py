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
from functools import lru_cache
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from pyguard.engine.config import NoveltyConfig

__all__ = ["NoveltyEstimator", "ShingleNovelty", "prepare_text", "mask_volatile", "make_estimator"]

_VOLATILE = re.compile(
    r"(?<![0-9a-z])(?:"
    r"\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:z|[+-]\d{2}:?\d{2})?"  # ISO date-times
    r"|\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?"  # clock times
    r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"  # UUIDs
    r"|(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{12,}"  # long hex ids
    r"|\d+(?:\.\d+)?\s?(?:ms|us|\u00b5s|ns|s|secs?|seconds?|milliseconds?)"  # durations
    r"|1[5-9]\d{8}(?:\d{3})?"  # epoch seconds / milliseconds
    r")(?![0-9a-z])"
)
_MASK = "\u2400"
_ECHO = "\u2405"
_ECHO_SPACE = re.compile(r"\s*\u2405\s*")

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def mask_volatile(text: str) -> str:
    """``text`` (already lower-cased) with volatile tokens replaced by one mask character each."""
    return _VOLATILE.sub(_MASK, text)


@lru_cache(maxsize=16)
def prepare_text(text: str, echo: tuple[str, ...] = (), mask: bool = True) -> str:
    """The form of an observation that is compared: lower case, whitespace collapsed, volatile tokens masked and
    echoed argument values (``echo``, at least 3 characters) removed."""
    out = " ".join(text.lower().split())
    values = sorted({" ".join(e.lower().split()) for e in echo if len(e.strip()) >= 3}, key=len, reverse=True)
    for value in values:
        out = out.replace(value, _ECHO)
    if values:
        out = _ECHO_SPACE.sub(_ECHO, out)
    return mask_volatile(out) if mask else out


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


def _hashes(prepared: str, n: int) -> np.ndarray:
    raw = prepared.encode("utf-8", "surrogatepass")
    if not raw:
        return np.empty(0, dtype=np.uint64)
    if len(raw) < 8:
        raw = raw + b"\0" * (8 - len(raw))
    count = len(raw) - 7
    # shingle at position p = the 8 bytes from p, read as one little-endian word (zero-copy views, one per p % 8)
    h = np.empty(count, dtype=np.uint64)
    for off in range(min(8, count)):
        k = (count - off + 7) // 8
        h[off::8] = np.frombuffer(raw, dtype="<u8", count=k, offset=off)
    if n < 8:  # shorter shingles: keep the low n bytes (the last 8 - n positions of the text are not shingled)
        h &= np.uint64((1 << (8 * n)) - 1)
    # splitmix64 finaliser: spread the packed bytes over all 64 bits
    h ^= h >> np.uint64(30)
    h *= _M1
    h ^= h >> np.uint64(27)
    h *= _M2
    h ^= h >> np.uint64(31)
    return h


class _Bloom:
    """A blocked Bloom filter: 2**bits bits in uint64 words; a key sets two bits of one word (chosen by the key's
    top bits, so keys sorted by value are sorted by word and can be OR-ed in without scatter conflicts)."""

    __slots__ = ("bits", "shift", "words")

    def __init__(self, bits: int) -> None:
        self.bits = max(bits, 7)
        self.shift = np.uint64(64 - (self.bits - 6))
        self.words = np.zeros(1 << (self.bits - 6), dtype=np.uint64)

    @staticmethod
    def mask(h: np.ndarray) -> np.ndarray:
        one = np.uint64(1)
        return (one << (h & np.uint64(63))) | (one << ((h >> np.uint64(6)) & np.uint64(63)))

    def contains(self, h: np.ndarray, m: np.ndarray) -> np.ndarray:
        """Membership of keys ``h`` whose :meth:`mask` is ``m``."""
        return (self.words[(h >> self.shift).astype(np.intp)] & m) == m

    def add_sorted(self, h: np.ndarray, m: np.ndarray) -> None:
        """Add distinct keys ``h`` given in ascending order (``m``: their masks)."""
        if h.size == 0:
            return
        word = (h >> self.shift).astype(np.intp)
        starts = np.flatnonzero(np.concatenate(([True], word[1:] != word[:-1])))
        self.words[word[starts]] |= np.bitwise_or.reduceat(m, starts)


class ShingleNovelty:
    """The default estimator: hashed character shingles in a growing, rotating Bloom filter (numpy)."""

    _BITS_PER_KEY = 16
    _START_BITS = 14

    def __init__(self, config: NoveltyConfig | None = None) -> None:
        self.config = config if config is not None else NoveltyConfig()
        self._max_bits = max(self._START_BITS, (self.config.window_shingles * self._BITS_PER_KEY - 1).bit_length())
        self.reset()

    def reset(self) -> None:
        self._current = _Bloom(self._START_BITS)
        self._previous: _Bloom | None = None
        self._keys = np.empty(1 << (self._START_BITS - 4), dtype=np.uint64)
        self._count = 0
        self.rotations = 0

    @property
    def remembered(self) -> int:
        """Distinct shingles in the current generation (approximately)."""
        return self._count

    def _seen(self, h: np.ndarray, m: np.ndarray) -> np.ndarray:
        seen = self._current.contains(h, m)
        if self._previous is not None:
            seen |= self._previous.contains(h, m)
        return seen

    def _remember(self, new: np.ndarray, m: np.ndarray) -> None:
        """Remember distinct, ascending keys ``new`` (``m``: their masks)."""
        if new.size == 0:
            return
        self._current.add_sorted(new, m)
        if self._current.bits < self._max_bits:
            need = self._count + new.size
            if need > self._keys.size:
                keys = np.empty(max(need, 2 * self._keys.size), dtype=np.uint64)
                keys[: self._count] = self._keys[: self._count]
                self._keys = keys
            self._keys[self._count : need] = new
        self._count += new.size
        capacity = (1 << self._current.bits) // self._BITS_PER_KEY
        if self._count <= capacity:
            return
        if self._current.bits < self._max_bits:
            bits = self._current.bits
            while (1 << bits) // self._BITS_PER_KEY < self._count and bits < self._max_bits:
                bits += 1
            grown = _Bloom(bits)
            keys = np.sort(self._keys[: self._count])
            grown.add_sorted(keys, _Bloom.mask(keys))
            self._current = grown
            if bits >= self._max_bits:
                self._keys = np.empty(0, dtype=np.uint64)  # full size: keys no longer needed
        else:
            self._previous, self._current = self._current, _Bloom(self._max_bits)
            self._count = 0
            self.rotations += 1

    def _distinct(self, prepared: str) -> np.ndarray:
        h = np.sort(_hashes(prepared, self.config.shingle_size))
        if h.size > 1:
            h = h[np.concatenate(([True], h[1:] != h[:-1]))]
        return h

    def score_prepared(self, prepared: str) -> float:
        """Novelty of an already prepared text (see :func:`prepare_text`): the fraction of its distinct shingles
        not seen before; then remember them."""
        h = self._distinct(prepared)
        if h.size == 0:
            return 0.0
        m = _Bloom.mask(h)
        new = ~self._seen(h, m)
        count = int(np.count_nonzero(new))
        if count:
            self._remember(h[new], m[new])
        return count / h.size

    def observe(self, text: str, echo: Sequence[str] = ()) -> float:
        return self.score_prepared(prepare_text(text, tuple(echo), self.config.mask_volatile))

    def learn(self, text: str) -> None:
        self.score_prepared(prepare_text(text, (), self.config.mask_volatile))


def make_estimator(config: NoveltyConfig) -> NoveltyEstimator:
    """The estimator named by ``config.kind``."""
    if config.kind == "shingles":
        return ShingleNovelty(config)
    raise ValueError(f"unknown novelty kind {config.kind!r}")  # unreachable: the config validates kind
