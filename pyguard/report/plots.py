"""The report's plots, drawn by matplotlib (the ``plot`` extra) and inlined as SVG: a run's timeline and the outcome
mix of a set of runs. SVG keeps the page one self-contained file that any browser shows, zooms and prints sharply,
with its text as text (``svg.fonttype: none``); ids are salted so the same data draws the same bytes."""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from pyguard.base._extras import agg_figure, require
from pyguard.report.model import RunView

__all__: list[str] = []

_FEATURE = "pyguard report (its plots)"
OUTCOME_COLOURS = {
    "succeeded": "#2e7d32",
    "failed": "#8d6e63",
    "stalled": "#ef6c00",
    "expired": "#c62828",
    "escalated": "#6a1b9a",
    "cancelled": "#757575",
    "guard_error": "#ad1457",
    "no footer": "#bdbdbd",
}
_REFLECT, _STOP, _GAIN, _TOKENS, _BUDGET = "#ef6c00", "#c62828", "#1565c0", "#78909c", "#2e7d32"


def _svg(fig: Any) -> str:
    mpl = require("matplotlib", extra="plot", feature=_FEATURE)
    buf = io.StringIO()
    with mpl.rc_context({"svg.fonttype": "none", "svg.hashsalt": "pyguard-report"}):
        fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")
    text = buf.getvalue()
    return text[text.index("<svg") :]


def _marks(axes: list[Any], view: RunView) -> None:
    top = axes[0]
    for mark in view.marks:
        colour = _REFLECT if mark.action == "reflect" else _STOP
        for ax in axes:
            ax.axvline(mark.iteration + 0.5, color=colour, linestyle="--" if mark.action == "reflect" else "-", lw=1.5)
        label = f"{'reflect' if mark.action == 'reflect' else 'stop'}: {mark.rule or '?'}"
        top.text(
            mark.iteration + 0.5,
            1.02,
            label,
            transform=top.get_xaxis_transform(),
            color=colour,
            fontsize=8,
            ha="center",
            va="bottom",
        )
    if view.replay_stop_at is not None and not any(m.action == "stop" for m in view.marks):
        for ax in axes:
            ax.axvline(view.replay_stop_at + 0.5, color=_STOP, lw=1.5)


def timeline_svg(view: RunView) -> str:
    """The run's calls left to right: information gain per call against the thresholds (top), tokens per call
    (middle), the iteration budget in force against the calls made (bottom); reflections (dashed) and stops (solid)
    after the call they followed."""
    fig = agg_figure(_FEATURE, figsize=(9, 4.2))
    axes = fig.subplots(3, 1, sharex=True, gridspec_kw={"height_ratios": [3, 2, 2], "hspace": 0.12})
    idx = [c.index for c in view.calls]
    gain_ax, tok_ax, bud_ax = axes
    gains = [(c.index, c.gain) for c in view.calls if c.gain is not None]
    if gains:
        gain_ax.plot([i for i, _ in gains], [g for _, g in gains], marker="o", color=_GAIN, lw=1.5, label="gain")
    th = view.thresholds
    if th.earn_threshold is not None:
        gain_ax.axhline(th.earn_threshold, color=_BUDGET, ls=":", lw=1, label=f"earns budget ≥ {th.earn_threshold:g}")
    if th.low_gain_threshold is not None:
        gain_ax.axhline(th.low_gain_threshold, color=_STOP, ls=":", lw=1, label=f"low gain < {th.low_gain_threshold:g}")
    gain_ax.set_ylim(-0.05, 1.05)
    gain_ax.set_ylabel("information\ngain", fontsize=8)
    gain_ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    tok_ax.bar(idx, [c.tokens or 0 for c in view.calls], color=_TOKENS, width=0.7)
    tok_ax.set_ylabel("tokens", fontsize=8)
    budget = [(c.index, c.budget) for c in view.calls if c.budget is not None]
    if budget:
        bud_ax.step([i for i, _ in budget], [b for _, b in budget], where="post", color=_BUDGET, label="budget")
    bud_ax.plot(idx, idx, color=_GAIN, lw=1, ls="--", label="calls made")
    bud_ax.set_ylabel("calls", fontsize=8)
    bud_ax.set_xlabel("model call", fontsize=8)
    bud_ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    if idx:
        bud_ax.set_xlim(0.4, max(idx) + 0.9)
    bud_ax.xaxis.get_major_locator().set_params(integer=True)
    for ax in axes:
        ax.tick_params(labelsize=7)
        ax.spines[["top", "right"]].set_visible(False)
    _marks(list(axes), view)
    return _svg(fig)


def outcome_mix_svg(mix: Mapping[str, Mapping[str, int]]) -> str:
    """One horizontal bar per task type, split by outcome (runs counted)."""
    names = list(mix)
    fig = agg_figure(_FEATURE, figsize=(9, 0.5 + 0.42 * max(len(names), 1)))
    ax = fig.subplots()
    outcomes = [o for o in OUTCOME_COLOURS if any(mix[n].get(o) for n in names)]
    outcomes += sorted({o for n in names for o in mix[n]} - set(outcomes))
    left = [0] * len(names)
    for outcome in outcomes:
        counts = [mix[n].get(outcome, 0) for n in names]
        ax.barh(names, counts, left=left, color=OUTCOME_COLOURS.get(outcome, "#90a4ae"), label=outcome)
        left = [a + b for a, b in zip(left, counts, strict=True)]
    ax.invert_yaxis()
    ax.set_xlabel("runs", fontsize=8)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.tick_params(labelsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(outcomes), frameon=False)
    return _svg(fig)
