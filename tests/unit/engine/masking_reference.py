"""The readable specification of the volatile-token masking (imported by the engine tests): the regexes
:mod:`pyguard.engine.novelty` had before they were rewritten for speed, which the fast ones must match exactly."""

from __future__ import annotations

import re

VOLATILE_REFERENCE = re.compile(
    r"(?<![0-9a-z])(?:"
    r"\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:z|[+-]\d{2}:?\d{2})?"  # ISO date-times
    r"|\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?"  # clock times
    r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"  # UUIDs
    r"|(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{12,}"  # long hex ids
    r"|\d+(?:\.\d+)?\s?(?:ms|us|\u00b5s|ns|s|secs?|seconds?|milliseconds?)"  # durations
    r"|1[5-9]\d{8}(?:\d{3})?"  # epoch seconds / milliseconds
    r")(?![0-9a-z])"
)
"""A volatile token standing alone (not inside a longer word): masked by :func:`pyguard.engine.novelty.mask_volatile`."""

FIELD_REFERENCE = re.compile(
    r'("[a-z0-9_]{0,40}?(?:_at|_ms|_us|_ns|_secs?|_seconds|timestamp|elapsed|duration|latency|took|'
    r'request_?id|trace_?id|span_?id|etag|nonce)"|"(?:time|ts|date)")(\s?:\s?)("[^"\\]{0,100}"|-?\d{1,30}(?:\.\d{1,30})?)'
)
"""A JSON field whose name says its value is volatile: groups (name in quotes, colon, value)."""


def mask_fields(text: str) -> str:
    """``text`` with the value of every volatile field masked (a string value stays a JSON string)."""
    return FIELD_REFERENCE.sub(
        lambda m: m.group(1) + m.group(2) + ('"\u2400"' if m.group(3).startswith('"') else "\u2400"), text
    )


def mask_tokens(text: str) -> str:
    """``text`` (lower case) with every volatile token masked."""
    return VOLATILE_REFERENCE.sub("\u2400", text)
