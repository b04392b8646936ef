"""The Java sensor's window of a long observation (``dev.pyguard.bridge.ObservationWindow``) is exactly the engine's
(``pyguard.engine.window.observed_text``): same edges in code points, same line, same checksum, for ASCII, multi-byte
and astral-plane text, at and around the boundaries."""

from __future__ import annotations

import pytest

from pyguard.engine.window import EDGE_CHARS, WINDOW_CHARS, observed_text

EMOJI = "\U0001f600"  # two UTF-16 units in Java, one character in Python


def _texts() -> dict[str, str]:
    cycle = "".join(chr(97 + (i * 7) % 26) for i in range(4096))
    long_ascii = (cycle * (3 * WINDOW_CHARS // len(cycle) + 1))[: 3 * WINDOW_CHARS]
    return {
        "ascii at the window": "a" * WINDOW_CHARS,
        "ascii one past": "a" * (WINDOW_CHARS + 1),
        "ascii long": long_ascii,
        "two-byte one past": "é" * (WINDOW_CHARS + 1),
        "three-byte long": ("日本語" * WINDOW_CHARS)[: 2 * WINDOW_CHARS + 5],
        "astral at the window": EMOJI * WINDOW_CHARS,  # 262,144 units in Java: still whole
        "astral one past": EMOJI * (WINDOW_CHARS + 1),
        # astral characters on both sides of each cut: the edges are counted in characters, never split a pair
        "astral at the head's cut": "a" * (EDGE_CHARS - 1) + EMOJI * 3 + "b" * WINDOW_CHARS,
        "astral at the tail's cut": "b" * WINDOW_CHARS + EMOJI * 3 + "a" * (EDGE_CHARS - 1),
        "mixed long": ("a" + EMOJI + "é" + "日" + "\n") * (WINDOW_CHARS // 2),
    }


TEXTS = _texts()


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_javas_window_is_the_engines(J, name):
    text = TEXTS[name]
    window = J("ObservationWindow").of(text)
    assert str(window.text()) == observed_text(text)
    if len(text) > WINDOW_CHARS:
        assert window.windowed() and window.wholeChars() == len(text)
        assert len(str(window.text())) <= WINDOW_CHARS  # the engine reads a window whole
    else:
        assert not window.windowed() and window.wholeChars() == -1


def test_lone_surrogates_are_cleaned_before_the_window_and_its_checksum(J):
    from jpype import JChar

    sb = J("java.lang.StringBuilder")()
    for i in range(2 * WINDOW_CHARS):
        sb.append(JChar("\ud800" if i % 1000 == 7 else "x"))
    window = J("ObservationWindow").of(sb.toString())
    cleaned = "".join("\ufffd" if i % 1000 == 7 else "x" for i in range(2 * WINDOW_CHARS))
    assert str(window.text()) == observed_text(cleaned)
