"""One definition of tokens (issue 13): a call's and a run's, with "unknown" (None) kept apart from zero, and every
user of tokens (caps, results, replay, calibration, the CI gate) reading that one definition."""

from __future__ import annotations

import pytest

from pyguard.base.ending import EndNotes, Settled, footer
from pyguard.base.ending import token_totals as usage_totals
from pyguard.base.events import IterationEvent, Outcome, RunEnd, RunRecord, RunStart, ToolCall
from pyguard.calibrate.runs import iteration_tokens
from pyguard.check.outcomes import run_tokens
from pyguard.engine.usage import UsageTracker
from pyguard.replay import event_tokens
from pyguard.result import RunResult


def call(i: int, total=None, inp=None, out=None, final=False) -> IterationEvent:
    calls = () if final else (ToolCall(id=f"c{i}", name="t", arguments="{}"),)
    return IterationEvent(
        run_id="r", index=i, total_tokens=total, input_tokens=inp, output_tokens=out, tool_calls=calls
    )


@pytest.mark.parametrize(
    "kwargs, tokens, complete, reported",
    [
        ({"total": 30, "inp": 10, "out": 20}, 30, True, True),
        ({"total": 30}, 30, True, True),  # the total alone is the whole count
        ({"inp": 10, "out": 20}, 30, True, True),
        ({"inp": 10}, 10, False, True),  # input only: a lower bound
        ({"out": 7}, 7, False, True),
        ({}, None, False, False),  # nothing reported: unknown, not zero
        ({"total": 0}, 0, True, True),  # the provider said zero: zero
        ({"inp": 0, "out": 0}, 0, True, True),
    ],
)
def test_a_calls_tokens(kwargs, tokens, complete, reported):
    e = call(1, **kwargs)
    assert e.tokens == tokens and e.tokens_complete is complete and e.usage_reported is reported
    # every user reads the same definition
    assert iteration_tokens(e) == (None if tokens is None else float(tokens))
    assert event_tokens(e) == (tokens if complete else None)  # replay: whole counts only
    tracker = UsageTracker()
    tracker.update(e, 0.0)
    assert tracker.state.total_tokens == (tokens or 0) and tracker.state.tokens_reported is reported


def record(events, end=None) -> RunRecord:
    return RunRecord(start=RunStart(run_id="r"), events=list(events), end=end)


def test_a_runs_tokens_unknown_complete_and_partial():
    unknown = record([call(1), call(2, final=True)])
    assert unknown.tokens is None and unknown.tokens_partial is False
    assert run_tokens(unknown) is None and RunResult(record=_ended(unknown)).total_tokens is None

    complete = record([call(1, total=100), call(2, inp=40, out=10, final=True)])
    assert complete.tokens == 150 and complete.tokens_partial is False

    some_missing = record([call(1, total=100), call(2, final=True)])
    assert some_missing.tokens == 100 and some_missing.tokens_partial is True  # a lower bound, and it says so
    assert run_tokens(some_missing) == 100 and run_tokens(some_missing, 1) == 100

    half_reported = record([call(1, inp=60), call(2, total=40, final=True)])
    assert half_reported.tokens == 100 and half_reported.tokens_partial is True

    zeros = record([call(1, total=0), call(2, total=0, final=True)])
    assert zeros.tokens == 0 and zeros.tokens_partial is False  # reported zero is zero, not unknown


def test_the_footer_count_wins_and_its_partial_flag_is_kept():
    events = [call(1, total=100), call(2, total=50, final=True)]
    end = RunEnd(run_id="r", outcome=Outcome.SUCCEEDED, input_tokens=90, output_tokens=60)
    assert record(events, end).tokens == 150  # input + output of the footer
    end = RunEnd(run_id="r", outcome=Outcome.SUCCEEDED, total_tokens=7, tokens_partial=True)
    rec = record(events, end)
    assert rec.tokens == 7 and rec.tokens_partial is True
    result = RunResult(record=rec)
    assert result.total_tokens == 7 and result.tokens_partial is True


def test_the_guards_footer_counts_what_was_reported_and_marks_the_rest():
    events = [call(1, inp=60, out=10), call(2), call(3, total=30, final=True)]
    assert usage_totals(events) == (60, 10, 100, True)
    assert usage_totals([call(1), call(2)]) == (None, None, None, False)
    ok = Settled(Outcome.SUCCEEDED, "the model answered")
    end = footer("r", events, ok, notes=EndNotes(tokens=usage_totals(events)))
    assert end.tokens_partial is True and end.total_tokens == 100
    whole = [call(1, total=5), call(2, total=5, final=True)]
    assert footer("r", whole, ok, notes=EndNotes(tokens=usage_totals(whole))).tokens_partial is False


def _ended(rec: RunRecord) -> RunRecord:
    return rec.model_copy(update={"end": RunEnd(run_id="r", outcome=Outcome.SUCCEEDED)})
