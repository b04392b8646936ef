"""The terminal table of a calibration, fitted to the width it is printed at: every figure whole.

One row per task type when the columns fit the width (a terminal, a CI log's 80 columns, a pipe); otherwise one
block per task type, a figure per line, so nothing is ever cropped or folded mid-figure. Below either, per task type,
the decision in words (successes kept, savings, N* at half and double the failure cost), wrapped at spaces.
"""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from pyguard.calibrate.models import CalibrationReport, TaskTypeCalibration
from pyguard.calibrate.units import format_cost, unit_words

__all__ = ["report_table", "table_cells"]


def _headers(report: CalibrationReport) -> list[str]:
    conf = f"{report.config.confidence:.0%}"
    return [
        "task type",
        "runs",
        "ok/fail/cut",
        "per",
        "N*",
        f"{conf} CI",
        "c(N*)",
        "E[cost]",
        "kept",
        "saves vs 100",
        "tokens",
        "base/hard",
    ]


def table_cells(t: TaskTypeCalibration, report: CalibrationReport) -> list[str]:
    """The figures of one task type, as the table shows them (the first is the task type)."""
    none = t.recommended_max_iterations is None
    dec = t.decision
    kept = "-" if dec is None else f"{dec.successes_kept}/{dec.successes_uncapped}"
    saves = "-" if dec is None else format_cost(dec.saving_vs_default, report.cost_unit)
    return [
        t.task_type,
        f"{t.runs:,}",
        f"{t.successes}/{t.failures}/{t.censored}",
        "turn" if t.per_turn else "run",
        f"no cap ({dec.cheapest_cap})"
        if none and dec is not None
        else "no cap"
        if none
        else f"{t.recommended_max_iterations}" + ("+" if t.at_horizon else ""),
        "-" if none else f"{t.ci_low}-{t.ci_high}",
        f"{t.success_at_optimum:.3f}",
        format_cost(t.expected_cost_at_optimum, report.cost_unit),
        kept,
        saves,
        f"{t.token_budget.recommended_tokens:,}" if t.token_budget else "-",
        f"{t.policy.base_budget}/{t.policy.hard_cap}" if t.policy else "-",
    ]


def _title(report: CalibrationReport) -> str:
    cfg = report.config
    unit = unit_words(report.cost_unit, cfg.price_per_1k_tokens, cfg.cost_per_call)
    return f"maxIterations per task type (failure cost d = {format_cost(cfg.failure_cost, report.cost_unit)}; costs in {unit})"


_CAPTION = (
    "per: n counts model calls per run, or per user turn (ok/fail/cut then counts turns); cut: censored; +: N* at "
    "the end of the data; no cap (N): not running is cheaper, N the cheapest cap that runs it; E[cost] at N*; "
    "kept: successes within N* of all; saves vs 100: E[cost] saved per run against LangChain4j's default; "
    "base/hard: the dynamic policy"
)
_TOKENS = 10
"""The index of the token budget column (left out when no type has one)."""


def _needed(rows: list[list[str]], headers: list[str]) -> int:
    """The width a one-row-per-type table needs with every cell whole (headers may wrap at spaces)."""
    widths = [
        max(max((len(r[i]) for r in rows), default=0), max(len(w) for w in h.split())) for i, h in enumerate(headers)
    ]
    return sum(widths) + 2 * (len(widths) - 1)


def _wide(rows: list[list[str]], headers: list[str], title: str, caption: str) -> Table:
    table = Table(
        title=escape(title),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
        caption=escape(caption),
        caption_justify="left",
    )
    for i, head in enumerate(headers):
        table.add_column(escape(head), justify="left" if i in (0, 3) else "right", no_wrap=True, overflow="fold")
    for row in rows:
        table.add_row(*(escape(c) for c in row))
    return table


def _stacked(rows: list[list[str]], headers: list[str], title: str, caption: str) -> Group:
    parts: list[RenderableType] = [Text(title, style="bold")]
    for row in rows:
        grid = Table.grid(padding=(0, 1))
        grid.add_column(justify="left", style="dim")
        grid.add_column(justify="left", no_wrap=True, overflow="fold")
        for head, cell in zip(headers[1:], row[1:], strict=True):
            grid.add_row(escape(head), escape(cell))
        parts += [Text(""), Text(row[0], style="bold"), grid]
    parts += [Text(""), Text(caption, style="dim")]
    return Group(*parts)


def report_table(report: CalibrationReport, width: int = 100) -> RenderableType:
    """The table for a console ``width`` columns wide: one row per type when every figure fits whole, else one
    block per type; then each type's decision in words."""
    headers = _headers(report)
    rows = [table_cells(t, report) for t in report.task_types]
    caption = _CAPTION
    if all(r[_TOKENS] == "-" for r in rows):  # no token budget anywhere (costed per call): no column for it
        headers = headers[:_TOKENS] + headers[_TOKENS + 1 :]
        rows = [r[:_TOKENS] + r[_TOKENS + 1 :] for r in rows]
    else:
        caption += "; tokens: the token budget"
    title = _title(report)
    body: RenderableType = (
        _wide(rows, headers, title, caption)
        if _needed(rows, headers) <= width
        else _stacked(rows, headers, title, caption)
    )
    words = [Text(f"{t.task_type}: {t.decision.statement}") for t in report.task_types if t.decision is not None]
    return Group(body, Text(""), *words) if words else body
