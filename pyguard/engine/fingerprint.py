"""Action fingerprints: what a tool call *is*, independent of how the model happened to write it.

Two forms per action:

- **canonical**: the tool name plus the arguments parsed as JSON and re-serialised with sorted keys, no
  insignificant whitespace and normalised numbers (``1.0`` -> ``1``, ``1e3`` -> ``1000``, ``0.50`` -> ``0.5``).
  Two calls with the same canonical form are the very same request.
- **normalised**: also folds trivial rewrites that a looping model produces: key and tool-name case and
  punctuation (``orderId`` = ``order_id``), string case, surrounding whitespace and punctuation
  (``Acme Corp.`` = ``acme corp``), numbers written as strings (``"12345"`` = ``12345``), and identifiers made
  of a short letter prefix and digits (``SO-12345`` = ``so12345`` = ``#012345`` = ``12345``).

Arguments that are not valid JSON are fingerprinted as text (whitespace collapsed). Fingerprints are cached.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from pyguard.engine.tool_json import NOT_JSON, tool_json

__all__: list[str] = []

_ID_RE = re.compile(r"^([a-z]{0,4})(\d{3,})$")
r"""An id: up to 4 letters, then 3 or more digits. Its leading zeros are dropped in :func:`_norm_str` (keeping 3 digits)
rather than by a ``0*`` before ``\d{3,}``, which backtracked quadratically on a long run of zeros."""
_NON_ALNUM = re.compile(r"[\W_]+", re.UNICODE)
NUMBER_RE = re.compile(r"^[+-]?(?:\d++\.?\d*+|\.\d++)(?:[eE][+-]?\d++)?+$")
r"""What a number written as a string looks like (``"12"``, ``"-1.50"``, ``".5e3"``): a string argument it matches is
normalised as that number. Possessive quantifiers keep it linear (``\d+\.?\d*`` backtracked quadratically on a long
digit run followed by anything else: 25 s for 20,000 digits); it matches exactly the same strings. Public so that
tests can hold it to that slower form."""


def short_digest(text: str) -> str:
    """A 16-hex-digit digest of ``text`` (stable across processes, unlike ``hash``)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


_KEY_BITS = (1 << 64) - 1


def run_key(text: str) -> str:
    """A 16-hex-digit key of ``text`` to compare with other keys *of the same process only* (``hash`` of the str:
    seeded per process, so never write it anywhere; use :func:`short_digest` for that). Far cheaper than a digest:
    a str caches its hash, and one already used as a dict or cache key costs nothing more."""
    return "%016x" % (hash(text) & _KEY_BITS)


@dataclass(frozen=True, slots=True)
class ActionFingerprint:
    """The identity of one tool call."""

    tool: str
    """The tool name as requested."""
    canonical: str
    """``tool(canonical-json)``: equal for the very same request."""
    normalised: str
    """``tool(normalised-json)``: equal also for trivially rewritten requests."""
    exact_id: str
    """Digest of ``canonical``."""
    norm_id: str
    """Digest of ``normalised``."""
    arg_values: tuple[str, ...]
    """The argument values as text (strings and numbers), used to recognise a tool echoing its input."""

    def short(self, limit: int = 120) -> str:
        """The canonical form, cut to ``limit`` characters for evidence and messages."""
        return self.canonical if len(self.canonical) <= limit else self.canonical[: limit - 3] + "..."


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _parse(arguments: str) -> tuple[bool, Any]:
    text = arguments.strip()
    if not text:
        return True, {}
    value = tool_json(text, parse_float=Decimal)
    if value is NOT_JSON:
        return False, " ".join(text.split())
    return True, value


_MAX_INT_DIGITS = 30
"""Integral numbers with more digits than this keep their float form: ``1e999999999`` from a model must not
become a billion-digit int (a hang), nor overflow the JSON encoder's int-to-string limit (a crash)."""


def _number(d: Decimal) -> int | float:
    try:
        if d.is_finite() and d.adjusted() <= _MAX_INT_DIGITS and d == d.to_integral_value():
            return int(d)
    except (InvalidOperation, OverflowError):
        pass
    return float(d)


@lru_cache(maxsize=4096)
def _norm_name(name: str) -> str:
    """A tool name or argument key, lower case, letters and digits only (cached: names recur)."""
    return _NON_ALNUM.sub("", name.lower())


def normalised_value(s: str) -> str:
    """A string argument value as the normalised fingerprint compares it: lower case, letters and digits only, an
    id's short letter prefix and leading zeros dropped (``SO-012345`` -> ``12345``, ``eu-west-1`` -> ``euwest1``)."""
    s = _NON_ALNUM.sub("", s.strip().lower())
    m = _ID_RE.match(s)
    if not m:
        return s
    digits = m.group(2)
    zeros = len(digits) - len(digits.lstrip("0"))
    return digits[min(zeros, len(digits) - 3) :]


_norm_str = normalised_value


def _norm_scalar(obj: Any) -> str:
    if obj is None:
        return "null"
    if isinstance(obj, bool):
        return "true" if obj else "false"
    if isinstance(obj, (int, Decimal, float)):
        value = _number(Decimal(str(obj))) if not isinstance(obj, Decimal) else _number(obj)
        text = str(value)
        return _norm_str(text) if isinstance(value, int) else text
    if isinstance(obj, str):
        stripped = obj.strip()
        if NUMBER_RE.match(stripped):
            try:
                return _norm_scalar(Decimal(stripped))
            except InvalidOperation:
                pass
        return _norm_str(obj)
    return _norm_str(str(obj))


def _walk(obj: Any, leaves: list[str]) -> tuple[Any, Any]:
    """(canonical form, normalised form) of a parsed JSON value, in one pass; its leaf values (strings, stripped,
    and numbers as text, in document order) are appended to ``leaves``."""
    if isinstance(obj, dict):
        canon: dict[str, Any] = {}
        norm: dict[str, Any] = {}
        for k, v in obj.items():
            c, n = _walk(v, leaves)
            canon[str(k)] = c
            norm[_norm_name(str(k))] = n
        return canon, norm
    if isinstance(obj, list):
        pairs = [_walk(v, leaves) for v in obj]
        return [c for c, _ in pairs], [n for _, n in pairs]
    if isinstance(obj, str):
        stripped = obj.strip()
        if stripped:
            leaves.append(stripped)
        return obj, _norm_scalar(obj)
    if isinstance(obj, bool) or obj is None:
        return obj, _norm_scalar(obj)
    if isinstance(obj, int):  # an int is its own number: str(int(Decimal(str(n)))) == str(n)
        text = str(obj)
        leaves.append(text)
        return obj, text[1:] if obj < 0 else text  # = _norm_str(text): the sign dropped, no leading zeros
    if isinstance(obj, Decimal):
        value = _number(obj)
        text = str(value)
        leaves.append(text)
        return value, _norm_str(text) if isinstance(value, int) else text
    if isinstance(obj, float):  # NaN and infinities (json's constants)
        leaves.append(str(_number(Decimal(str(obj)))))
    return obj, _norm_scalar(obj)


def _dump(obj: Any) -> str:
    return _ENCODER.encode(obj)


def canonical_arguments(arguments: str) -> str:
    """The canonical form of a raw JSON arguments string (text, whitespace collapsed, if it is not JSON)."""
    ok, obj = _parse(arguments)
    return _dump(_walk(obj, [])[0]) if ok else "raw:" + obj


def normalised_arguments(arguments: str) -> str:
    """The normalised form of a raw JSON arguments string."""
    ok, obj = _parse(arguments)
    return _dump(_walk(obj, [])[1]) if ok else "raw:" + _norm_str(obj)


@lru_cache(maxsize=8192)
def fingerprint(tool: str, arguments: str = "") -> ActionFingerprint:
    """Fingerprint one tool call from its name and raw arguments string."""
    ok, obj = _parse(arguments)
    leaves: list[str] = []
    if ok:
        canon, norm = _walk(obj, leaves)
        canon_args = _dump(canon)
        norm_args = _dump(norm)
    else:
        canon_args = "raw:" + obj
        norm_args = "raw:" + _norm_str(obj)
        leaves = [obj] if obj else []
    canonical = f"{tool}({canon_args})"
    normalised = f"{_norm_name(tool)}({norm_args})"
    return ActionFingerprint(
        tool=tool,
        canonical=canonical,
        normalised=normalised,
        exact_id=short_digest(canonical),
        norm_id=short_digest(normalised),
        arg_values=tuple(leaves),
    )
