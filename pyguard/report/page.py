"""The report as one self-contained HTML page: inline CSS, inline SVG plots, the data embedded as JSON, no script,
no link, no font or image fetched (a Content-Security-Policy of ``default-src 'none'`` says so to the browser)."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from pyguard.base.events import UNTYPED
from pyguard.report.build import ReportData
from pyguard.report.model import GuardMark, RunView
from pyguard.report.plots import OUTCOME_COLOURS, outcome_mix_svg, timeline_svg

__all__: list[str] = []

DATA_ID = "pyguard-report-data"
"""The id of the ``<script type="application/json">`` element that holds :class:`ReportData` as JSON."""

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1000px;
padding:0 16px;color:#212121;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px;border-bottom:1px solid #e0e0e0}
h3{font-size:15px;margin:16px 0 4px}.meta{color:#616161;margin:2px 0}
table{border-collapse:collapse;margin:8px 0;font-size:13px}td,th{padding:2px 10px;text-align:right;
border-bottom:1px solid #eee}th{background:#fafafa}td:first-child,th:first-child{text-align:left}
.outcome{font-weight:600}.mark{margin:6px 0;padding:6px 10px;border-left:4px solid #ef6c00;background:#fff8e1}
.mark.stop{border-color:#c62828;background:#ffebee}.evidence{font:12px ui-monospace,monospace;color:#424242}
.quote{white-space:pre-wrap;font:12px ui-monospace,monospace;background:#f5f5f5;padding:6px}
svg{max-width:100%;height:auto}details{margin:6px 0}
"""


def _outcome(outcome: str | None) -> str:
    name = outcome or "no footer"
    colour = OUTCOME_COLOURS.get(name, "#455a64")
    return f'<span class="outcome" style="color:{colour}">{escape(name)}</span>'


def _runs(n: int) -> str:
    return f"{n:,} run" + ("" if n == 1 else "s")


def _num(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
    return f"{value:,}" if isinstance(value, int) else escape(str(value))


def _table(head: list[str], rows: list[list[str]], cls: str = "") -> str:
    out = [f'<table class="{cls}">' if cls else "<table>", "<tr>" + "".join(f"<th>{escape(h)}</th>" for h in head)]
    out += ["<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows]
    return "\n".join(out) + "</table>"


def _mix_section(data: ReportData) -> str:
    mix = data.outcome_mix
    order = list(OUTCOME_COLOURS)
    outcomes = sorted({o for c in mix.values() for o in c}, key=lambda o: (order.index(o) if o in order else 99, o))
    rows = [[escape(t), _num(sum(c.values()))] + [_num(c.get(o, 0)) for o in outcomes] for t, c in mix.items()]
    return (
        '<section id="outcome-mix"><h2>Outcomes per task type</h2>'
        f'<p class="meta">{_runs(data.runs_total)}; each run counted by the outcome its footer records.</p>'
        + outcome_mix_svg(mix)
        + _table(["task type", "runs", *outcomes], rows, "mix")
        + "</section>"
    )


def _check_section(check: dict[str, Any]) -> str:
    rows = []
    for name, g in check.get("groups", {}).items():
        rates = ", ".join(f"{o} {r:.0%}" for o, r in g.get("rates", {}).items() if r)
        rows.append(
            [
                escape(name),
                _num(g.get("n")),
                escape(rates),
                _num(g.get("iterations_p50")),
                _num(g.get("iterations_p95")),
            ]
            + [_num(g.get("tokens_mean"))]
        )
    note = f"{check.get('replayed', 0):,} of {check.get('runs', 0):,} runs replayed through the policy"
    return (
        '<section id="check"><h2>pyguard check: the figures</h2>'
        f'<p class="meta">{escape(note)}; no thresholds or baseline applied here (run <code>pyguard check</code> for '
        "the gate).</p>"
        + _table(["task type", "runs", "outcomes", "calls p50", "calls p95", "tokens mean"], rows, "check")
        + "".join(f'<p class="meta">{escape(str(n))}</p>' for n in check.get("notes", []))
        + "</section>"
    )


def _calibrate_section(cal: dict[str, Any]) -> str:
    rows = [
        [escape(t["task_type"]), _num(t["runs"]), escape(str(t.get("unit") or "-"))]
        + [f"{t['successes']}/{t['failures']}/{t['censored']}"]
        + [_num(t["recommended_max_iterations"]) + ("+" if t.get("at_horizon") else "")]
        + [f"{t['ci_low']}–{t['ci_high']}" if t["ci_low"] is not None and t["ci_high"] is not None else "-"]
        + [f"{t['success_at_optimum']:.0%}", _num(t["expected_cost_at_optimum"])]
        for t in cal["task_types"]
    ]
    skipped = "".join(
        f'<p class="meta">skipped {escape(str(s.get("task_type")))}: {escape(str(s.get("reason")))}</p>'
        for s in cal.get("skipped", [])
    )
    return (
        '<section id="calibrate"><h2>pyguard calibrate: maxIterations per task type</h2>'
        f'<p class="meta">failure cost {cal["failure_cost"]:g} ({escape(cal["cost_unit"])}); N*: the recommended '
        "maxIterations (-: none recommended, `pyguard calibrate` says why; +: the optimum is at the end of the data).</p>"
        + _table(
            ["task type", "runs", "n counts", "ok/fail/cut", "N*", "interval", "success at N*", "E[cost] at N*"], rows
        )
        + skipped
        + "</section>"
    )


def _evidence(mark: GuardMark) -> str:
    parts: list[str] = []
    for flag in mark.flags:
        shown = ", ".join(f"{k}={v}" for k, v in flag.items() if k not in ("rule", "message"))
        line = f'<div class="evidence">{escape(str(flag.get("rule")))}: {escape(shown)}</div>'
        if flag.get("message") and flag["message"] != mark.reason:
            line += f'<div class="quote">{escape(str(flag["message"]))}</div>'
        parts.append(line)
    parts += [f'<div class="evidence">cap: {escape(json.dumps(c))}</div>' for c in mark.caps]
    if mark.reflection:
        parts.append(
            f'<details><summary>the reflection sent</summary><div class="quote">{escape(mark.reflection)}</div></details>'
        )
    return "".join(parts)


_NOT_ACTED = {
    "observe": "observe mode: not acted on, the run went on",
    "reflect": "reflect mode: one more reflection sent instead, the run went on",
}


def _mark(mark: GuardMark, mode: str = "enforce") -> str:
    what = "reflected" if mark.action == "reflect" else f"stopped ({mark.outcome or '?'})"
    if mode == "observe" or (mode == "reflect" and mark.action != "reflect"):
        what = f"would have {what} ({_NOT_ACTED[mode]})"
    head = f"after call {mark.iteration}: {what}, rule {escape(mark.rule or 'not recorded')}"
    reason = f"<div>{escape(mark.reason)}</div>" if mark.reason else ""
    return (
        f'<div class="mark {mark.action}" data-iteration="{mark.iteration}" data-action="{mark.action}"'
        f' data-rule="{escape(mark.rule or "")}"><b>{head}</b>{reason}{_evidence(mark)}</div>'
    )


_SOURCE = {
    "recorded": "the guard's decisions as its trace recorded them",
    "replayed": "no decisions recorded: replayed through the policy (what it would have decided; a recording cannot "
    "show what a reflection would have changed)",
    "none": "no model calls",
}


def _calls_table(view: RunView) -> str:
    rows = []
    for c in view.calls:
        attrs = (
            f'data-call="{c.index}" data-tokens="{"" if c.tokens is None else c.tokens}"'
            f' data-gain="{"" if c.gain is None else repr(c.gain)}" data-budget="{"" if c.budget is None else c.budget}"'
            f' data-action="{c.action or ""}"'
        )
        cells = [str(c.index), escape(", ".join(c.tools) or "-"), _num(c.tokens), _num(c.gain), _num(c.budget)]
        cells.append(escape(c.action or "-") + (f" ({escape(c.rule)})" if c.rule else ""))
        rows.append(f"<tr {attrs}>" + "".join(f"<td>{x}</td>" for x in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("call", "tools asked for", "tokens", "gain", "budget", "decision"))
    return (
        f'<details><summary>every call</summary><table class="calls"><tr>{head}</tr>{"".join(rows)}</table></details>'
    )


def _run_section(view: RunView) -> str:
    tokens = _num(view.tokens) + " in its calls"
    tokens += " (a lower bound: some calls reported no usage)" if view.tokens_partial else ""
    if view.wrap_up_tokens is not None:
        tokens += f", plus {view.wrap_up_tokens:,} in the wrap-up call"
    facts = (
        f"{_outcome(view.outcome)} · task type {escape(view.task_type or UNTYPED)} · {view.model_calls:,} model "
        f"calls · {view.tool_calls:,} tool calls · tokens {tokens}"
    )
    extra = ""
    if view.task is not None:
        extra += f'<div class="meta">task: {escape(view.task)}</div>'
    if view.answer is not None:
        extra += f'<div class="meta">answer ({escape(view.answer_source or "source not recorded")}): {escape(view.answer)}</div>'
    if view.source == "replayed":
        stop = view.replay_stop_at
        extra += f'<div class="meta">the policy would stop after call {stop}</div>' if stop else ""
    return (
        f'<section class="run" id="run-{escape(view.run_id)}" data-run-id="{escape(view.run_id)}">'
        f"<h3>run {escape(view.run_id)}</h3><p>{facts}</p>"
        f'<p class="meta">decisions: {escape(_SOURCE[view.source])}</p>{extra}'
        + (timeline_svg(view) if view.calls else "")
        + "".join(_mark(m, view.mode) for m in view.marks)
        + _calls_table(view)
        + "</section>"
    )


def render_page(data: ReportData) -> str:
    """The whole page."""
    capture = (
        "content capture on: the task, answers, reasons and evidence messages are shown"
        if data.content
        else "content capture off: no text written by the user, the model or a tool is on this page "
        "(--content to show it)"
    )
    drawn = f"{len(data.runs):,} of {data.runs_total:,} runs drawn" if len(data.runs) < data.runs_total else ""
    skipped = ", ".join(f"{n:,} {reason}" for reason, n in data.skipped.items())
    meta = " · ".join(x for x in (f"generated {data.generated_at}", drawn, capture) if x)
    payload = json.dumps(data.model_dump(mode="json"), sort_keys=True).replace("</", "<\\/")
    body = [
        f"<header><h1>{escape(data.title)}</h1><p class='meta'>{escape(meta)}</p>"
        + (f"<p class='meta'>skipped while loading: {escape(skipped)}</p>" if skipped else "")
        + "</header>",
        _mix_section(data),
        _check_section(data.check) if data.check is not None else "",
        _calibrate_section(data.calibrate) if data.calibrate is not None else "",
        '<section id="runs"><h2>Runs: information gain per call, tokens, the budget, where the guard acted</h2>',
        *(_run_section(v) for v in data.runs),
        "</section>",
    ]
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{escape(data.title)}</title>'
        f"<style>{_CSS}</style></head><body>\n"
        + "\n".join(body)
        + f'\n<script type="application/json" id="{DATA_ID}">{payload}</script>\n</body></html>\n'
    )
