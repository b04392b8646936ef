"""``pyguard report``: recorded runs as one self-contained HTML page.

    from pyguard.report import build_data, render_page
    html = render_page(build_data(records, decisions, generated_at="2026-12-02 01:30 UTC"))

Per run a timeline of its calls (information gain per call against the policy's thresholds, tokens per call, the
iteration budget against the calls made, the reflections and the stop with their evidence); for the set, the outcome
mix per task type and, when asked, ``check``'s figures and ``calibrate``'s recommendation. The plots are
matplotlib's (the ``plot`` extra) inlined as SVG; the page needs no network and no server. Content capture is
respected: see :mod:`pyguard.report.model`. docs/report.md describes the page.
"""

from pyguard.report.build import ReportData, build_data, calibrate_figures, check_figures, outcome_mix
from pyguard.report.model import CallPoint, GuardMark, RunView, Thresholds, run_view
from pyguard.report.page import DATA_ID, render_page

__all__ = [
    "DATA_ID",
    "CallPoint",
    "GuardMark",
    "ReportData",
    "RunView",
    "Thresholds",
    "build_data",
    "calibrate_figures",
    "check_figures",
    "outcome_mix",
    "render_page",
    "run_view",
]
