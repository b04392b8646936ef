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

__all__: list[str] = []


def _headers(report: CalibrationReport) -> list[str]:
    """Column headers, broken on explicit lines (the columns never wrap: a figure is whole or the layout changes)."""
    conf = f"{report.config.confidence:.0%}"
    return [
        "task type",
        "runs",
        "ok/fail\n/cut",
        "per",
        "N*",
        f"{conf}\nCI",
        "c(N*)",
        "E[cost]",
        "kept",
        "saves\nvs 100",
        "tokens",
        "base/\nhard",
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
        if none and dec is not None and dec.successes_uncapped
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


def _fits(table: Table, rows: list[list[str]], width: int) -> bool:
    """Does ``table`` render within ``width`` columns with every cell whole (on one line)?"""
    import io

    from rich.console import Console

    buf = io.StringIO()
    Console(file=buf, width=width, color_system=None, force_terminal=False, legacy_windows=False).print(table)
    lines = buf.getvalue().splitlines()
    return all(len(line.rstrip()) <= width for line in lines) and all(
        any(cell in line for line in lines) for row in rows for cell in row
    )


def _wide(rows: list[list[str]], headers: list[str], title: str, caption: str) -> Table:
    table = Table(
        title=escape(title) or None,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
        caption=escape(caption) or None,
        caption_justify="left",
    )
    for head in headers:
        left = head in ("task type", "per")
        table.add_column(escape(head), justify="left" if left else "right", no_wrap=True, overflow="fold")
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
            grid.add_row(escape(head.replace("\n/", "/").replace("/\n", "/").replace("\n", " ")), escape(cell))
        parts += [Text(""), Text(row[0], style="bold"), grid]
    parts += [Text(""), Text(caption, style="dim")]
    return Group(*parts)


def _layout(rows: list[list[str]], headers: list[str], title: str, caption: str, width: int) -> RenderableType:
    """One table if it fits; else the table wrapped in two (the task type heads both); else one block per type."""
    wide = _wide(rows, headers, title, caption)
    if _fits(wide, rows, width):
        return wide
    half = 8  # task type .. E[cost] | task type, kept .. base/hard
    parts = [[0, *range(1, half)], [0, *range(half, len(headers))]]
    tables = []
    for k, cols in enumerate(parts):
        sub = [[r[i] for i in cols] for r in rows]
        table = _wide(sub, [headers[i] for i in cols], title if k == 0 else "", caption if k == 1 else "")
        if not _fits(table, sub, width):
            return _stacked(rows, headers, title, caption)
        tables.append(table)
    return Group(*tables)


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
    body = _layout(rows, headers, title, caption, width)
    words = [Text(f"{t.task_type}: {t.decision.statement}") for t in report.task_types if t.decision is not None]
    return Group(body, Text(""), *words) if words else body
