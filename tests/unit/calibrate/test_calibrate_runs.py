"""Extraction: RunRecords -> columns, status rules, token counts."""

from __future__ import annotations

import numpy as np
import pytest

from pyguard.base.errors import InputError
from pyguard.base.events import IterationEvent, Outcome, RunEnd, RunRecord, RunStart, ToolCall
from pyguard.calibrate import UNTYPED, RunAccumulator, RunArrays, RunStatus, extract_runs, run_status
from pyguard.calibrate.runs import iteration_tokens


def _run(
    run_id: str, n: int, end: dict | None, task_type: str | None = "lookup", tokens: list | None = None
) -> RunRecord:
    events = []
    for k in range(1, n + 1):
        tok = None if tokens is None else tokens[k - 1]
        events.append(
            IterationEvent(run_id=run_id, index=k, total_tokens=tok, tool_calls=() if k == n else (ToolCall(name="t"),))
        )
    footer = None if end is None else RunEnd(run_id=run_id, iterations=n, **end)
    return RunRecord(start=RunStart(run_id=run_id, task_type=task_type), events=events, end=footer)


@pytest.mark.parametrize(
    ("end", "expected"),
    [
        (None, RunStatus.CENSORED),
        ({"outcome": Outcome.SUCCEEDED}, RunStatus.SUCCESS),
        ({"outcome": Outcome.SUCCEEDED, "success_label": False}, RunStatus.FAILURE),
        ({"outcome": Outcome.FAILED}, RunStatus.FAILURE),
        ({"outcome": Outcome.FAILED, "success_label": True}, RunStatus.SUCCESS),
        ({"outcome": Outcome.EXPIRED}, RunStatus.CENSORED),
        ({"outcome": Outcome.STALLED}, RunStatus.CENSORED),
        ({"outcome": Outcome.CANCELLED}, RunStatus.CENSORED),
        ({"outcome": Outcome.ESCALATED}, RunStatus.CENSORED),
        # a recording that ends in its final tool call (submit, purchase) with a success label: a success
        ({"outcome": Outcome.EXPIRED, "censored": True, "success_label": True}, RunStatus.SUCCESS),
        ({"outcome": Outcome.EXPIRED, "censored": True, "success_label": False}, RunStatus.CENSORED),
        ({"outcome": Outcome.EXPIRED, "success_label": True}, RunStatus.CENSORED),
    ],
)
def test_status_rules(end: dict | None, expected: RunStatus) -> None:
    assert run_status(_run("r", 3, end)) is expected


def test_iteration_tokens_prefers_total_then_parts() -> None:
    e = IterationEvent(run_id="r", index=1, input_tokens=10, output_tokens=5)
    assert iteration_tokens(e) == 15
    assert iteration_tokens(e.model_copy(update={"total_tokens": 40})) == 40
    assert iteration_tokens(IterationEvent(run_id="r", index=1, output_tokens=7)) == 7
    assert iteration_tokens(IterationEvent(run_id="r", index=1)) is None


def test_extraction_columns() -> None:
    records = [
        _run("a", 3, {"outcome": Outcome.SUCCEEDED}, tokens=[100, 200, 300]),
        _run("b", 2, None, task_type=None, tokens=[50, None]),
        _run("c", 1, {"outcome": Outcome.FAILED}, tokens=[70]),
    ]
    arr = extract_runs(iter(records))  # any iterable, consumed once
    assert arr.task_types == ("lookup", UNTYPED)
    assert arr.type_code.tolist() == [0, 1, 0]
    assert arr.iterations.tolist() == [3, 2, 1]
    assert arr.status.tolist() == [RunStatus.SUCCESS, RunStatus.CENSORED, RunStatus.FAILURE]
    assert list(zip(arr.token_run.tolist(), arr.token_iter.tolist(), arr.token_value.tolist(), strict=False)) == [
        (0, 1, 100.0),
        (0, 2, 200.0),
        (0, 3, 300.0),
        (1, 1, 50.0),
        (2, 1, 70.0),
    ]
    one = arr.select(0)
    assert one.runs == 2 and one.run_ids == ("a", "c")
    assert one.token_run.tolist() == [0, 0, 0, 1]


def test_accumulator_grows_run_by_run() -> None:
    acc = RunAccumulator()
    acc.add(_run("a", 2, {"outcome": Outcome.SUCCEEDED}, tokens=[1, 2]))
    assert acc.arrays().runs == 1
    acc.add(_run("b", 4, {"outcome": Outcome.SUCCEEDED}, tokens=[1, 2, 3, 4]))
    assert len(acc) == 2 and acc.arrays().iterations.tolist() == [2, 4]


def test_run_without_model_calls_is_rejected_by_name() -> None:
    rec = RunRecord(start=RunStart(run_id="empty"), events=[], end=RunEnd(run_id="empty", outcome=Outcome.FAILED))
    with pytest.raises(InputError, match="'empty'"):
        extract_runs([rec])


def test_from_columns_ignores_tokens_past_the_end_and_nan() -> None:
    tokens = np.array([[1.0, 2.0, 3.0], [4.0, np.nan, 6.0]])
    arr = RunArrays.from_columns(np.array([2, 3]), np.array([1, 0]), tokens)
    assert arr.token_value.tolist() == [1.0, 2.0, 4.0, 6.0]
    assert arr.token_iter.tolist() == [1, 2, 1, 3]


def test_bad_columns_are_input_errors() -> None:
    with pytest.raises(InputError, match="at least one"):
        RunArrays.from_columns(np.array([0]), np.array([1]), np.zeros((1, 1)))
    with pytest.raises(InputError, match="non-negative"):
        RunArrays.from_columns(np.array([1]), np.array([1]), np.array([[-5.0]]))
