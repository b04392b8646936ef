"""Text preparation of long texts (the byte scans and numpy checks past ``SCAN_CHARS``), of short ones (one
translation) and of echoed values (the prefilters before an echo's fuzzy regex) against the readable reference."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from masking_reference import mask_fields, mask_tokens

from pyguard.engine.novelty import SCAN_CHARS, prepare_text

_PIECES = [
    "order ",
    "SO-12345",
    "so 12345",
    "s-o-1-2-3-4-5",
    "12-345",
    "eu-west-1",
    "EU_WEST_1",
    "euwest1",
    "  ",
    "\n",
    "\t",
    "\x1c",
    " ",
    "é",
    "\u2013",
    '"checked_at": "2024-05-01t12:00:03z", ',
    '{"elapsed_ms": 345, "id": 7}',
    "12:00:01 ",
    "took 0.53s ",
    "deadbeefcafe1 ",
    "abc",
    "x",
]


def _reference(text: str, echo: tuple[str, ...], mask: bool) -> str:
    low = text.lower()
    reference = " ".join(low.split())
    values = sorted({" ".join(e.lower().split()) for e in echo if len(e.strip()) >= 3}, key=len, reverse=True)
    for value in values:
        reference = reference.replace(value, "\u2405")
    for value in values:
        norm = re.sub(r"[\W_]+", "", value)
        m = re.fullmatch(r"[a-z]{0,4}(\d{3,})", norm)
        if m:
            norm = m.group(1)[min(len(m.group(1)) - len(m.group(1).lstrip("0")), len(m.group(1)) - 3) :]
        if 3 <= len(norm) <= 64:
            reference = re.sub(r"[\W_]?".join(map(re.escape, norm)), "\u2405", reference)
    if values:
        reference = re.sub(r"\s*\u2405\s*", "\u2405", reference)
    if not mask:
        return reference
    return mask_tokens(mask_fields(reference))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES), min_size=1, max_size=12).map("".join),
    st.integers(0, 3),
    st.lists(st.sampled_from(["12345", "so-12345", "eu-west-1", "abc", " x  y ", "0.53s", "zzz9"]), max_size=3),
    st.booleans(),
)
def test_long_texts_match_the_reference(piece: str, filler: int, echo: list[str], mask: bool) -> None:
    # long enough for the long-text paths; the filler sets which whitespace and digits the bulk holds
    bulk = ["lorem ipsum dolor ", "lorem  ipsum\ndolor ", "lorem 42 ipsum ", "lorem-ipsum "][filler]
    text = bulk * (SCAN_CHARS // len(bulk) + 1) + piece + " " + bulk * 3
    assert len(text) > SCAN_CHARS
    assert prepare_text.__wrapped__(text, tuple(echo), mask) == _reference(text, tuple(echo), mask)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES), max_size=16).map("".join),
    st.lists(st.sampled_from(["12345", "so-12345", "eu-west-1", "s-o-1-2", "abc", "zzz9", "x-9-9-9"]), max_size=3),
)
def test_echo_prefilters_match_the_reference(text: str, echo: list[str]) -> None:
    # each value once on a fresh pattern cache entry and once compiled: both paths give the reference
    for _ in range(2):
        assert prepare_text.__wrapped__(text, tuple(echo), True) == _reference(text, tuple(echo), True)


@pytest.mark.parametrize(
    ("text", "echo", "tail"),
    [
        # values no other test uses, one pair per text: no pattern is compiled for them yet, so the prefilters decide
        ("qq6-7-8-9-0q7 done", ("sk-67890", "qqq7"), "q7"),
        ("vv2-4-6-8-0v3 " + "lorem ipsum " * 400, ("sk-24680", "vvv3"), "v3"),
    ],
)
def test_a_mark_left_by_one_echo_can_separate_the_next(text: str, echo: tuple[str, str], tail: str) -> None:
    # "sk-67890" removes "6-7-8-9-0"; its mark then separates "qq" and "q7": "qqq7" written with a separator
    assert prepare_text.__wrapped__(text, echo, True) == _reference(text, echo, True)
    assert tail not in prepare_text.__wrapped__(text, echo, True)


def test_long_ascii_whitespace_is_collapsed() -> None:
    for text in ("a b " * 2000 + "x  y", " " + "a b " * 2000, "a b " * 2000 + " ", "a b " * 2000 + "c\x1fd"):
        assert prepare_text.__wrapped__(text, (), False) == " ".join(text.lower().split())


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("ab9-: .s\t\n\r\x0b\x0c\x1c\x1f\x00\x01\x02\x03")), max_size=60),
    st.booleans(),
)
def test_short_texts_match_the_reference(text: str, mask: bool) -> None:
    # a short text's whitespace and digit checks are one translation: every kind of whitespace, digits and dashes,
    # and the bytes the translation marks with (1, 2) in the text itself
    assert len(text) < SCAN_CHARS
    assert prepare_text.__wrapped__(text, (), mask) == _reference(text, (), mask)
