"""Outputs of a calibration: a rich table, JSON without NaN, and ``--out DIR`` (Markdown, PNG plots, snippets).

Plots are drawn on :class:`matplotlib.figure.Figure` with the Agg canvas directly, so writing a report never
touches pyplot's global state or the process-wide backend.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pyguard.base._extras import agg_figure, require
from pyguard.base.errors import InputError
from pyguard.calibrate.models import CalibrationReport, TaskTypeCalibration
from pyguard.calibrate.snippet import java_snippet, properties_snippet, toml_snippet
from pyguard.calibrate.table import report_table
from pyguard.calibrate.units import format_cost, unit_words

__all__ = ["report_table"]

if TYPE_CHECKING:  # matplotlib is the optional 'plot' extra, imported when a plot is drawn
    from matplotlib.figure import Figure

_PLOTS = "calibration plots (calibrate --out)"


def require_plots() -> None:
    """Raise MissingExtraError naming the ``plot`` extra unless matplotlib is installed."""
    require("matplotlib", extra="plot", feature=_PLOTS)


def report_json(report: CalibrationReport) -> str:
    """The report as JSON (``{"task_types": [...], ...}``). Raises if a non-finite number slipped in."""
    data = report.model_dump(mode="json")
    try:
        return json.dumps(data, indent=2, allow_nan=False)
    except ValueError as exc:  # pragma: no cover - a bug, not bad input
        raise InputError(f"the calibration produced a non-finite number ({exc}); please report this") from exc


def _money(value: float, report: CalibrationReport) -> str:
    return format_cost(value, report.cost_unit) + (" tok" if report.cost_unit == "tokens" else "")


def cost_label(report: CalibrationReport) -> str:
    """The unit of every cost figure, in words."""
    cfg = report.config
    return unit_words(report.cost_unit, cfg.price_per_1k_tokens, cfg.cost_per_call)


def _slug(name: str) -> str:
    return re.sub(r"[^0-9A-Za-z_.-]+", "_", name).strip("._") or "default"


def _save(fig: Figure, path: Path) -> None:
    import io

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
            raise InputError(
                f"{str(path)!r} is a symbolic link; the report is never written through a link: remove"
                " it or pass another --out"
            ) from None
        raise InputError(f"cannot write {str(path)!r}: {exc.strerror}") from None
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _title(t: TaskTypeCalibration, report: CalibrationReport, what: str) -> str:
    cfg = report.config
    runs = f"{t.runs:,} runs" + (f", {t.units:,} turns" if t.per_turn else "")
    price = f"costs in {cost_label(report)}"
    basis = "" if t.cost_basis == "recorded tokens" else "\ncost: " + t.cost_basis.split(" (")[0].split(", the")[0]
    return f"{t.task_type}: {what} ({runs})\nd = {cfg.failure_cost:g}, {price}; n = {t.unit}{basis}"


def _mark_end_of_data(ax, t: TaskTypeCalibration) -> None:  # noqa: ANN001
    """The last recorded n: the recording's cap when runs were cut off there; c(n) past it is unknown."""
    label = (
        f"recording cap n = {t.recording_cap} (c unknown past it)"
        if t.recording_cap is not None
        else f"end of data n = {t.horizon} (unknown past it)"
    )
    ax.axvline(t.horizon, color="grey", linestyle=":", linewidth=1.5, label=label)
    right = t.horizon + max(2.0, 0.15 * t.horizon)
    ax.axvspan(t.horizon, right, color="grey", alpha=0.08, hatch="//", linewidth=0)
    ax.set_xlim(0.5, right)


def plot_success(t: TaskTypeCalibration, report: CalibrationReport, path: Path) -> Figure:
    """c(n) with its pointwise band (bootstrap where a success was seen, the binomial bound before), N* and
    the end of the data marked; legend below the axes."""
    confidence = report.config.confidence
    n = np.arange(1, t.horizon + 1)
    low, high = np.asarray(t.c_low), np.asarray(t.c_high)
    fig = agg_figure(_PLOTS, figsize=(7.0, 4.8), layout="constrained")
    ax = fig.add_subplot()
    seen = n >= t.first_success if t.first_success is not None else np.zeros(len(n), bool)
    if seen.any():
        ax.fill_between(
            n, low, high, where=seen, step="post", alpha=0.25, color="C0", label=f"{confidence:.0%} bootstrap band"
        )
    if (~seen).any():  # up to the first success (the step ends where the bootstrap band begins)
        stop = t.first_success if t.first_success is not None else len(n)
        ax.fill_between(
            n[:stop],
            0,
            high[:stop],
            step="post",
            alpha=0.2,
            color="C1",
            label=f"{confidence:.0%} upper bound while no success was seen (binomial)",
        )
    ax.step(n, t.c, where="post", color="C0", marker="o", markersize=3, label="c(n), Aalen-Johansen")
    if t.recommended_max_iterations is not None:
        ax.axvline(
            t.recommended_max_iterations, color="black", linestyle="--", label=f"N* = {t.recommended_max_iterations}"
        )
    _mark_end_of_data(ax, t)
    ax.set(xlabel=f"n ({t.unit})", ylabel="P(succeeded within n calls)", ylim=(0, 1), title=_title(t, report, "c(n)"))
    ax.title.set_fontsize(9)
    fig.legend(loc="outside lower center", ncols=2, fontsize=8, frameon=False)
    _save(fig, path)
    return fig


def plot_cost(t: TaskTypeCalibration, report: CalibrationReport, path: Path) -> Figure:
    """E[cost](N) with its bootstrap band, N* with its interval as an error bar, the cost of not running the
    agent (d) and the end of the data marked; legend below the axes."""
    conf = f"{report.config.confidence:.0%}"
    n = np.arange(1, t.horizon + 1)
    fig = agg_figure(_PLOTS, figsize=(7.0, 4.8), layout="constrained")
    ax = fig.add_subplot()
    if t.expected_cost_low:
        ax.fill_between(
            n, t.expected_cost_low, t.expected_cost_high, alpha=0.2, color="C0", label=f"{conf} bootstrap band"
        )
    ax.plot(n, t.expected_cost, marker="o", markersize=3, color="C0", label="E[cost](N)")
    ax.axhline(
        report.config.failure_cost,
        color="C3",
        linewidth=1,
        linestyle="-.",
        label=f"d = {format_cost(report.config.failure_cost, report.cost_unit)}: not running the agent",
    )
    if t.recommended_max_iterations is not None and t.ci_low is not None and t.ci_high is not None:
        k = t.recommended_max_iterations
        ax.errorbar(
            [k],
            [t.expected_cost_at_optimum],
            xerr=[[k - t.ci_low], [t.ci_high - k]],
            fmt="r*",
            markersize=14,
            capsize=4,
            label=f"N* = {k} ({conf} CI {t.ci_low}-{t.ci_high})",
        )
    _mark_end_of_data(ax, t)
    unit = cost_label(report)
    ax.set(
        xlabel=f"cap N ({t.unit})",
        ylabel=f"expected cost per {'turn' if t.per_turn else 'run'} ({unit})",
        title=_title(t, report, "E[cost](N)" + ("" if t.recommended_max_iterations else ", no cap pays off")),
    )
    ax.title.set_fontsize(9)
    fig.legend(loc="outside lower center", ncols=2, fontsize=8, frameon=False)
    _save(fig, path)
    return fig


def _md_row(t: TaskTypeCalibration, report: CalibrationReport) -> str:
    if t.recommended_max_iterations is None:
        rec = f"no cap (cheapest {t.decision.cheapest_cap}) | - | - | - " if t.decision else "no cap | - | - | - "
    else:
        rec = (
            f"{t.recommended_max_iterations}{' (edge)' if t.at_horizon else ''} | {t.ci_low}-{t.ci_high} | "
            f"{t.success_at_optimum:.3f} | {_money(t.expected_cost_at_optimum, report)} "
        )
    tokens = f"{t.token_budget.recommended_tokens:,}" if t.token_budget else "-"
    policy = f"{t.policy.base_budget} / {t.policy.hard_cap}" if t.policy else "-"
    runs = f"{t.runs}" + (f" ({t.units} turns)" if t.per_turn else "")
    return (
        f"| {t.task_type} | {runs} | {t.successes}/{t.failures}/{t.censored} | {t.unit} | {rec}| {tokens} | {policy} |"
    )


def _markdown(report: CalibrationReport, plots: dict[str, tuple[str, str]], snippets: dict[str, str]) -> str:
    cfg = report.config
    out = [
        "# pyguard calibrate",
        "",
        f"Failure cost d = {format_cost(cfg.failure_cost, report.cost_unit)} (every cost in {cost_label(report)}); bootstrap {cfg.bootstrap} resamples, seed "
        f"{cfg.seed}, {cfg.confidence:.0%} intervals.",
        "",
        "c(n) is the Aalen-Johansen cumulative incidence of success (failures compete, cut-off runs are "
        "censored); E[cost](N) = sum_{n<=N} w(n) + (1 - c(N)) d with w(n) = P(a run makes call n) x cost of call n. "
        "For conversations n counts the model calls of one user turn (LangChain4j's maxToolCallingRoundTrips is "
        "per chat() call) and d is the cost of a turn that does not succeed.",
        "",
        "| task type | runs | ok/fail/cut | n counts | N* | CI | c(N*) | E[cost](N*) | token budget | base / hard cap |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    out += [_md_row(t, report) for t in report.task_types]
    if report.skipped:
        out += ["", "## Not calibrated", ""] + [f"- {s.task_type} ({s.runs} runs): {s.reason}" for s in report.skipped]
    if report.warnings:
        out += ["", "## Warnings", ""] + [f"- {w}" for w in report.warnings]
    for t in report.task_types:
        c_png, cost_png = plots[t.task_type]
        out += [
            "",
            f"## {t.task_type}",
            "",
            f"![c(n) for {t.task_type}]({c_png})",
            "",
            f"![expected cost by cap for {t.task_type}]({cost_png})",
            "",
            f"n counts {t.unit}; a call's cost: {t.cost_basis}.",
            "",
        ]
        if t.no_cap is not None:
            out += [f"**No cap recommended**: {t.no_cap}.", ""]
        if t.decision is not None:
            out += [f"Decision: {t.decision.statement}.", ""]
        if t.censoring is not None and t.censoring.statement:
            out += [f"Censoring: {t.censoring.statement}.", ""]
        if t.token_budget is not None:
            out += [
                f"Token budget: {t.token_budget.recommended_tokens:,} tokens (CI {t.token_budget.ci_low:,}-"
                f"{t.token_budget.ci_high:,}), c at that budget {t.token_budget.success_at_budget:.3f}.",
                "",
            ]
        if t.policy is not None:
            out += [f"Policy: {t.policy.rationale}."]
    for title, (name, lang) in {
        "Java": ("CalibratedLimits.java", "java"),
        "Properties": ("calibration.properties", "properties"),
        "pyguard budgets": ("pyguard.toml", "toml"),
    }.items():
        out += ["", f"## {title} (`{name}`)", "", f"```{lang}", snippets[name].rstrip(), "```"]
    return "\n".join(out) + "\n"


def write_report(report: CalibrationReport, out_dir: str | Path) -> list[Path]:
    """Write report.md, calibration.json, the snippets and two PNGs per task type; returns the paths written."""
    require_plots()  # before anything is written
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {str(out)!r} is a file; pass a directory (it is created if missing)")
    if (out / "plots").exists() and not (out / "plots").is_dir():
        raise InputError(
            f"{str(out / 'plots')!r} is a file; the report writes its plots there: move it or pass another --out"
        )
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
        plot_success(t, report, out / c_png)
        plot_cost(t, report, out / cost_png)
        plots[t.task_type] = (c_png, cost_png)
        written += [out / c_png, out / cost_png]
    snippets = {
        "CalibratedLimits.java": java_snippet(report),
        "calibration.properties": properties_snippet(report),
        "pyguard.toml": toml_snippet(report),
    }
    for name, text in {
        **snippets,
        "calibration.json": report_json(report) + "\n",
        "report.md": _markdown(report, plots, snippets),
    }.items():
        _write_file(out / name, text.encode("utf-8"))
        written.append(out / name)
    return written
