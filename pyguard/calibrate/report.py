"""Outputs of a calibration: a rich table, JSON without NaN, and ``--out DIR`` (Markdown, PNG plots, snippets).

Plots are drawn on :class:`matplotlib.figure.Figure` with the Agg canvas directly, so writing a report never
touches pyplot's global state or the process-wide backend.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from rich.markup import escape
from rich.table import Table

from pyguard.calibrate.models import CalibrationReport, TaskTypeCalibration
from pyguard.calibrate.snippet import java_snippet, properties_snippet, toml_snippet
from pyguard.errors import InputError

__all__ = ["report_json", "report_table", "write_report", "plot_success", "plot_cost"]


def report_json(report: CalibrationReport) -> str:
    """The report as JSON (``{"task_types": [...], ...}``). Raises if a non-finite number slipped in."""
    data = report.model_dump(mode="json")
    try:
        return json.dumps(data, indent=2, allow_nan=False)
    except ValueError as exc:  # pragma: no cover - a bug, not bad input
        raise InputError(f"the calibration produced a non-finite number ({exc}); please report this") from exc


def _money(value: float, report: CalibrationReport) -> str:
    return f"{value:,.0f} tok" if report.cost_unit == "tokens" else f"{value:,.4g}"


def report_table(report: CalibrationReport) -> Table:
    conf = f"{report.config.confidence:.0%}"
    table = Table(title=f"maxIterations per task type (failure cost d = {report.config.failure_cost:g})")
    for col, justify in [
        ("task type", "left"), ("runs", "right"), ("ok/fail/cut", "right"), ("N*", "right"), (f"{conf} CI", "right"),
        ("c(N*)", "right"), (r"E\[cost](N*)", "right"), ("token budget", "right"), ("base / hard cap", "right"),
    ]:
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for t in report.task_types:
        flag = " (edge of data)" if t.at_horizon else ""
        table.add_row(
            escape(t.task_type),
            str(t.runs),
            f"{t.successes}/{t.failures}/{t.censored}",
            f"{t.recommended_max_iterations}{flag}",
            f"{t.ci_low}-{t.ci_high}",
            f"{t.success_at_optimum:.3f}",
            _money(t.expected_cost_at_optimum, report),
            f"{t.token_budget.recommended_tokens:,}",
            f"{t.policy.base_budget} / {t.policy.hard_cap}",
        )
    return table


def _slug(name: str) -> str:
    return re.sub(r"[^0-9A-Za-z_.-]+", "_", name).strip("._") or "default"


def _save(fig: Figure, path: Path) -> None:
    import io

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, dpi=110, format="png")
    _write_file(path, buf.getvalue())


def _write_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` (replacing a regular file), never through a symlink."""
    import os

    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if path.is_symlink():
            raise InputError(f"{str(path)!r} is a symbolic link; the report is never written through a link: remove"
                             " it or pass another --out") from None
        raise InputError(f"cannot write {str(path)!r}: {exc.strerror}") from None
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def plot_success(t: TaskTypeCalibration, confidence: float, path: Path) -> None:
    """c(n) with its pointwise band, N* marked."""
    n = list(range(1, t.horizon + 1))
    fig = Figure(figsize=(6.4, 4.0), layout="constrained")
    ax = fig.add_subplot()
    ax.fill_between(n, t.c_low, t.c_high, step="post", alpha=0.25, label=f"{confidence:.0%} band (bootstrap)")
    ax.step(n, t.c, where="post", label="c(n), Aalen-Johansen")
    ax.axvline(t.recommended_max_iterations, color="black", linestyle="--", label=f"N* = {t.recommended_max_iterations}")
    ax.set(xlabel="model calls n", ylabel="P(succeeded within n calls)", ylim=(0, 1), title=t.task_type)
    ax.legend(loc="lower right")
    _save(fig, path)


def plot_cost(t: TaskTypeCalibration, report: CalibrationReport, path: Path) -> None:
    """E[cost](N) with N* and its interval marked."""
    n = list(range(1, t.horizon + 1))
    fig = Figure(figsize=(6.4, 4.0), layout="constrained")
    ax = fig.add_subplot()
    ax.axvspan(t.ci_low - 0.5, t.ci_high + 0.5, alpha=0.15, label=f"{report.config.confidence:.0%} CI of N*")
    ax.plot(n, t.expected_cost, marker="o", markersize=3, label="E[cost](N)")
    ax.plot([t.recommended_max_iterations], [t.expected_cost_at_optimum], "r*", markersize=14,
            label=f"N* = {t.recommended_max_iterations}")
    unit = "tokens" if report.cost_unit == "tokens" else "cost"
    ax.set(xlabel="cap N (model calls)", ylabel=f"expected {unit} per run", title=t.task_type)
    ax.legend(loc="upper right")
    _save(fig, path)


def _markdown(report: CalibrationReport, plots: dict[str, tuple[str, str]], snippets: dict[str, str]) -> str:
    cfg = report.config
    unit = "tokens" if report.cost_unit == "tokens" else f"currency at {cfg.price_per_1k_tokens:g} per 1k tokens"
    out = [
        "# pyguard calibrate",
        "",
        f"Failure cost d = {cfg.failure_cost:g} ({unit}); bootstrap {cfg.bootstrap} resamples, seed {cfg.seed}, "
        f"{cfg.confidence:.0%} intervals.",
        "",
        "c(n) is the Aalen-Johansen cumulative incidence of success (failures compete, cut-off runs are "
        "censored); E[cost](N) = sum_{n<=N} w(n) + (1 - c(N)) d with w(n) = P(a run makes call n) x cost of call n.",
        "",
        "| task type | runs | ok/fail/cut | N* | CI | c(N*) | E[cost](N*) | token budget | base / hard cap |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for t in report.task_types:
        out.append(
            f"| {t.task_type} | {t.runs} | {t.successes}/{t.failures}/{t.censored} | {t.recommended_max_iterations}"
            f"{' (edge)' if t.at_horizon else ''} | {t.ci_low}-{t.ci_high} | {t.success_at_optimum:.3f} | "
            f"{_money(t.expected_cost_at_optimum, report)} | {t.token_budget.recommended_tokens:,} | "
            f"{t.policy.base_budget} / {t.policy.hard_cap} |"
        )
    if report.warnings:
        out += ["", "## Warnings", ""] + [f"- {w}" for w in report.warnings]
    for t in report.task_types:
        c_png, cost_png = plots[t.task_type]
        out += [
            "", f"## {t.task_type}", "",
            f"![c(n) for {t.task_type}]({c_png})", "", f"![expected cost by cap for {t.task_type}]({cost_png})", "",
            f"Token budget: {t.token_budget.recommended_tokens:,} tokens (CI {t.token_budget.ci_low:,}-"
            f"{t.token_budget.ci_high:,}), c at that budget {t.token_budget.success_at_budget:.3f}.", "",
            f"Policy: {t.policy.rationale}.",
        ]
    for title, (name, lang) in {
        "Java": ("CalibratedLimits.java", "java"), "Properties": ("calibration.properties", "properties"),
        "pyguard budgets": ("pyguard.toml", "toml"),
    }.items():
        out += ["", f"## {title} (`{name}`)", "", f"```{lang}", snippets[name].rstrip(), "```"]
    return "\n".join(out) + "\n"


def write_report(report: CalibrationReport, out_dir: str | Path) -> list[Path]:
    """Write report.md, calibration.json, the snippets and two PNGs per task type; returns the paths written."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {str(out)!r} is a file; pass a directory (it is created if missing)")
    if (out / "plots").exists() and not (out / "plots").is_dir():
        raise InputError(f"{str(out / 'plots')!r} is a file; the report writes its plots there: move it or pass another"
                         " --out")
    (out / "plots").mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    plots: dict[str, tuple[str, str]] = {}
    used: set[str] = set()
    for t in report.task_types:
        slug = _slug(t.task_type)
        while slug in used:
            slug += "_"
        used.add(slug)
        c_png, cost_png = f"plots/c_{slug}.png", f"plots/cost_{slug}.png"
        plot_success(t, report.config.confidence, out / c_png)
        plot_cost(t, report, out / cost_png)
        plots[t.task_type] = (c_png, cost_png)
        written += [out / c_png, out / cost_png]
    snippets = {
        "CalibratedLimits.java": java_snippet(report),
        "calibration.properties": properties_snippet(report),
        "pyguard.toml": toml_snippet(report),
    }
    for name, text in {**snippets, "calibration.json": report_json(report) + "\n",
                       "report.md": _markdown(report, plots, snippets)}.items():
        _write_file(out / name, text.encode("utf-8"))
        written.append(out / name)
    return written
