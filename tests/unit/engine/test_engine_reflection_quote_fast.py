"""The names in a stall message are quoted without compiling a regex per message (reflection.quote_names): held to
the regex it replaced."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pyguard.engine.reflection import quote_names

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _reference(message: str, names: set[str]) -> str:
    """The former implementation: one alternation of the names (those that are not blank), longest first; then
    every control character left written as its JSON escape, so the message stays on one line."""
    wanted = sorted((n for n in names if n.strip()), key=len, reverse=True)
    if wanted:
        pattern = re.compile("|".join(re.escape(n) for n in wanted))
        message = pattern.sub(lambda m: json.dumps(m.group(), ensure_ascii=False), message)
    return _CONTROL.sub(lambda m: json.dumps(m.group())[1:-1], message)


_TEXT = st.text(alphabet="ab(){}\"'\\ .é\n", max_size=40)


@settings(max_examples=400, deadline=None)
@given(
    message=_TEXT, names=st.sets(st.text(alphabet="ab(){}\"'\\ .é\n", min_size=1, max_size=6), min_size=1, max_size=5)
)
def test_quote_names_matches_the_regex_it_replaced(message: str, names: set[str]) -> None:
    assert quote_names(message, sorted(names)) == _reference(message, names)


def test_overlapping_and_nested_names() -> None:
    names = {"aa", "aab", "ba", "b"}
    for message in ("aaab", "abab", "aabaa", "baab", "xaaba b"):
        assert quote_names(message, sorted(names)) == _reference(message, names)
    assert quote_names("get_x and get_x_all ran", ["get_x", "get_x_all"]) == '"get_x" and "get_x_all" ran'
