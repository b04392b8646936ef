"""From recorded runs to the report's data: one :class:`RunView` per run, the outcome mix per task type, and the
``check`` / ``calibrate`` figures when asked (their own public functions; nothing recomputed here)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from pyguard.base.decisions import Decision
from pyguard.base.events import UNTYPED, RunRecord
from pyguard.calibrate import calibrate_runs, make_config
from pyguard.check import check_runs, policy_replayer, report_dict
from pyguard.engine import PolicyConfig
from pyguard.replay import replay_run
from pyguard.report.model import RunView, Thresholds, run_view

__all__: list[str] = []

NO_FOOTER = "no footer"


class ReportData(BaseModel):
    """Everything the page shows, as plain data (embedded in the page as JSON)."""

    model_config = ConfigDict(extra="forbid")

    title: str
    generated_at: str
    content: bool
    """Whether content capture was on: without it no text the user, the model or a tool wrote is on the page."""
    runs_total: int
    runs: list[RunView]
    """The runs drawn (the first ``max_runs`` of ``runs_total``)."""
    outcome_mix: dict[str, dict[str, int]]
    """Task type -> outcome -> runs, over every run loaded."""
    check: dict[str, Any] | None = None
    calibrate: dict[str, Any] | None = None
    skipped: dict[str, int] = {}


def outcome_mix(records: Sequence[RunRecord]) -> dict[str, dict[str, int]]:
    """Task type -> outcome -> runs (the footer's outcome; ``no footer`` for a run cut short), task types sorted."""
    counts: dict[str, Counter[str]] = {}
    for r in records:
        key = r.task_type or UNTYPED
        counts.setdefault(key, Counter())[r.end.outcome.value if r.end is not None else NO_FOOTER] += 1
    return {k: dict(counts[k].most_common()) for k in sorted(counts)}


def _default_thresholds(config: PolicyConfig | None) -> Thresholds:
    cfg = config if config is not None else PolicyConfig()
    return Thresholds(earn_threshold=cfg.earn_threshold, low_gain_threshold=cfg.stall.low_gain_threshold)


def _view(
    record: RunRecord, recorded: list[Decision], config: PolicyConfig | None, fallback: Thresholds, content: bool
) -> RunView:
    if recorded:
        return run_view(record, recorded, "recorded", fallback, content=content)
    if not record.events:
        return run_view(record, [], "none", fallback, content=content)
    replayed = replay_run(record, config)
    return run_view(record, replayed.decisions, "replayed", fallback, content=content, replay_stop_at=replayed.stop_at)


def build_data(
    records: Sequence[RunRecord],
    decisions: Mapping[str, list[Decision]],
    *,
    generated_at: str,
    title: str = "pyguard report",
    content: bool = False,
    config: PolicyConfig | None = None,
    max_runs: int = 50,
    check: dict[str, Any] | None = None,
    calibrate: dict[str, Any] | None = None,
    skipped: Mapping[str, int] | None = None,
) -> ReportData:
    """The report's data. ``decisions``: run id -> the guard's decisions recorded in its trace (a run without any is
    replayed through ``config``, None: the default policy). ``generated_at``: the time to print (the caller's clock)."""
    fallback = _default_thresholds(config)
    views = [_view(r, list(decisions.get(r.run_id, [])), config, fallback, content) for r in records[:max_runs]]
    return ReportData(
        title=title,
        generated_at=generated_at,
        content=content,
        runs_total=len(records),
        runs=views,
        outcome_mix=outcome_mix(records),
        check=check,
        calibrate=calibrate,
        skipped=dict(skipped or {}),
    )


def check_figures(records: Sequence[RunRecord], config_path: str | Path | None) -> dict[str, Any]:
    """``pyguard check``'s figures for these runs, with no thresholds and no baseline (:func:`pyguard.check.check_runs`;
    recordings replayed through the policy in ``config_path``): per task type the outcome rates, iterations p50/p95,
    tokens per run."""
    data = report_dict(check_runs(list(records), make_replayer=lambda: policy_replayer(config_path)))
    return {key: data[key] for key in ("runs", "replayed", "observed", "groups", "notes") if key in data}


_CALIBRATE_KEYS = (
    "task_type",
    "runs",
    "unit",
    "successes",
    "failures",
    "censored",
    "recommended_max_iterations",
    "ci_low",
    "ci_high",
    "expected_cost_at_optimum",
    "success_at_optimum",
    "at_horizon",
)


def calibrate_figures(records: Sequence[RunRecord], failure_cost: float, price: float | None) -> dict[str, Any]:
    """``pyguard calibrate``'s recommendation per task type (:func:`pyguard.calibrate.calibrate_runs`): N* with its
    interval, the success rate and expected cost there; the task types it skipped and why."""
    report = calibrate_runs(list(records), make_config(failure_cost=failure_cost, price_per_1k_tokens=price))
    data = report.model_dump(mode="json")
    return {
        "failure_cost": failure_cost,
        "cost_unit": report.cost_unit,
        "task_types": [{k: t.get(k) for k in _CALIBRATE_KEYS} for t in data["task_types"]],
        "skipped": data.get("skipped", []),
        "warnings": data.get("warnings", []),
    }
