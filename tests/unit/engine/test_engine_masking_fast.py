"""The fast volatile masking of :func:`pyguard.engine.novelty.prepare_text` (the JSON-field regex with its name
lookahead, the digit-start token regex when no 8 hexadecimal characters follow each other) gives byte for byte what
the masking did before (the reference: the readable regexes of masking_reference.py, applied as they were), on
generated JSON-ish texts full of timestamps, UUIDs, hex ids, numbers, durations and volatile keys."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from masking_reference import VOLATILE_REFERENCE, mask_fields, mask_tokens

from pyguard.engine.novelty import mask_volatile, prepare_text

HEX_RUN = " ffffffff"
"""8 hexadecimal letters in a row and no volatile token: a text ending with it is masked with the full token regex
(the digit-start one serves only texts without such a run)."""


def _old_mask(unmasked: str, text: str) -> str:
    """The masking step as it was: ``unmasked`` is ``prepare_text(text, echo, mask=False)``."""
    collapsed = " ".join(text.lower().split())
    if collapsed.isascii() and not re.search(r"[-0-9]", collapsed):
        return unmasked  # nothing volatile-looking: no masking at all (field names included), as before
    # the field regex is applied to every text now: the old `'":' in out` guard skipped `"checked_at" : ...` (a space
    # before the colon), which the regex itself matches; the fast path must mask those too (changed on purpose)
    return mask_tokens(mask_fields(unmasked))


_HEX = "0123456789abcdef"
digits = st.text("0123456789", min_size=1, max_size=14)
hexes = st.text(_HEX, min_size=1, max_size=16)
two = st.integers(0, 99).map(lambda n: f"{n:02d}")
timestamp = st.builds(
    lambda y, mo, d, sep, h, mi, sec, frac, tz: f"{y}-{mo}-{d}{sep}{h}:{mi}{sec}{frac}{tz}",
    st.integers(1000, 2999),
    two,
    two,
    st.sampled_from(["T", "t", " ", "x"]),
    two,
    two,
    st.sampled_from(["", ":03", ":59"]),
    st.sampled_from(["", ".5", ",123", ".123456"]),
    st.sampled_from(["", "Z", "z", "+02:00", "-0530", "+05", "Z1"]),
)
clock = st.builds(lambda h, m, s, f: f"{h}:{m}:{s}{f}", st.integers(0, 123), two, two, st.sampled_from(["", ".25"]))
uuid = st.builds(
    lambda a, b, c, d, e: f"{a}-{b}-{c}-{d}-{e}",
    st.text(_HEX, min_size=7, max_size=9),
    st.text(_HEX, min_size=4, max_size=4),
    st.text("abcdef", min_size=4, max_size=4),
    st.text(_HEX, min_size=3, max_size=4),
    st.text(_HEX, min_size=11, max_size=13),
)
duration = st.builds(
    lambda n, f, sp, u: f"{n}{f}{sp}{u}",
    digits,
    st.sampled_from(["", ".5", ".25"]),
    st.sampled_from(["", " "]),
    st.sampled_from(["ms", "us", "\u00b5s", "ns", "s", "sec", "secs", "seconds", "milliseconds", "m", "sx"]),
)
epoch = st.builds(lambda n, extra: f"1{n}{extra}", st.integers(400000000, 999999999), st.sampled_from(["", "123", "1"]))
key = st.builds(
    lambda pre, end: pre + end,
    st.text("abcdefghijklmnopqrstuvwxyz0123456789_", max_size=46),
    st.sampled_from(
        ["_at", "_ms", "_us", "_ns", "_sec", "_secs", "_seconds", "timestamp", "elapsed", "duration", "latency"]
        + ["took", "request_id", "requestid", "trace_id", "span_id", "etag", "nonce", "", "id", "name", "_s"]
    ),
) | st.sampled_from(["time", "ts", "date", "timex", "Time", "checked_at", "x-took"])
value = st.one_of(
    timestamp.map(lambda t: f'"{t}"'),
    digits,
    digits.map(lambda d: "-" + d + ".5"),
    st.sampled_from(['"ok"', '"a\\"b"', '""', "true", "null", '"' + "x" * 120 + '"', "[1, 2]"]),
    hexes.map(lambda h: f'"{h}"'),
)
field = st.builds(lambda k, c, v: f'"{k}"{c}{v}', key, st.sampled_from([":", ": ", " :", " : ", ":  "]), value)
token = st.one_of(timestamp, clock, uuid, hexes, duration, epoch, digits, field, st.sampled_from(["SO-12345", "é"]))
separator = st.sampled_from([" ", ", ", '"', "-", "", "x", "\n", "{", "}", "(", "=", "\u2400", ":", "."])
texts = st.lists(st.tuples(token, separator), min_size=1, max_size=14).map(
    lambda parts: "".join(t + s for t, s in parts)
)


@settings(max_examples=400, deadline=None)
@given(texts, st.lists(st.sampled_from(["12345", "so-12345", "2024", "abc", "0.5s"]), max_size=2))
def test_prepare_text_masks_as_before(text: str, echo: list[str]) -> None:
    unmasked = prepare_text.__wrapped__(text, tuple(echo), False)
    assert prepare_text.__wrapped__(text, tuple(echo), True) == _old_mask(unmasked, text)


@settings(max_examples=400, deadline=None)
@given(texts.map(str.lower))
def test_mask_volatile_masks_as_before(text: str) -> None:
    assert mask_volatile(text) == mask_tokens(text)  # the digit-start regex, unless the text has a hex run
    assert mask_tokens(text + HEX_RUN).endswith(HEX_RUN)  # the run is no token, and joins none
    assert mask_volatile(text + HEX_RUN) == mask_tokens(text + HEX_RUN)  # the full token regex


def test_the_digit_start_regex_is_used_only_without_hex_runs() -> None:
    # a hex id or UUID that starts with a letter needs 8 hex characters in a row: masking only the tokens that
    # start with a digit (what the fast path does) would miss it
    text = "id deadbeef1234 and 9f1c2d3e-1234-abcd-1234-0123456789ab at 12:00:01"
    digit_start = VOLATILE_REFERENCE.sub(lambda m: "\u2400" if m.group()[0].isdigit() else m.group(), text)
    assert digit_start != mask_tokens(text)
    assert mask_volatile(text) == mask_tokens(text) == "id \u2400 and \u2400 at \u2400"


def test_field_names_up_to_the_length_limit() -> None:
    for pre in (39, 40, 41):
        text = '{"' + "a" * pre + '_took": 12, "' + "b" * pre + 'request_id": "r-1"}'
        unmasked = prepare_text.__wrapped__(text, (), False)
        assert prepare_text.__wrapped__(text, (), True) == _old_mask(unmasked, text)
