"""``pyguard check`` honest at small n (issue 32): one candidate run at 4x the tokens of a 10-run baseline was passed
silently (exit 0, no warning) while the JSON claimed the token test "detects a 1.99x shift or more" — the normal
approximation, wrong at such n: no arrangement of 1 against 10 runs reaches p < 1/11."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from click.testing import CliRunner

from pyguard.base.events import IterationEvent, Outcome, RunEnd, RunRecord, RunStart
from pyguard.check import GateConfig, evaluate, summarize
from pyguard.check.stats import (
    detectable_rate,
    detectable_ratio,
    proportion_increase_test,
    shift_increase_test,
    smallest_shift_p,
)
from pyguard.check.summary import RunFacts
from pyguard.cli import main
from pyguard.trace import write_runs

BASE_TOKENS = [900, 1000, 1100, 950, 1050, 1200, 800, 1000, 980, 1020]


def _run(rid: str, tokens: int, calls: int = 4) -> RunRecord:
    per = [tokens // calls] * (calls - 1) + [tokens - tokens // calls * (calls - 1)]
    events = [IterationEvent(run_id=rid, index=i + 1, total_tokens=t, task_type="lookup") for i, t in enumerate(per)]
    end = RunEnd(run_id=rid, outcome=Outcome.SUCCEEDED, iterations=calls)
    return RunRecord(start=RunStart(run_id=rid, task_type="lookup", agent_style="executor"), events=events, end=end)


@pytest.fixture
def one_against_ten(tmp_path):
    base = tmp_path / "base.jsonl"
    write_runs(base, [_run(f"b{i}", t) for i, t in enumerate(BASE_TOKENS)])
    baseline = tmp_path / "baseline.json"
    made = CliRunner().invoke(main, ["check", str(base), "--write-baseline", str(baseline), "--json"])
    assert made.exit_code == 0, made.output
    cur = tmp_path / "cur.jsonl"
    write_runs(cur, [_run("c0", 4 * 1000)])
    return cur, baseline


def test_one_run_at_four_times_the_tokens_against_ten_is_refused_in_every_form(tmp_path, one_against_ten):
    cur, baseline = one_against_ten
    md, junit = tmp_path / "check.md", tmp_path / "junit.xml"
    args = ["check", str(cur), "--baseline", str(baseline), "--markdown", str(md), "--junit-xml", str(junit)]
    result = CliRunner().invoke(main, [*args, "--json"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    tokens = next(c for c in data["checks"] if c["name"] == "baseline.tokens")
    assert tokens["passed"] is False and tokens["underpowered"] is True and tokens["detects_large"] is False
    assert tokens["detectable"] is None  # no shift, however large, is detectable at 1 vs 10
    assert "cannot detect any shift" in tokens["message"] and "1.99x" not in tokens["message"]
    assert tokens["p_value"] == pytest.approx(1 / 11)  # the permutation p-value: the top of 11 ranks
    assert any("FAILED (refused)" in w and "baseline.tokens" in w for w in data["warnings"])
    assert "[!WARNING]" in md.read_text() and "baseline.tokens" in md.read_text()
    root = ET.parse(junit).getroot()
    assert any(p.get("name") == "pyguard.warning" for p in root.iter("property"))
    case = next(c for c in root.iter("testcase") if c.get("name") == "baseline.tokens")
    assert case.find("failure") is not None and "too few runs" in case.find("system-err").text
    text = CliRunner().invoke(main, args)
    assert text.exit_code == 1 and "WARNING" in text.output and "none!" in text.output, text.output


def test_warn_passes_it_loudly(one_against_ten):
    cur, baseline = one_against_ten
    result = CliRunner().invoke(main, ["check", str(cur), "--baseline", str(baseline), "--underpowered", "warn"])
    assert result.exit_code == 0, result.output
    assert "with warnings: too few runs" in result.output and "passed only for lack of runs" in result.output


def test_every_passing_baseline_check_states_what_it_detects():
    rng = np.random.default_rng(2)
    f = [
        RunFacts(run_id=f"r{i}", task_type="t", outcome=Outcome.SUCCEEDED, iterations=int(k), tokens=int(k) * 500)
        for i, k in enumerate(rng.integers(2, 9, 400))
    ]
    report = evaluate(summarize(f[:200]), GateConfig(), summarize(f[200:]))
    baseline_checks = [c for c in report.checks if c.kind == "baseline"]
    assert baseline_checks and all(c.passed for c in baseline_checks)
    assert all("it detects" in c.message or "cannot detect" in c.message for c in baseline_checks)
    tokens = next(c for c in baseline_checks if c.name == "baseline.tokens")
    assert tokens.detects_large is True and 1.0 < tokens.detectable < 1.5 and not report.warnings


def test_the_small_sample_tests_are_exact():
    base = np.array(BASE_TOKENS, dtype=float)
    assert shift_increase_test([4000.0], base) == pytest.approx(1 / 11)
    assert shift_increase_test([1000.0], base) > 0.4
    assert smallest_shift_p(1, 10) == pytest.approx(1 / 11) and smallest_shift_p(5, 5) == pytest.approx(1 / 252)
    assert math.isinf(detectable_ratio(base, 1, 0.05))
    assert math.isfinite(detectable_ratio(base, 10, 0.05))
    # rates: one failing run against ten clean ones is p = 1/11 (Fisher), and no rise is detectable at 1 vs 10
    assert proportion_increase_test(1, 1, 0, 10) == (pytest.approx(1 / 11), "fisher")
    assert detectable_rate(0.0, 1, 10, 0.05) == 1.0
    # the exact figure agrees with the test it describes: at that rate Fisher rejects with 80% probability
    reach = detectable_rate(0.0, 20, 20, 0.05)
    draws = np.random.default_rng(0).binomial(20, reach, 4000)
    rejected = np.mean([proportion_increase_test(int(x), 20, 0, 20)[0] <= 0.05 for x in draws[:400]])
    assert 0.7 <= rejected <= 0.95
