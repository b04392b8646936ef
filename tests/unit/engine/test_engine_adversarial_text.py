"""Text operations on tool output are linear: no tool can stall the guard with a crafted error text.

Before the fix ``error_kind('a' * 40000)`` took about 21 s (a pattern quadratic in a token without digits). These
tests run every operation on 1 MiB of each adversarial shape (:mod:`pyguard.testing.adversarial`) and check what it
says; no time is asserted here. How long each takes is measured by ``python benchmarks/run.py engine_scaling``
(``adversarial``: CPU time of one decision on each shape, target under 1 s); a quadratic pattern on 1 MiB would take
hours, so this module would not finish either."""

from __future__ import annotations

import re

import pytest
from engine_support import Script

from pyguard.engine import Policy
from pyguard.engine.result_kinds import error_kind
from pyguard.testing.adversarial import MIB, adversarial_texts

MB = MIB
ADVERSARIAL = adversarial_texts()

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


def test_error_kind_reads_a_long_token_without_digits():
    from pyguard.engine.fingerprint import short_digest

    assert error_kind("a" * MB) == short_digest("a" * 200)


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_the_same_call_failing_with_1mb_of_adversarial_error_text_is_reflected_then_stopped(name):
    text = ADVERSARIAL[name]
    script = Script()
    session = Policy().new_run("r1")
    decisions = [session.observe(script.step(("lookup", {"id": 1}, "ok")))]
    while not decisions[-1].stops and len(decisions) < 8:
        decisions.append(session.observe(script.step(("lookup", {"id": 1}, text), error=True)))
    assert [(str(d.action), d.rule) for d in decisions[3:]] == [
        ("reflect", "repeat_no_gain"),
        ("stop", "fruitless_retry"),
    ], name


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
    assert NUMBER_RE.match("1" * MB + "x") is None
    assert normalised_value("0" * MB + "x") == "0" * MB + "x"
    assert normalised_value("ab" + "0" * MB) == "000"  # the old pattern's answer: the digits after 0*, at least 3


@pytest.mark.parametrize("name", ["a" * MB, "ab\n" * (MB // 3)])
def test_a_decision_with_a_1mb_tool_name_is_fast(name):
    script = Script()
    session = Policy().new_run("r1")
    decisions = []
    for _ in range(4):
        decisions.append(session.observe(script.step((name, {"id": 1}, "same result"))))
        if decisions[-1].stops:
            break
    reflection = next((d.reflection for d in decisions if d.reflection), None)
    assert reflection is not None and len(reflection) < 20_000
