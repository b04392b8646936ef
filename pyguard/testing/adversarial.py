"""Tool outputs crafted against text patterns: shapes that once made (or could make) a pattern quadratic in the
length of a token. The engine's decisions on them must stay linear; ``benchmarks/suites/engine_scaling.py`` times
one decision on each (``adversarial``) and ``tests/unit/engine/test_engine_adversarial_text.py`` checks what the
decisions say.

    from pyguard.testing.adversarial import adversarial_texts
    texts = adversarial_texts()          # name -> about 1 MiB of text
"""

from __future__ import annotations

__all__: list[str] = []

MIB = 1 << 20


def adversarial_texts(size: int = MIB) -> dict[str, str]:
    """Each adversarial shape as about ``size`` characters, by name."""
    return {
        "one long token": "a" * size,
        "dashes and words": "a-" * (size // 2),
        "many short tokens": "ab " * (size // 3),
        "hex without digits": "abcdef" * (size // 6),
        "digits": "1" * size,
        "long hex then digit": "f" * size + "1",
        "mixed punctuation": "a1.b2:c3-" * (size // 9),
        "timestamps": "2026-11-30t12:00:00z " * (size // 21),
        "durations": "12 s 1.5 ms " * (size // 12),
    }
