"""The CI gate behind ``pyguard check``: summarise a set of runs per task type, hold them against thresholds
and a stored baseline (statistical tests, see :mod:`pyguard.check.stats`), report as JSON, JUnit XML, Markdown.

    from pyguard.check import GateConfig, check_runs, read_baseline
    report = check_runs(runs, GateConfig(max_stall_rate=0.1), read_baseline("baseline.json"))
    report.passed, report.failures, report.exit_code
"""

import warnings

from pyguard.check.baseline import baseline_json, read_baseline, write_baseline
from pyguard.check.gate import GateConfig, GateReport, evaluate
from pyguard.check.outcomes import facts_from_footer, needs_replay, policy_replayer, replay_outcomes, resolve_runs
from pyguard.check.report import junit_xml, markdown, render, report_dict, report_json
from pyguard.check.runner import check_runs
from pyguard.check.stats import holm_adjust, proportion_increase_test, shift_increase_test
from pyguard.check.summary import ALL_TASKS, UNTYPED, RunFacts, RunSetSummary, TaskTypeFigures, summarize

__all__ = [
    "ALL_TASKS",
    "UNTYPED",
    "GateConfig",
    "GateReport",
    "TaskTypeFigures",
    "RunFacts",
    "RunSetSummary",
    "baseline_json",
    "check_runs",
    "evaluate",
    "facts_from_footer",
    "holm_adjust",
    "junit_xml",
    "markdown",
    "needs_replay",
    "policy_replayer",
    "proportion_increase_test",
    "read_baseline",
    "render",
    "replay_outcomes",
    "report_dict",
    "report_json",
    "resolve_runs",
    "shift_increase_test",
    "summarize",
    "write_baseline",
]


def __getattr__(name: str) -> object:
    if name == "GroupSummary":  # the old name, kept for code written against it
        warnings.warn(
            "pyguard.check.GroupSummary is now pyguard.check.TaskTypeFigures", DeprecationWarning, stacklevel=2
        )
        return TaskTypeFigures
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
