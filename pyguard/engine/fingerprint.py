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

__all__ = ["ActionFingerprint", "fingerprint", "canonical_arguments", "normalised_arguments", "short_digest"]

_ID_RE = re.compile(r"^([a-z]{0,4})0*(\d{3,})$")
_NON_ALNUM = re.compile(r"[\W_]+", re.UNICODE)
_NUMBER_RE = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def short_digest(text: str) -> str:
    """A 16-hex-digit digest of ``text`` (stable across processes, unlike ``hash``)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


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


def _parse(arguments: str) -> tuple[bool, Any]:
    text = arguments.strip()
    if not text:
        return True, {}
    try:
        return True, json.loads(text, parse_float=Decimal)
    except (ValueError, RecursionError):
        return False, " ".join(text.split())


def _number(d: Decimal) -> int | float:
    try:
        if d == d.to_integral_value():
            return int(d)
    except (InvalidOperation, OverflowError):
        pass
    return float(d)


def _canon(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _canon(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_canon(v) for v in obj]
    if isinstance(obj, Decimal):
        return _number(obj)
    return obj


def _norm_str(s: str) -> str:
    s = _NON_ALNUM.sub("", s.strip().lower())
    m = _ID_RE.match(s)
    if m:
        return m.group(2)
    if _NUMBER_RE.match(s):
        return s
    return s


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
        if _NUMBER_RE.match(stripped):
            try:
                return _norm_scalar(Decimal(stripped))
            except InvalidOperation:
                pass
        return _norm_str(obj)
    return _norm_str(str(obj))


def _norm(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {_NON_ALNUM.sub("", str(k).lower()): _norm(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_norm(v) for v in obj]
    return _norm_scalar(obj)


def _leaves(obj: Any, out: list[str]) -> None:
    if isinstance(obj, dict):
        for v in obj.values():
            _leaves(v, out)
    elif isinstance(obj, list):
        for v in obj:
            _leaves(v, out)
    elif isinstance(obj, str):
        if obj.strip():
            out.append(obj.strip())
    elif isinstance(obj, (int, float, Decimal)) and not isinstance(obj, bool):
        out.append(str(_number(Decimal(str(obj)))))


def _dump(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_arguments(arguments: str) -> str:
    """The canonical form of a raw JSON arguments string (text, whitespace collapsed, if it is not JSON)."""
    ok, obj = _parse(arguments)
    return _dump(_canon(obj)) if ok else "raw:" + obj


def normalised_arguments(arguments: str) -> str:
    """The normalised form of a raw JSON arguments string."""
    ok, obj = _parse(arguments)
    return _dump(_norm(obj)) if ok else "raw:" + _norm_str(obj)


@lru_cache(maxsize=8192)
def fingerprint(tool: str, arguments: str = "") -> ActionFingerprint:
    """Fingerprint one tool call from its name and raw arguments string."""
    ok, obj = _parse(arguments)
    if ok:
        canon_args = _dump(_canon(obj))
        norm_args = _dump(_norm(obj))
        leaves: list[str] = []
        _leaves(obj, leaves)
    else:
        canon_args = "raw:" + obj
        norm_args = "raw:" + _norm_str(obj)
        leaves = [obj] if obj else []
    canonical = f"{tool}({canon_args})"
    normalised = f"{_NON_ALNUM.sub('', tool.lower())}({norm_args})"
    return ActionFingerprint(
        tool=tool,
        canonical=canonical,
        normalised=normalised,
        exact_id=short_digest(canonical),
        norm_id=short_digest(normalised),
        arg_values=tuple(leaves),
    )
