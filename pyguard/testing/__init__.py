"""Helpers for testing agents guarded by pyguard, and for testing pyguard itself.

- :mod:`pyguard.testing.assertions` (re-exported here): assertions about guarded runs that read like the questions
  people ask (``assert_succeeded(result, within=8)``), failing with the run's trace summary.
- :mod:`pyguard.testing.synthetic`: labelled synthetic runs (seeded event sequences of known shape) for tests,
  benchmarks and demos.

    from pyguard.testing import assert_succeeded, assert_never_stalled, assert_max_repeats
    from pyguard.testing.synthetic import generate, labelled_set

Nothing here imports jpype: the helpers work on recorded runs as well as live ones.
"""

from __future__ import annotations

from pyguard.testing.assertions import (
    action_fingerprint,
    assert_answer_contains,
    assert_iterations_at_most,
    assert_max_repeats,
    assert_never_stalled,
    assert_outcome,
    assert_succeeded,
    assert_tokens_under,
    assert_tool_called,
    describe_run,
    repeated_actions,
)

__all__ = [
    "action_fingerprint",
    "repeated_actions",
    "describe_run",
    "assert_succeeded",
    "assert_outcome",
    "assert_never_stalled",
    "assert_max_repeats",
    "assert_tokens_under",
    "assert_iterations_at_most",
    "assert_tool_called",
    "assert_answer_contains",
]
