"""The figures a calibration statement quotes are the ones it used: half of a failure cost of 1 is 0.5 (not "0"),
and the call-cost ratio at which a cap would pay off keeps its significant digits (not "0.00x")."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from pyguard.cli import main

RUNS = Path(__file__).resolve().parents[2] / "data" / "mixed_runs.jsonl"


def _calibrate(*args: str) -> str:
    out = CliRunner().invoke(main, ["calibrate", str(RUNS), *args])
    assert out.exit_code == 0, out.output
    return " ".join(out.output.split())


def test_half_a_small_failure_cost_is_not_rounded_to_nothing():
    text = _calibrate("--failure-cost", "1")
    assert "at half the failure cost (0.5)" in text and "at double (2)" in text, text
    assert "at half the failure cost (0)" not in text


def test_the_break_even_call_cost_keeps_its_digits():
    text = _calibrate("--failure-cost", "1")
    ratios = re.findall(r"with calls below (\S+)x their cost", text)
    assert ratios, text
    assert all(float(r) > 0 for r in ratios), ratios  # the ratio it computed, not 0.00


def test_a_large_failure_cost_reads_as_before():
    text = _calibrate("--failure-cost", "20000")
    assert "at half the failure cost (10,000)" in text and "at double (40,000)" in text, text
