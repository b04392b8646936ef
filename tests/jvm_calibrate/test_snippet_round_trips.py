"""The snippets' ``maxToolCallingRoundTrips`` in LangChain4j's own terms (issue 37, point 3), checked on a real
AiServices agent (LangChain4j's own tool loop, pyguard's scripted model): the round trips a snippet writes for N* give
at most N* model calls, and the alternative the snippet names (N* round trips) keeps an answer at call N*."""

from __future__ import annotations

import re

import numpy as np
import pytest

from pyguard.base.events import Outcome
from pyguard.calibrate import RunArrays, RunStatus, calibrate_arrays, make_config
from pyguard.calibrate.snippet import java_snippet, properties_snippet, toml_snippet


def _report(successes_at: int, horizon: int = 12):
    """Runs that succeed at call ``successes_at`` or go on to the recording's cap: N* = ``successes_at``."""
    n = np.array([successes_at] * 60 + [horizon] * 40)
    status = np.array([RunStatus.SUCCESS] * 60 + [RunStatus.CENSORED] * 40)
    arrays = RunArrays.from_columns(n, status, np.full((100, horizon), np.nan))
    report = calibrate_arrays(arrays, make_config(failure_cost=50, cost_per_call=1, bootstrap=50))
    assert report.task_types[0].recommended_max_iterations == successes_at
    return report


def _round_trips(report) -> int:  # noqa: ANN001
    """The round trips the three snippets write (they must agree)."""
    java = int(re.search(r"UNTYPED_MAX_TOOL_CALLING_ROUND_TRIPS = (\d+);", java_snippet(report)).group(1))
    props = int(re.search(r"\.maxToolCallingRoundTrips=(\d+)", properties_snippet(report)).group(1))
    toml = int(re.search(r"maxToolCallingRoundTrips\((\d+)\): up to", toml_snippet(report)).group(1))
    assert java == props == toml
    return java


@pytest.mark.jvm
@pytest.mark.parametrize("n_star", [2, 4, 7])
def test_the_snippets_round_trips_give_n_star_model_calls(jvm, n_star: int) -> None:  # noqa: ANN001
    from pyguard.jvm import scripted_model
    from pyguard.live.guard import run_unguarded

    report = _report(n_star)
    rounds = _round_trips(report)
    # a run that never stops calling tools ("oscillating") under that setting: LangChain4j's own cap ends it
    run = run_unguarded("aiservices", scripted_model("oscillating"), "x", max_tool_calling_round_trips=rounds)
    assert run.outcome is Outcome.EXPIRED
    assert run.model_calls == len(run.record.events) == n_star
    assert f"up to {n_star} model calls" in java_snippet(report)


@pytest.mark.jvm
def test_the_named_alternative_keeps_the_answer_at_call_n_star(jvm) -> None:  # noqa: ANN001
    """ "convergent" answers at model call 4: with N* = 4 the snippet's setting (3) discards that answer, as its
    comment says (c(3) = 0), and the alternative it names, maxToolCallingRoundTrips(4), keeps it."""
    from pyguard.jvm import scripted_model
    from pyguard.live.guard import run_unguarded

    report = _report(4)
    assert _round_trips(report) == 3
    assert "keeps answers up to call 3 (c(3) = 0.000)" in java_snippet(report)
    assert "maxToolCallingRoundTrips(4) keeps answers up to call 4 (c(4) = 0.600)" in java_snippet(report)
    cut = run_unguarded("aiservices", scripted_model("convergent"), "x", max_tool_calling_round_trips=3)
    assert (cut.outcome, cut.model_calls) == (Outcome.EXPIRED, 4)
    kept = run_unguarded("aiservices", scripted_model("convergent"), "x", max_tool_calling_round_trips=4)
    assert (kept.outcome, kept.model_calls) == (Outcome.SUCCEEDED, 4)
