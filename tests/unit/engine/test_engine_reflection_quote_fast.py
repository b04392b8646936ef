"""The names in a stall message are quoted without compiling a regex per message: held to the regex it replaced."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pyguard.engine.reflection import _quote_each


def _reference(message: str, names: set[str]) -> str:
    """The former implementation: one alternation of the names, longest first."""
    pattern = re.compile("|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)))
    return pattern.sub(lambda m: json.dumps(m.group(), ensure_ascii=False), message)


_TEXT = st.text(alphabet="ab(){}\"'\\ .é\n", max_size=40)


@settings(max_examples=400, deadline=None)
@given(
    message=_TEXT, names=st.sets(st.text(alphabet="ab(){}\"'\\ .é\n", min_size=1, max_size=6), min_size=1, max_size=5)
)
def test_quote_each_matches_the_regex_it_replaced(message: str, names: set[str]) -> None:
    assert _quote_each(message, names) == _reference(message, names)


def test_overlapping_and_nested_names() -> None:
    names = {"aa", "aab", "ba", "b"}
    for message in ("aaab", "abab", "aabaa", "baab", "xaaba b"):
        assert _quote_each(message, names) == _reference(message, names)
    assert _quote_each("get_x and get_x_all ran", {"get_x", "get_x_all"}) == '"get_x" and "get_x_all" ran'
