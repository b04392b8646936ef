"""The gate's report in the forms CI needs: one JSON object, JUnit XML, a Markdown comment, rich tables."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pyguard.base.errors import InputError
from pyguard.base.events import Outcome
from pyguard.check.gate import CheckResult, GateReport
from pyguard.check.summary import ALL_TASKS, RunSetSummary

__all__: list[str] = []


def _figure(x: float | None, rate: bool = False) -> str:
    if x is None:
        return "–"
    if rate:
        return f"{x:.3f}"
    if float(x).is_integer() and abs(x) >= 1:
        return f"{int(x):,}"
    return f"{x:.3f}" if abs(x) < 100 else f"{x:,.0f}"


def _p(p: float | None) -> str:
    if p is None:
        return "–"
    return f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}"


def _is_rate(c: CheckResult) -> bool:
    return c.name.endswith("_rate")


def _detects(c: CheckResult) -> str:
    """The smallest change the check detects (80% power): ``–`` for a threshold (no test), ``none`` when no change
    could be detected, ``!`` appended when that is not a change of the size that matters."""
    if c.kind == "threshold":
        return "–"
    if c.detectable is None:
        shown = "none"
    elif _is_rate(c):
        shown = f"→{c.detectable:.3f}"
    else:
        shown = f"{c.detectable:.2f}x"
    return shown + ("!" if c.detects_large is False else "")


def _relative(c: CheckResult) -> bool:
    """The all-runs token check compares tokens per run relative to each run's task type's baseline median (the
    gate's pooled comparison), not tokens: its figures read as ``1.254×``."""
    return c.name == "baseline.tokens" and c.task_type == ALL_TASKS


def _value(c: CheckResult, x: float | None) -> str:
    return f"{x:.3f}×" if _relative(c) and x is not None else _figure(x, _is_rate(c))


def _against(c: CheckResult) -> str:
    if c.kind == "threshold":
        return f"≤ {_figure(c.threshold, _is_rate(c))}"
    return f"baseline {_value(c, c.baseline)}"


RELATIVE_NOTE = "tokens of all runs: per run, × its task type's baseline median (1.000× = that median)"


def observed_line(s: RunSetSummary) -> str | None:
    """What the observed stops (observe or reflect mode) cost, apart from what enforcing them would have saved."""
    if not s.observed:
        return None
    g = s.overall
    spent = f"{sum(g.tokens):,} tokens spent by all runs" if g.tokens else "no usage data"
    return (
        f"{s.observed:,} run(s) count as the stop their observe-mode guard recorded and did not act on: {spent} "
        f"(what happened); enforcing those stops would have saved {g.tokens_saved:,} tokens"
    )


def _shown_outcomes(s: RunSetSummary) -> list[Outcome]:
    """Outcomes worth a column: the usual three, plus any other that occurred."""
    usual = (Outcome.SUCCEEDED, Outcome.STALLED, Outcome.EXPIRED)
    return [o for o in Outcome if o in usual or s.overall.count(o)]


def report_dict(report: GateReport) -> dict:
    """Everything as plain data: verdict, every check, the per-group figures, notes."""
    return {
        "passed": report.passed,
        "exit_code": report.exit_code,
        "alpha": report.config.alpha,
        "runs": report.summary.overall.n,
        "replayed": report.summary.replayed,
        "observed": report.summary.observed,
        "tokens_saved_by_observed_stops": report.summary.overall.tokens_saved,
        "config": report.config.model_dump(mode="json"),
        "checks": [c.model_dump(mode="json") for c in report.checks],
        "groups": {k: g.figures() for k, g in report.summary.groups.items()},
        "notes": list(report.notes),
        "warnings": list(report.warnings),
    }


def report_json(report: GateReport) -> str:
    return json.dumps(report_dict(report), sort_keys=True)


_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 cannot hold (control characters, lone surrogates) written as a
    visible ``\\xNN`` / ``\\uNNNN`` escape, so a task type with a control character stays recognisable and the
    file parses."""
    return _XML_INVALID.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def junit_xml(report: GateReport) -> str:
    """JUnit XML: one testsuite, one testcase per check (``<failure>`` with the check's message when it failed).
    Every name and message goes through :func:`xml_safe`."""
    suite = ET.Element(
        "testsuite",
        name="pyguard check",
        tests=str(len(report.checks)),
        failures=str(len(report.failures)),
        errors="0",
        skipped="0",
    )
    if report.warnings:
        props = ET.SubElement(suite, "properties")
        for w in report.warnings:
            ET.SubElement(props, "property", name="pyguard.warning", value=xml_safe(w))
    for c in report.checks:
        case = ET.SubElement(
            suite, "testcase", classname=xml_safe(f"pyguard.check.{c.task_type}"), name=xml_safe(c.name)
        )
        if not c.passed:
            failure = ET.SubElement(case, "failure", message=xml_safe(c.message), type=c.kind)
            failure.text = xml_safe(json.dumps(c.model_dump(mode="json"), indent=2, sort_keys=True, ensure_ascii=False))
        else:
            ET.SubElement(case, "system-out").text = xml_safe(c.message)
        if c.underpowered or c.detects_large is False:
            ET.SubElement(case, "system-err").text = xml_safe(
                "WARNING: too few runs: "
                + (
                    "a large worsening that cannot be confirmed"
                    if c.underpowered
                    else "cannot detect a change of the size that matters"
                )
            )
    root = ET.Element("testsuites", name="pyguard", tests=suite.get("tests", "0"), failures=suite.get("failures", "0"))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _group_label(key: str) -> str:
    return "all runs" if key == ALL_TASKS else key


def markdown(report: GateReport) -> str:
    """A pull-request comment: verdict, failures first (each with its figure, threshold/baseline and p-value),
    then the outcome mix per task type."""
    s = report.summary
    verdict = (
        ("⚠️ passed with warnings" if report.warnings else "✅ passed")
        if report.passed
        else f"❌ failed ({len(report.failures)} of {len(report.checks)} checks)"
    )
    lines = [
        f"## pyguard check: {verdict}",
        "",
        f"{s.overall.n} runs"
        + (f" ({s.replayed} replayed through the policy)" if s.replayed else "")
        + (f" ({s.observed} counted as the stop their observe-mode guard recorded)" if s.observed else "")
        + (
            f"; baseline comparison at alpha {report.config.alpha:g} (Holm-adjusted)"
            if report.baseline is not None
            else ""
        ),
        "",
    ]
    if (line := observed_line(s)) is not None:
        lines += [_md_cell(line), ""]
    if report.warnings:
        lines += ["> [!WARNING]", "> **Too few runs to rely on every check:**"]
        lines += [f"> - {_md_cell(w)}" for w in report.warnings]
        lines.append("")
    if report.failures:
        lines += [
            "### Failures",
            "",
            "| check | task type | value | against | p (adjusted) | why |",
            "|---|---|---|---|---|---|",
        ]
        for c in report.failures:
            lines.append(
                f"| `{c.name}` | {_md_cell(_group_label(c.task_type))} | {_value(c, c.value)} | "
                f"{_against(c)} | {_p(c.p_value)} ({_p(c.p_adjusted)}) | {_md_cell(c.message)} |"
            )
        lines.append("")
    passed = [c for c in report.checks if c.passed]
    if passed:
        lines += [
            "<details><summary>Passed checks</summary>",
            "",
            "| check | task type | value | against | p | detects (80% power) |",
            "|---|---|---|---|---|---|",
        ]
        for c in passed:
            lines.append(
                f"| `{c.name}` | {_md_cell(_group_label(c.task_type))} | {_value(c, c.value)} | "
                f"{_against(c)} | {_p(c.p_adjusted)} | {_detects(c)} |"
            )
        lines += ["", "</details>", ""]
    if any(_relative(c) for c in report.checks):
        lines += [f"_{RELATIVE_NOTE}_", ""]
    lines += _md_summary(s)
    if report.notes:
        lines += [""] + [f"- {_md_cell(n)}" for n in report.notes]
    return "\n".join(lines) + "\n"


def _tokens_cell(g) -> str:  # noqa: ANN001
    """Mean tokens per run and how many runs it rests on (the runs that report usage)."""
    if not g.tokens:
        return "–"
    return f"{g.tokens_mean:,.0f} ({len(g.tokens)}/{g.n})"


def _md_summary(s: RunSetSummary) -> list[str]:
    outs = _shown_outcomes(s)
    columns = [
        "task type",
        "runs",
        *(o.value for o in outs),
        "iter p50",
        "iter p95",
        "tokens mean (runs with usage)",
        "tokens p95",
    ]
    head = "| " + " | ".join(columns) + " |"
    lines = ["### Runs", "", head, "|" + "---|" * (len(outs) + 6)]
    for key in [*s.task_types, ALL_TASKS]:
        g = s.groups[key]
        cells = [_md_cell(_group_label(key)), str(g.n)] + [str(g.count(o)) for o in outs]
        cells += [
            _figure(g.iterations_p50),
            _figure(g.iterations_p95),
            _tokens_cell(g),
            f"{g.tokens_p95:,.0f}" if g.tokens else "–",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


_SHORT = {
    Outcome.SUCCEEDED: "ok",
    Outcome.STALLED: "stall",
    Outcome.EXPIRED: "exp",
    Outcome.FAILED: "fail",
    Outcome.ESCALATED: "esc",
    Outcome.CANCELLED: "canc",
    Outcome.GUARD_ERROR: "g.err",
}


def _table(title: str, caption: str | None = None) -> Table:
    return Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
        caption=caption,
        caption_justify="left",
    )


def render(report: GateReport, console: Console) -> None:
    """Rich tables for people (they fit 100 columns and stay readable at 80): the run summary, the checks, then
    each failure's full message and the verdict."""
    s = report.summary
    outs = _shown_outcomes(s)
    summary = _table(
        f"runs ({s.overall.n:,}"
        + (f", {s.replayed:,} replayed" if s.replayed else "")
        + (f", {s.observed:,} observed stops" if s.observed else "")
        + ")",
        caption=", ".join(f"{_SHORT[o]}: {o.value}" for o in outs) + "; tokens: mean per run (runs with usage / runs)",
    )
    summary.add_column("task type", overflow="fold", min_width=12)
    summary.add_column("runs", justify="right", no_wrap=True)
    for o in outs:
        summary.add_column(_SHORT[o], justify="right", no_wrap=True)
    for col in ("iter\np50", "iter\np95", "tokens", "tokens\np95"):
        summary.add_column(col, justify="right", no_wrap=True)
    for key in [*s.task_types, ALL_TASKS]:
        g = s.groups[key]
        if key == ALL_TASKS:
            summary.add_section()
        summary.add_row(
            escape(_group_label(key)),
            f"{g.n:,}",
            *[f"{g.count(o):,}" for o in outs],
            _figure(g.iterations_p50),
            _figure(g.iterations_p95),
            _tokens_cell(g),
            f"{g.tokens_p95:,.0f}" if g.tokens else "–",
        )
    console.print(summary)
    if (line := observed_line(s)) is not None:
        console.print(escape(line), highlight=False)
    if report.checks:
        checks = _table(
            "checks",
            caption="n: the runs the figure rests on (tokens: runs with usage), current / "
            "baseline; p adj.: Holm-adjusted p-value (the raw one is in --json); detects: the smallest change seen with 80% power (!: not a change "
            "of the size that matters)" + ("; " + RELATIVE_NOTE if any(_relative(c) for c in report.checks) else ""),
        )
        checks.add_column("", no_wrap=True)
        checks.add_column("check", overflow="fold", min_width=10)
        checks.add_column("task type", overflow="fold", min_width=10)
        for col in ("value", "against", "n", "p adj.", "detects"):
            checks.add_column(col, justify="right", no_wrap=True)
        for c in report.checks:
            n = f"{c.n}" + (f"/{c.baseline_n}" if c.baseline_n is not None else "")
            checks.add_row(
                "[green]pass[/]" if c.passed else "[bold red]FAIL[/]",
                escape(c.name.removeprefix("baseline.") if c.kind == "baseline" else c.name),
                escape(_group_label(c.task_type)),
                _value(c, c.value),
                _against(c),
                n,
                _p(c.p_adjusted),
                _detects(c),
            )
        console.print(checks)
    for c in report.failures:
        where = escape(_group_label(c.task_type))
        console.print(f"[bold red]FAIL[/] {escape(c.name)} \\[{where}]: {escape(c.message)}", highlight=False)
    for n in report.notes:
        console.print(f"note: {escape(n)}", highlight=False)
    for w in report.warnings:
        console.print(f"[bold yellow]WARNING[/] {escape(w)}", highlight=False)
    console.print(
        (
            "[green]pyguard check passed[/]"
            + (" [bold yellow](with warnings: too few runs)[/]" if report.warnings else "")
        )
        if report.passed
        else f"[bold red]pyguard check failed: {len(report.failures)} check(s)[/]"
    )


def write_text(path: str | Path, text: str, what: str) -> None:
    """Write a report file, turning OS errors into an InputError that names the path."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write the {what} {str(path)!r}: {exc.strerror or exc}") from exc
