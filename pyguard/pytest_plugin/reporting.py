"""What the plugin adds to pytest's reports: a test's guarded runs in a few numbers, the end-of-session summary, and the
classpath beside a "class not found".

A test's numbers travel on its call report as ``report.pyguard`` (a plain dict), so under pytest-xdist the controller
that prints the summary receives them with the report, as pytest-benchmark does with its figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from pyguard.result import RunResult

__all__ = [
    "SUMMARY_PLUGIN",
    "SUMMARY_TITLE",
    "RunStats",
    "SessionRuns",
    "classpath_hint",
    "run_stats",
]

SUMMARY_TITLE = "pyguard runs"
SUMMARY_PLUGIN = "pyguard-session-runs"
"""The name :class:`SessionRuns` is registered under with pytest's plugin manager."""
MAX_ROWS = 20
"""The summary lists at most this many tests (most tokens first); a line says how many more there were."""

RunStats = dict[str, Any]
"""A test's runs as plain values: ``runs``, ``model_calls``, ``tokens`` (None when no call reported usage),
``tokens_partial``, ``outcomes`` (outcome -> count), ``trace`` (the kept trace's path or None)."""


def run_stats(results: Sequence[RunResult], trace: str | None) -> RunStats:
    """A test's runs in a few numbers (JSON-serialisable: it travels on the report under xdist)."""
    outcomes: dict[str, int] = {}
    for r in results:
        outcomes[r.outcome.value] = outcomes.get(r.outcome.value, 0) + 1
    totals = [r.total_tokens for r in results]
    known = [t for t in totals if t is not None]
    return {
        "runs": len(results),
        "model_calls": sum(r.model_calls for r in results),
        "tokens": sum(known) if known else None,
        "tokens_partial": any(r.tokens_partial for r in results) or len(known) < len(totals),
        "outcomes": outcomes,
        "trace": trace,
        "conversations": conversation_stats(results),
    }


def conversation_stats(results: Sequence[RunResult]) -> dict[str, dict[str, Any]]:
    """A test's runs that were turns of a conversation (an attached agent's), by conversation id: ``runs``,
    ``model_calls``, ``outcomes``, and ``stopped_by``, the rule of the conversation budget that stopped one, or None."""
    out: dict[str, dict[str, Any]] = {}
    for r in results:
        cid = r.conversation_id
        if cid is None:
            continue
        row = out.setdefault(cid, {"runs": 0, "model_calls": 0, "outcomes": {}, "stopped_by": None})
        row["runs"] += 1
        row["model_calls"] += r.model_calls
        row["outcomes"][r.outcome.value] = row["outcomes"].get(r.outcome.value, 0) + 1
        row["stopped_by"] = r.evidence["conversation"].get("stopped_by") or row["stopped_by"]
    return out


class SessionRuns:
    """The stats of every test that ran guarded runs, gathered from the call reports (controller or single process),
    and printed at the end of the session. Registered as a plugin (:data:`SUMMARY_PLUGIN`) for its two hooks."""

    def __init__(self, by_conversation: bool = False) -> None:
        self.by_test: dict[str, RunStats] = {}
        self.by_conversation = by_conversation
        """``--pyguard-by-conversation``: the summary also lists each test's conversations."""

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        stats = getattr(report, "pyguard", None)
        if report.when == "call" and isinstance(stats, dict):
            self.by_test[report.nodeid] = stats

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        lines = self.lines()
        if lines:
            terminalreporter.write_sep("=", SUMMARY_TITLE)
            for line in lines:
                terminalreporter.write_line(line)

    def lines(self) -> list[str]:
        """The summary: one line per test (most tokens first, at most :data:`MAX_ROWS`), then the totals."""
        if not self.by_test:
            return []
        rows = sorted(self.by_test.items(), key=lambda kv: (-(kv[1]["tokens"] or 0), kv[0]))
        width = min(60, max(len(nodeid) for nodeid, _ in rows[:MAX_ROWS]))
        out = [f"{'test':<{width}}  {'runs':>4}  {'calls':>5}  {'tokens':>8}  outcomes"]
        for nodeid, s in rows[:MAX_ROWS]:
            out.append(
                f"{_cut(nodeid, width):<{width}}  {s['runs']:>4}  {s['model_calls']:>5}  {_tokens(s):>8}  "
                + _outcomes(s["outcomes"])
            )
        if len(rows) > MAX_ROWS:
            out.append(f"... and {len(rows) - MAX_ROWS} more tests with guarded runs")
        all_stats = list(self.by_test.values())
        total_tokens = _tokens(
            {
                "tokens": sum(s["tokens"] or 0 for s in all_stats)
                if any(s["tokens"] is not None for s in all_stats)
                else None,
                "tokens_partial": any(s["tokens_partial"] for s in all_stats),
            }
        )
        if self.by_conversation:
            out.extend(_conversation_lines(rows))
        kept = [s["trace"] for s in all_stats if s["trace"]]
        out.append(
            f"{len(all_stats)} tests, {sum(s['runs'] for s in all_stats)} runs, "
            f"{sum(s['model_calls'] for s in all_stats)} model calls, {total_tokens} tokens; "
            + (f"{len(kept)} traces kept (e.g. {kept[0]})" if kept else "no trace kept")
        )
        return out


def _conversation_lines(rows: list[tuple[str, RunStats]]) -> list[str]:
    """One line per conversation of each test (tests in the summary's order): runs, model calls, outcomes, and the
    conversation budget's rule when it stopped a turn."""
    out = []
    for nodeid, s in rows:
        for cid, c in sorted((s.get("conversations") or {}).items()):
            stop = f"; stopped by {c['stopped_by']}" if c.get("stopped_by") else ""
            out.append(
                f"  conversation {cid!r} of {nodeid}: {c['runs']} runs, {c['model_calls']} model calls, "
                + _outcomes(c["outcomes"])
                + stop
            )
    return out


def classpath_hint(excinfo: pytest.ExceptionInfo[BaseException] | None, classpath: Sequence[str]) -> str | None:
    """For JPype's "Class x is not found" (a ``TypeError``), the classpath in use and what to check; else None."""
    if excinfo is None or not isinstance(excinfo.value, TypeError) or "is not found" not in str(excinfo.value):
        return None
    entries = (
        "\n".join(f"  {entry}" for entry in classpath) or "  (none: --pyguard-classpath / pyguard_classpath is empty)"
    )
    return (
        f"{excinfo.value}\nThe agent's classpath (--pyguard-classpath / pyguard_classpath, after pyguard's own jars):\n"
        f"{entries}\nCheck the class's full name, that its jar is built (mvn package) and that its jar or class folder "
        "is listed above."
    )


def _tokens(stats: RunStats) -> str:
    if stats["tokens"] is None:
        return "n/a"
    return f"{stats['tokens']}{'+' if stats['tokens_partial'] else ''}"


def _outcomes(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else "..." + text[-(width - 3) :]
