"""What ``pyguard tune`` writes: the policy TOML (with a header saying how it was fitted), and a Markdown report
with one trade-off plot per task type (false-stop rate against failed-run tool calls saved, the chosen point marked).
Plots are drawn on a :class:`matplotlib.figure.Figure` with the Agg canvas directly (no GUI backend)."""

from __future__ import annotations

import re
from pathlib import Path

from pyguard.base._extras import agg_figure, require
from pyguard.engine import PolicyConfig
from pyguard.tune.models import Figures, Interval, TuneResult

__all__: list[str] = []

_PLOTS = "the trade-off plots of tune --report"


def require_plots() -> None:
    """Raise MissingExtraError naming the ``plot`` extra unless matplotlib is installed."""
    require("matplotlib", extra="plot", feature=_PLOTS)


def pct(i: Interval | None, digits: int = 1) -> str:
    """``12.3% [10.1, 14.6]``, or ``-`` when unknown."""
    if i is None or i.value is None:
        return "-"
    if i.low is None or i.high is None:
        return f"{i.value:.{digits}%}"
    return f"{i.value:.{digits}%} [{i.low * 100:.{digits}f}, {i.high * 100:.{digits}f}]"


def _line(label: str, f: Figures | None) -> str:
    if f is None:
        return f"#   {label}: -"
    return (
        f"#   {label}: false stops {f.false_stops}/{f.successful_runs} ({pct(f.false_stop_rate)}),"
        f" failed-run tool calls saved {pct(f.failed_tool_calls_saved)}, tokens saved {pct(f.failed_tokens_saved)}"
    )


def policy_toml(result: TuneResult, source: str, date: str) -> str:
    """The fitted policy as TOML, read unchanged by ``PolicyConfig.from_toml`` / ``Guard.from_toml``."""
    config = PolicyConfig.model_validate(result.policy)
    head = [
        f"# Fitted by `pyguard tune` on {date} from {source}: {result.labelled_runs} labelled runs"
        f" ({result.skipped_unlabelled} unlabelled skipped), {result.tasks} tasks,",
        f"# bound: false-stop rate <= {result.max_false_stop_rate:g} per task type (fit target"
        f" {result.target_false_stop_rate:g}); {result.folds}-fold"
        f" cross-validation grouped by task, seed {result.seed}{'; artifact stops allowed' if result.artifact else ''}.",
        f"# Search: {result.search}.",
        *(
            ["# The starting policy was kept: it meets the bound and saved at least as much as the tuned one held out."]
            if result.kept_start
            else []
        ),
        "# Held-out (cross-validated; 95% intervals):",
        _line("all types", result.held_out),
    ]
    for t in result.types:
        name = t.task_type or "(no type)"
        head.append(_line(name, t.held_out) if t.tuned else f"#   {name}: not tuned ({t.note})")
        if t.reflect_only:
            head.append(f"#     {name} is reflect-only: {t.note}.")
    head += [
        "# In-sample (the policy on the runs it was fitted to; optimistic):",
        _line("all types", result.in_sample),
        "# Starting policy on the same runs:",
        _line("all types", result.default),
        *(
            [
                "# The starting policy breaks the bound on "
                + ", ".join(t.task_type or "(no type)" for t in result.types if not t.default_meets_bound)
                + ": its savings are not a like-for-like baseline."
            ]
            if not result.default_meets_bound
            else []
        ),
        "",
    ]
    return "\n".join(head) + "\n" + config.to_toml()


def write_policy(result: TuneResult, path: str | Path, source: str, date: str) -> Path:
    p = Path(path)
    text = policy_toml(result, source, date)
    p.write_text(text, encoding="utf-8")
    if PolicyConfig.from_toml(p) != PolicyConfig.model_validate(result.policy):  # the file must read back as fitted
        raise AssertionError(f"{p} does not read back as the fitted policy")
    return p


def _slug(name: str | None) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name or "no_type")


def _plot(result: TuneResult, name: str | None, path: Path) -> None:
    t = next(t for t in result.types if t.task_type == name)
    fig = agg_figure(_PLOTS, figsize=(6, 4))
    ax = fig.add_subplot()
    pts = result.points.get(str(name), [])
    if pts:
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=8, alpha=0.3, color="grey", label="policies searched")
    ax.axvline(result.max_false_stop_rate, color="red", linestyle="--", linewidth=1, label="bound")
    marks = [
        (t.default, "s", 50, "tab:blue", "starting policy"),
        (t.in_sample, "*", 160, "tab:orange", "chosen (in-sample)"),
        (t.held_out, "D", 50, "tab:green", "chosen (held-out)"),
    ]
    for figures, marker, size, color, label in marks:
        if figures is not None:
            x, y = figures.false_stop_rate.value or 0, figures.failed_tool_calls_saved.value or 0
            ax.scatter([x], [y], marker=marker, s=size, color=color, label=label)
    ax.set_xlabel("false-stop rate (successful runs stopped early)")
    ax.set_ylabel("failed-run tool calls saved")
    ax.set_title(f"pyguard tune: {name or '(no type)'}")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _row(label: str, f: Figures | None) -> str:
    if f is None:
        return f"| {label} | - | - | - | - |"
    return (
        f"| {label} | {f.false_stops}/{f.successful_runs} = {pct(f.false_stop_rate)} |"
        f" {pct(f.failed_tool_calls_saved)} | {pct(f.failed_tokens_saved)} | {pct(f.caught_failed_share)} |"
    )


def write_report(result: TuneResult, out_dir: str | Path, command: str, date: str) -> list[Path]:
    """``report.md`` and ``tradeoff_<type>.png`` files in ``out_dir``; returns the paths written."""
    require_plots()  # before anything is written
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    lines = [
        "# pyguard tune",
        "",
        f"`{command}` ({date})",
        "",
        f"{result.labelled_runs} labelled runs ({result.skipped_unlabelled} unlabelled skipped), {result.tasks}"
        f" tasks, {result.folds}-fold cross-validation grouped by task, seed {result.seed}; bound: false-stop rate"
        f" <= {result.max_false_stop_rate:g} per task type (the fit aimed at {result.target_false_stop_rate:g}). Search: {result.search}. {result.engine_passes} engine"
        f" passes, {result.elapsed_s:.1f} s. Held-out stops replayed with `replay_run`; the search's simulation"
        f" disagreed on {result.verification_mismatches} of {result.verified_runs} runs.",
        "",
        f"Stall settings chosen: `{result.stall or 'the starting ones'}`; per fold: "
        + ", ".join(f"`{s or {}}`" for s in result.fold_stall)
        + (
            "; task types with their own: "
            + ", ".join(f"{t} `{v or 'the starting ones'}`" for t, v in result.type_stall.items())
            if result.type_stall
            else ""
        ),
        "",
        "| policy, runs | false stops | failed-run tool calls saved | tokens saved | failed runs caught |",
        "|---|---|---|---|---|",
        _row("**tuned, held-out (cross-validated)**", result.held_out),
        _row("tuned, in-sample (optimistic)", result.in_sample),
        _row(
            "starting policy, all runs" + ("" if result.default_meets_bound else " (breaks the bound on some type)"),
            result.default,
        ),
        "",
    ]
    if result.warnings:
        lines += ["Warnings:", ""] + [f"- {w}" for w in result.warnings] + [""]
    for t in result.types:
        name = t.task_type or "(no type)"
        lines += [
            f"## {name}",
            "",
            f"{t.runs} runs ({t.successful} successful, {t.failed} failed), {t.tasks} tasks."
            + (f" Not tuned: {t.note}." if not t.tuned else "")
            + (f" Reflect-only: {t.note}." if t.reflect_only else "")
            + (
                f" Budget not fitted: {t.note}."
                if t.tuned and not t.budget_fitted and t.note and not t.reflect_only
                else ""
            ),
            "",
            "Budget: " + ", ".join(f"`{k} = {v}`" for k, v in t.budget.items()),
            "",
            "| policy | false stops | failed-run tool calls saved | tokens saved | failed runs caught |",
            "|---|---|---|---|---|",
            _row("**tuned, held-out**", t.held_out),
            _row("tuned, in-sample (optimistic)", t.in_sample),
            _row("starting policy" + ("" if t.default_meets_bound else " (breaks the bound)"), t.default),
            "",
            *(
                []
                if t.default_meets_bound
                else [
                    "The starting (default) policy breaks the bound on this type itself: its savings are not a"
                    " like-for-like baseline for the tuned policy's, which must stop fewer successful runs.",
                    "",
                ]
            ),
        ]
        png = out / f"tradeoff_{_slug(t.task_type)}.png"
        _plot(result, t.task_type, png)
        written.append(png)
        lines += [f"![trade-off {name}]({png.name})", ""]
    md = out / "report.md"
    md.write_text("\n".join(lines), encoding="utf-8")
    return [md, *written]
