"""What kind of result a tool returned: an *empty* one (it says only "nothing") and the *kind* of an error.

Both read a result's prepared text (:func:`pyguard.engine.novelty.prepare_text`: volatile tokens masked, echoed
arguments marked), so they are pure functions of one string.
"""

from __future__ import annotations

import re
from typing import Any

from pyguard.engine.fingerprint import short_digest
from pyguard.engine.tool_json import NOT_JSON, tool_json

__all__: list[str] = []

_TOKENS = re.compile(r"[\w\u2400\u2405-]+")
"""A run of word characters, masks, echo marks and dashes: a token whose digits make it a value, not a kind."""
_DIGIT = re.compile(r"\d")
_ERROR_KIND_CHARS = 200
_EMPTY_MAX_CHARS = 120
"""Longest prepared text that can be an empty result; anything longer says something."""
_NOUNS = (
    r"(?:records?|results?|rows?|items?|entries|entry|documents?|docs|matches|match|hits?|data|events?|logs?|files?)"
)
_NO_DATA = re.compile(
    r"(?:no (?:matching |such )?" + _NOUNS + r"(?: (?:were |was )?(?:found|returned|available|matched))?"
    r"|(?:0|zero) " + _NOUNS + r"(?: (?:were |was )?(?:found|returned|matched))?"
    r"|(?:\w+ ){0,2}not found"
    r"|nothing (?:found|returned|to show)"
    r"|none|null|nil|empty|no data|no content|\(empty\)|\(no results?\)"
    r")"
)
"""A whole result (punctuation, masked and echoed values removed) that only says "nothing"."""
_PUNCTUATION = re.compile(r"[^\w ]+|_")
"""Everything but letters, digits and spaces (an underscore counts as punctuation: ``not_found``)."""


def _void(value: Any) -> bool:
    """A JSON value that carries nothing: null, an empty string, list or object, a masked or echoed value only, or
    an object of such values, zeros and ``false`` with at least one empty collection (``{"items": [], "total": 0}``)."""
    if value is None or (isinstance(value, (list, dict, str)) and not value):
        return True
    if isinstance(value, str):
        return not value.strip(" \u2400\u2405")
    if not isinstance(value, dict):
        return False
    collections = 0
    for v in value.values():
        if isinstance(v, (bool, int, float)):
            if v:
                return False
        elif not _void(v):
            return False
        elif isinstance(v, (list, dict)):
            collections += 1
    return collections > 0


def is_empty_result(prepared: str) -> bool:
    """True when ``prepared`` (a result text after :func:`pyguard.engine.novelty.prepare_text`) is nothing but an
    empty result: blank or only echoed arguments; a JSON ``[]``, ``{}``, ``null`` or an object of empty collections and zeros; or a short
    no-data phrase ("no matching records found", "0 rows returned", "order not found", "none"). Conservative: a
    text longer than 120 characters, or one that says anything besides "nothing", is not empty."""
    text = prepared.strip()
    if len(text) > _EMPTY_MAX_CHARS:
        return False
    if not text.strip("\u2405 "):
        return True  # blank, or only the action's own arguments echoed back
    if text[0] in "[{" or text == "null":
        value = tool_json(text)
        return value is not NOT_JSON and _void(value)
    words = " ".join(_PUNCTUATION.sub(" ", text.replace("\u2400", " ").replace("\u2405", " ")).split())
    return bool(words) and _NO_DATA.fullmatch(words) is not None


def error_kind(prepared: str) -> str:
    """The kind of an error from its prepared text: tokens with digits masked, first 200 characters.

    Linear in the text and stops once 200 characters of the masked form are built, so a tool error of any size or
    shape costs the same (a single pattern ``[\\w-]*\\d[\\w-]*`` was quadratic on a long token without digits)."""
    out: list[str] = []
    n = 0
    pos = 0
    for m in _TOKENS.finditer(prepared):
        if m.start() > pos:
            out.append(prepared[pos : m.start()])
            n += m.start() - pos
            if n >= _ERROR_KIND_CHARS:
                break
        token = m.group()
        piece = "#" if _DIGIT.search(token) else token
        out.append(piece)
        n += len(piece)
        pos = m.end()
        if n >= _ERROR_KIND_CHARS:
            break
    else:
        out.append(prepared[pos : pos + _ERROR_KIND_CHARS])
    return short_digest("".join(out)[:_ERROR_KIND_CHARS])
