"""Calibration on the mixed real-shaped fixture (tests/data/mixed_runs.jsonl): one test per item of issue 11."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pyguard.base.errors import InputError
from pyguard.base.events import turn_starts
from pyguard.calibrate import calibrate_runs, make_config
from pyguard.calibrate.report import plot_cost, plot_success, report_json, write_report
from pyguard.calibrate.snippet import java_snippet, properties_snippet, toml_snippet
from pyguard.loading import load_runs

FIXTURE = Path(__file__).parents[2] / "data" / "mixed_runs.jsonl"
D = 20_000.0


@pytest.fixture(scope="module")
def records():  # noqa: ANN201
    return load_runs(FIXTURE)


@pytest.fixture(scope="module")
def report(records):  # noqa: ANN001, ANN201
    return calibrate_runs(records, make_config(failure_cost=D, bootstrap=200))


def _by(report):  # noqa: ANN001, ANN202
    return {t.task_type: t for t in report.task_types}


def test_every_task_type_is_calibrated_although_some_have_no_usage(report) -> None:  # noqa: ANN001
    assert set(_by(report)) == {"code_fix", "order_support", "refund_escalation", "retail_purchase", "web_research"}
    assert report.skipped == []
    web = _by(report)["web_research"]  # no usage at all: costed per model call, and says so
    assert web.cost_basis.startswith("model calls at") and "the mean of the task types with usage" in web.cost_basis
    assert web.token_budget is None and web.recommended_max_iterations is not None


def test_a_stated_cost_per_call_is_used_and_named(records) -> None:  # noqa: ANN001
    # without a price, tokens (code_fix, ...) and a cost per call (web_research) are two units: refused, named
    with pytest.raises(InputError, match=r"mix units: task types 'code_fix'.*'web_research' report none.*--price"):
        calibrate_runs(records, make_config(failure_cost=D, bootstrap=50, cost_per_call=400.0))
    report = calibrate_runs(
        records, make_config(failure_cost=D, bootstrap=50, cost_per_call=400.0, price_per_1k_tokens=1.0)
    )
    assert report.cost_unit == "currency"
    web = _by(report)["web_research"]
    assert "stated cost of 400 per call" in web.cost_basis
    assert web.w[0] == pytest.approx(400.0)  # every run makes call 1
    assert _by(report)["code_fix"].cost_basis == "recorded tokens"  # types with usage keep their tokens


def test_text_length_estimate_only_behind_its_flag(records, report) -> None:  # noqa: ANN001
    assert all("estimated" not in t.cost_basis for t in report.task_types)
    estimated = calibrate_runs(records, make_config(failure_cost=D, bootstrap=50, estimate_tokens_from_text=True))
    by = _by(estimated)
    assert by["web_research"].cost_basis.startswith("tokens estimated from text length (4 characters per token)")
    assert by["web_research"].token_budget is not None
    assert "10 of" not in by["code_fix"].cost_basis and "estimated from text length" in by["code_fix"].cost_basis
    assert by["order_support"].cost_basis == "recorded tokens"


def test_no_cap_when_no_run_succeeds_and_no_nonsense_cap_in_any_snippet(report) -> None:  # noqa: ANN001
    refund = _by(report)["refund_escalation"]
    assert refund.successes == 0
    assert refund.recommended_max_iterations is None and refund.policy is None and refund.ci_low is None
    assert "no cap pays off" in refund.no_cap and "check the success labels" in refund.no_cap
    java, props, toml = java_snippet(report), properties_snippet(report), toml_snippet(report)
    assert "REFUND_ESCALATION_MAX" not in java and "// refund_escalation: no cap" in java
    assert "refund_escalation.max" not in props
    assert "[tool.pyguard.task_types.refund_escalation]" not in toml and "refund_escalation: no cap" in toml


def test_no_cap_pays_off_at_a_small_failure_cost_and_what_would_change_it(records) -> None:  # noqa: ANN001
    report = calibrate_runs(records, make_config(failure_cost=500.0, bootstrap=50))
    support = _by(report)["order_support"]
    assert support.recommended_max_iterations is None
    assert min(support.expected_cost) >= 500.0  # every cap costs more than not running the agent
    assert "no cap pays off at failure cost d = 500" in support.no_cap
    be = support.break_even_failure_cost
    assert be is not None and be > 500.0 and f"{be:,.4g}" in support.no_cap
    # and just above the break-even failure cost a cap does pay off
    above = calibrate_runs(records, make_config(failure_cost=be * 1.05, bootstrap=50))
    assert _by(above)["order_support"].recommended_max_iterations is not None
    # not running is cheaper, said in words, and the snippets carry the cheapest cap that runs it (issue 37, point 4)
    dec = support.decision
    assert dec is not None and dec.not_running_cheaper
    assert dec.statement.startswith("not running this agent is cheaper at this failure cost")
    assert support.expected_cost[dec.cheapest_cap - 1] == min(
        c for c, s in zip(support.expected_cost, support.c, strict=True) if s > 0
    )
    java = java_snippet(report)
    assert f"ORDER_SUPPORT_MAX_TOOL_CALLING_ROUND_TRIPS = {max(dec.cheapest_cap - 1, 1)};" in java
    assert "Not running is cheaper; if you run it, the cheapest cap" in java


def test_the_proposed_dynamic_policy_has_headroom_and_says_why(report) -> None:  # noqa: ANN001
    proposals = [t for t in report.task_types if t.policy is not None]
    assert len(proposals) == 4
    for t in proposals:
        assert t.policy.hard_cap > t.policy.base_budget
        assert t.policy.hard_cap >= 2 * t.policy.base_budget
        assert "2 x the base budget" in t.policy.rationale and "static cap" in t.policy.rationale


def test_conversations_are_calibrated_per_user_turn_with_the_unit_named(records, report) -> None:  # noqa: ANN001
    support = _by(report)["order_support"]
    conversations = [r for r in records if r.task_type == "order_support"]
    turns = sum(len(turn_starts(r.events)) for r in conversations)
    assert support.per_turn and support.unit == "model calls per user turn"
    assert support.runs == len(conversations) == 20 and support.units == turns > 20
    assert support.horizon < max(len(r.events) for r in conversations)  # a turn is shorter than a conversation
    assert support.successes + support.failures + support.censored == turns
    others = [t for t in report.task_types if t.task_type != "order_support"]
    assert all(not t.per_turn and t.unit == "model calls per run" for t in others)
    assert json.loads(report_json(report))["task_types"][1]["unit"] == "model calls per user turn"


def test_final_tool_call_runs_with_a_success_label_count_as_successes(report) -> None:  # noqa: ANN001
    retail = _by(report)["retail_purchase"]  # every run ends in purchase / transfer_to_human_agents
    assert retail.successes == 10


def test_the_recordings_own_cap_is_detected(report) -> None:  # noqa: ANN001
    by = _by(report)
    assert by["code_fix"].recording_cap == 30 and by["code_fix"].horizon == 30
    assert any("censored at 30 calls, the end of the data" in w and "unknown" in w for w in report.warnings)
    assert by["web_research"].recording_cap is None


def _legend(fig) -> list[str]:  # noqa: ANN001
    return [t.get_text() for legend in fig.legends for t in legend.get_texts()]


def test_plots_carry_runs_cost_unit_bands_and_the_recording_cap(report, tmp_path: Path) -> None:  # noqa: ANN001
    code = _by(report)["code_fix"]
    fig = plot_success(code, report, tmp_path / "c.png")
    ax = fig.axes[0]
    title = ax.get_title()
    assert "20 runs" in title and "d = 20000" in title and "costs in tokens" in title
    assert "n = model calls per run" in title
    labels = _legend(fig)
    assert "95% bootstrap band" in labels
    assert "95% upper bound while no success was seen (binomial)" in labels  # c = 0 before call 4
    assert "recording cap n = 30 (c unknown past it)" in labels
    assert not ax.get_legend()  # the legend sits below the axes, off the curve
    assert fig.legends[0].get_window_extent().y1 <= ax.get_window_extent().y0 + 1

    fig = plot_cost(code, report, tmp_path / "cost.png")
    ax = fig.axes[0]
    labels = _legend(fig)
    assert "95% bootstrap band" in labels  # E[cost](N) has its band
    assert f"N* = {code.recommended_max_iterations} (95% CI {code.ci_low}-{code.ci_high})" in labels
    x_low, x_high = ax.get_xlim()
    spans = [p for p in ax.patches if p.get_width() >= 0.9 * (x_high - x_low)]
    assert not spans  # the interval of N* is an error bar, not a shade over the axis
    assert np.all(np.array(code.expected_cost_low) <= np.array(code.expected_cost) + 1e-9)
    assert "recording cap n = 30 (c unknown past it)" in labels
    assert (tmp_path / "c.png").stat().st_size > 0 and (tmp_path / "cost.png").stat().st_size > 0


def test_a_type_without_success_has_only_the_binomial_band(report, tmp_path: Path) -> None:  # noqa: ANN001
    fig = plot_success(_by(report)["refund_escalation"], report, tmp_path / "r.png")
    labels = _legend(fig)
    assert "95% bootstrap band" not in labels and any("binomial" in x for x in labels)
    assert "end of data n = 6 (unknown past it)" in labels


def test_write_report_on_the_mixed_file(report, tmp_path: Path) -> None:  # noqa: ANN001
    written = write_report(report, tmp_path / "out")
    text = (tmp_path / "out" / "report.md").read_text()
    assert "**No cap recommended**" in text and "model calls per user turn" in text
    assert len([p for p in written if p.suffix == ".png"]) == 10
    json.loads((tmp_path / "out" / "calibration.json").read_text(), parse_constant=lambda c: pytest.fail(c))
