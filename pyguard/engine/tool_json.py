"""JSON in what a model or a tool wrote (a call's arguments, a result), as the engine reads it: through the one safe
reader (:func:`pyguard.base.safe_reader.loads`), never raising.

Text that is not JSON, and JSON the reader refuses (nested deeper than Python's parser follows, an integer longer
than 4,300 digits) or nested deeper than :data:`MAX_DEPTH` levels, is read as text: :data:`NOT_JSON`. A model that
writes 100,000 ``[`` or a 5,000-digit number gets the decision any call with arguments that are not JSON gets, never
an error that ends its run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from pyguard.base.errors import TraceFormatError
from pyguard.base.safe_reader import loads

__all__: list[str] = []

MAX_DEPTH: Final = 100
"""The deepest nesting (containers inside containers) the engine reads as JSON. An action's fingerprint walks the
value recursively, a Python frame or two per level, so a value nested a few hundred levels deep (which the parser
still reads) would exhaust the stack inside a decision; no tool call a model writes nests anywhere near this deep."""

NOT_JSON: Final = object()
"""What :func:`tool_json` returns for text it reads as text (JSON's ``null`` is None)."""


def tool_json(text: str, parse_float: Callable[[str], Any] | None = None) -> Any:
    """The JSON value of ``text``, or :data:`NOT_JSON` (see the module docstring). ``parse_float``: as for
    ``json.loads``."""
    try:
        value = loads(text, source="tool JSON", parse_float=parse_float)
    except (json.JSONDecodeError, TraceFormatError):
        return NOT_JSON
    if text.count("[") + text.count("{") > MAX_DEPTH and _deeper_than(value, MAX_DEPTH):
        return NOT_JSON
    return value


def _deeper_than(value: Any, depth: int) -> bool:
    """Whether ``value`` nests containers more than ``depth`` levels deep (level by level, without recursion)."""
    level = [value]
    for _ in range(depth):
        inner: list[Any] = []
        for v in level:
            if isinstance(v, dict):
                inner.extend(v.values())
            elif isinstance(v, list):
                inner.extend(v)
        if not inner:
            return False
        level = inner
    return any(isinstance(v, (dict, list)) for v in level)
