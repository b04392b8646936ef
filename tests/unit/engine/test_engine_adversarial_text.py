"""Text operations on tool output are linear: no tool can stall the guard with a crafted error text.

Before the fix ``error_kind('a' * 40000)`` took about 21 s (a pattern quadratic in a token without digits). The
bound asserted here is deliberately generous (1 s for a whole decision on 1 MB); the timing itself is in
``benchmarks/`` (engine_scaling). CPU time of the test's thread is measured, so a busy machine does not make it flaky
(a quadratic pattern on 1 MB would take hours, not seconds)."""

from __future__ import annotations

import re
import time

import pytest
from engine_support import Script

from pyguard.engine import Policy
from pyguard.engine.result_kinds import error_kind

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


@pytest.mark.parametrize(
    "text",
    [
        "",
        "error 404 at node-17 (retry 3)",
        "a-b c_d 12x y",
        "timeout ␀ after ␅ 30s",
        "-" * 300,
        "x" * 250 + " 1",
        "1" * 250 + " word",
    ],
)
def test_error_kind_equals_the_masking_it_replaces(text):
    from pyguard.engine.fingerprint import short_digest

    assert error_kind(text) == short_digest(_REFERENCE.sub("#", text)[:200])


def test_error_kind_is_linear_on_a_long_token_without_digits():
    t0 = time.thread_time()
    error_kind("a" * MB)
    assert time.thread_time() - t0 < 1.0


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_a_decision_on_a_1mb_adversarial_error_text_is_fast(name):
    text = ADVERSARIAL[name]
    script = Script()
    session = Policy().new_run("r1")
    session.observe(script.step(("lookup", {"id": 1}, "ok")))
    session.observe(script.step(("lookup", {"id": 1}, text), error=True))
    event = script.step(("lookup", {"id": 1}, text), error=True)
    t0 = time.thread_time()
    session.observe(event)
    assert time.thread_time() - t0 < 1.0, f"a decision on 1 MB of {name!r} took over 1 s"


_OLD_ID = re.compile(r"^([a-z]{0,4})0*(\d{3,})$")
_OLD_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def test_fingerprint_patterns_are_linear_and_unchanged():
    import random

    from pyguard.engine.fingerprint import NUMBER_RE, normalised_value

    rng = random.Random(7)
    alphabet = "0123.e-+ab"
    for _ in range(20000):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 9)))
        assert bool(NUMBER_RE.match(s)) == bool(_OLD_NUMBER.match(s)), s
        low = "".join(c for c in s.lower() if c.isalnum())
        m = _OLD_ID.match(low)
        assert normalised_value(s) == (m.group(2) if m else low), s
    t0 = time.thread_time()
    NUMBER_RE.match("1" * MB + "x")
    normalised_value("0" * MB + "x")
    normalised_value("ab" + "0" * MB)
    assert time.thread_time() - t0 < 1.0


@pytest.mark.parametrize("name", ["a" * MB, "ab\n" * (MB // 3)])
def test_a_decision_with_a_1mb_tool_name_is_fast(name):
    script = Script()
    session = Policy().new_run("r1")
    decisions = []
    t0 = time.thread_time()
    for _ in range(4):
        decisions.append(session.observe(script.step((name, {"id": 1}, "same result"))))
        if decisions[-1].stops:
            break
    assert time.thread_time() - t0 < 2.0, "four decisions with a 1 MB tool name took over 2 s of CPU"
    reflection = next((d.reflection for d in decisions if d.reflection), None)
    assert reflection is not None and len(reflection) < 20_000
