"""The real-run scoring of benchmarks/suites/_real_metrics.py against shared real-runs-metrics definitions."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from suites._real_metrics import score, small_kinds, wilson  # noqa: E402


def _row(label: bool | None, n: int, stop_at: int | None, *, last_edit: int = 0, capped: bool = False) -> dict:
    return {
        "id": f"r{n}-{stop_at}-{last_edit}",
        "n": n,
        "label": label,
        "capped": capped,
        "calls": [1] * n,
        "last_edit": last_edit,
        "stop_at": stop_at,
        "rule": "r",
        "reason": "",
    }


def test_wilson_interval_of_the_worked_example() -> None:
    low, high = wilson(6, 195)  # real-runs-metrics: 6 of 195 is 3.1% (1.4–6.5%)
    assert round(low, 3) == 0.014 and round(high, 3) == 0.065
    assert wilson(0, 0) is None
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == pytest.approx(1.0)


def test_a_stop_at_the_last_edit_keeps_an_artifact() -> None:
    # stop_at = i: iteration i's tools ran, so its edit is kept; a stop before it loses the edit
    kept = score([_row(True, 10, 7, last_edit=7)], artifact=True)
    lost = score([_row(True, 10, 6, last_edit=7)], artifact=True)
    assert kept["false_stops"] == 0 and lost["false_stops"] == 1
    assert score([_row(True, 10, 7, last_edit=7)], artifact=False)["false_stops"] == 1


def test_every_figure_has_its_interval_and_counts() -> None:
    rows = [_row(True, 5, None), _row(True, 5, 3), _row(False, 10, 4, capped=True), _row(False, 10, None, capped=True)]
    fig = score(rows, artifact=False)
    assert fig["false_stop_rate"] == 0.5 and fig["false_stop_interval"] == wilson(1, 2)
    assert fig["failed_calls_saved"] == 6 / 20 and fig["failed_calls_saved_interval"] == wilson(6, 20)
    assert fig["capped_stopped"] == 0.5 and fig["capped_stopped_interval"] == wilson(1, 2)
    assert score([_row(False, 3, None)], artifact=False)["false_stop_interval"] is None  # no successful run


def test_kinds_with_fewer_than_30_runs_are_marked_small() -> None:
    rows = [_row(True, 3, None)] * 30 + [_row(False, 3, None, capped=True)] * 5
    assert small_kinds(rows) == ["failed", "capped"]
    assert small_kinds([_row(True, 3, None)] * 40) == []  # a kind with no run at all has no figure: not listed
