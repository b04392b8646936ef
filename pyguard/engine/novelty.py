"""Information gain: how much of an observation is new to the run.

:class:`NoveltyEstimator` is the pluggable interface (an embedding-based one may come later). The default,
:class:`ShingleNovelty`, scores a text by the fraction of its character shingles (``shingle_size`` bytes of the
prepared text, packed into one 64-bit word and mixed) that the run has not seen before, then remembers them:

- near 1 for new content, 0 for an exact repeat, in between for partly new content;
- the text is *prepared* first (:func:`prepare_text`): lower case, whitespace collapsed, volatile tokens
  (timestamps, clock times, UUIDs, long hex ids, durations, epoch times) masked, and the action's own argument
  values removed (a tool echoing ``order 12345`` back is not news);
- memory is a Bloom filter (two probes, 16 bits per remembered shingle, false-positive rate about 1.4%) whose
  table doubles from the remembered keys while it is small and, once it holds ``window_shingles``, rotates
  into a second generation: the estimator remembers at least the last ``window_shingles`` distinct shingles;
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
    data = np.frombuffer(prepared.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    if data.size == 0:
        return np.empty(0, dtype=np.uint64)
    if data.size < n:
        data = np.concatenate([data, np.zeros(n - data.size, dtype=np.uint8)])
    count = data.size - n + 1
    h = data[:count].astype(np.uint64)
    for j in range(1, n):
        h |= data[j : j + count].astype(np.uint64) << np.uint64(8 * j)
    # splitmix64 finaliser: spread the packed bytes over all 64 bits
    h ^= h >> np.uint64(30)
    h *= _M1
    h ^= h >> np.uint64(27)
    h *= _M2
    h ^= h >> np.uint64(31)
    return h


class _Bloom:
    """A two-probe Bloom filter over 2**bits bits, packed in bytes."""

    __slots__ = ("bits", "mask", "table")

    def __init__(self, bits: int) -> None:
        self.bits = bits
        self.mask = np.uint64((1 << bits) - 1)
        self.table = np.zeros(1 << max(bits - 3, 0), dtype=np.uint8)

    def _probes(self, h: np.ndarray):
        for idx in (h & self.mask, (h >> np.uint64(32)) & self.mask):
            yield (idx >> np.uint64(3)).astype(np.intp), np.left_shift(1, (idx & np.uint64(7)).astype(np.uint8), dtype=np.uint8)

    def contains(self, h: np.ndarray) -> np.ndarray:
        out = np.ones(h.size, dtype=bool)
        for byte, bit in self._probes(h):
            out &= (self.table[byte] & bit) != 0
        return out

    def add(self, h: np.ndarray) -> None:
        for byte, bit in self._probes(h):
            np.bitwise_or.at(self.table, byte, bit)


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

    def _seen(self, h: np.ndarray) -> np.ndarray:
        seen = self._current.contains(h)
        if self._previous is not None:
            seen |= self._previous.contains(h)
        return seen

    def _remember(self, new: np.ndarray) -> None:
        if new.size == 0:
            return
        new = np.sort(new)
        if new.size > 1:
            new = new[np.concatenate(([True], new[1:] != new[:-1]))]
        self._current.add(new)
        if not self._current.bits >= self._max_bits:
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
            grown.add(self._keys[: self._count])
            self._current = grown
            if bits >= self._max_bits:
                self._keys = np.empty(0, dtype=np.uint64)  # full size: keys no longer needed
        else:
            self._previous, self._current = self._current, _Bloom(self._max_bits)
            self._count = 0
            self.rotations += 1

    def score_prepared(self, prepared: str) -> float:
        """Novelty of an already prepared text (see :func:`prepare_text`), then remember it."""
        h = _hashes(prepared, self.config.shingle_size)
        if h.size == 0:
            return 0.0
        seen = self._seen(h)
        new = h[~seen]
        self._remember(new)
        return float(new.size) / float(h.size)

    def observe(self, text: str, echo: Sequence[str] = ()) -> float:
        return self.score_prepared(prepare_text(text, tuple(echo), self.config.mask_volatile))

    def learn(self, text: str) -> None:
        h = _hashes(prepare_text(text, (), self.config.mask_volatile), self.config.shingle_size)
        if h.size:
            self._remember(h[~self._seen(h)])


def make_estimator(config: NoveltyConfig) -> NoveltyEstimator:
    """The estimator named by ``config.kind``."""
    if config.kind == "shingles":
        return ShingleNovelty(config)
    raise ValueError(f"unknown novelty kind {config.kind!r}")  # unreachable: the config validates kind
