"""Text operations on tool output are linear: no tool can stall the guard with a crafted error text.

Before the fix ``error_kind('a' * 40000)`` took about 21 s (a pattern quadratic in a token without digits). The
bound asserted here is deliberately generous (1 s for a whole decision on 1 MB); the timing itself is in
``benchmarks/`` (engine_scaling)."""

from __future__ import annotations

import re
import time

import pytest
from engine_support import Script

from pyguard.engine import Policy
from pyguard.engine.stall import error_kind

MB = 1 << 20

ADVERSARIAL = {
    "one long token": "a" * MB,
    "dashes and words": "a-" * (MB // 2),
    "many short tokens": "ab " * (MB // 3),
    "hex without digits": "abcdef" * (MB // 6),
    "digits": "1" * MB,
    "long hex then digit": "f" * MB + "1",
    "mixed punctuation": "a1.b2:c3-" * (MB // 9),
    "timestamps": "2026-11-30t12:00:00z " * (MB // 21),
    "durations": "12 s 1.5 ms " * (MB // 12),
}

_REFERENCE = re.compile(r"[\w\u2400\u2405-]*\d[\w\u2400\u2405-]*")


@pytest.mark.parametrize("text", ["", "error 404 at node-17 (retry 3)", "a-b c_d 12x y", "timeout ␀ after ␅ 30s",
                                  "-" * 300, "x" * 250 + " 1", "1" * 250 + " word"])
def test_error_kind_equals_the_masking_it_replaces(text):
    from pyguard.engine.fingerprint import short_digest

    assert error_kind(text) == short_digest(_REFERENCE.sub("#", text)[:200])


def test_error_kind_is_linear_on_a_long_token_without_digits():
    t0 = time.perf_counter()
    error_kind("a" * MB)
    assert time.perf_counter() - t0 < 1.0


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_a_decision_on_a_1mb_adversarial_error_text_is_fast(name):
    text = ADVERSARIAL[name]
    script = Script()
    session = Policy().new_run("r1")
    session.observe(script.step(("lookup", {"id": 1}, "ok")))
    session.observe(script.step(("lookup", {"id": 1}, text), error=True))
    event = script.step(("lookup", {"id": 1}, text), error=True)
    t0 = time.perf_counter()
    session.observe(event)
    assert time.perf_counter() - t0 < 1.0, f"a decision on 1 MB of {name!r} took over 1 s"
