"""The runs a test produced, and the JSONL trace kept as the artifact of a failed test.

Each test has one :class:`RunCollector` (the ``pyguard_runs`` fixture); ``pyguard_guard`` adds every result it
produces, and a test may add results it built itself (for example from a recording). When the test's call phase
ends, :func:`keep_traces` writes the collected runs to ``<trace dir>/<test id>.jsonl`` if the keep mode says so (a failed
test, or an xfailed one, under the default ``failed``), and
adds a "pyguard traces" section with the path and each run's summary: to a failed test's failure text (so JUnit XML
carries it), else to the report's sections.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyguard.base.errors import InputError
from pyguard.base.safe_reader import loads
from pyguard.result import RunResult

__all__: list[str] = []

REPORT_SECTION = "pyguard traces"


class RunCollector:
    """The RunResults one test produced, in order."""

    def __init__(self) -> None:
        self._results: list[RunResult] = []

    def add(self, result: RunResult) -> RunResult:
        """Record a result (returned unchanged, so ``r = pyguard_runs.add(guard.run_scenario(...))`` reads well)."""
        if not isinstance(result, RunResult):
            raise InputError(
                f"pyguard_runs.add() takes a pyguard RunResult, got {type(result).__name__}: "
                "build one with RunResult.from_record(record)"
            )
        self._results.append(result)
        return result

    @property
    def results(self) -> list[RunResult]:
        return list(self._results)

    def __iter__(self) -> Iterator[RunResult]:
        return iter(list(self._results))

    def __len__(self) -> int:
        return len(self._results)

    def __getitem__(self, i: int) -> RunResult:
        return self._results[i]


def trace_file_name(nodeid: str) -> str:
    """A file name for a test id: ``tests/test_a.py::test_x[p-1]`` -> ``tests.test_a.py__test_x-p-1-.jsonl``."""
    name = nodeid.replace("::", "__").replace("/", ".").replace("\\", ".")
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "test"
    return name[:180] + ".jsonl"


def write_trace(path: Path, results: list[RunResult]) -> Path:
    """Write the runs as one pyguard JSONL trace (overwriting ``path``); returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # lazy: the plugin loads in every pytest session; the engine (numpy) only for a test that uses it
    from pyguard.trace.writer import write_runs

    write_runs(path, [r.record for r in results], decisions=_decisions_by_run(results))
    return path


def keep_traces(
    item: pytest.Item,
    report: pytest.TestReport,
    collector: RunCollector | None,
    trace_dir: Path,
    keep: str,
    mode: int = 0o600,
) -> Path | None:
    """Write the test's runs when ``keep`` says so for this report, with permission bits ``mode``; add the report
    section. Returns the path."""
    if collector is None or not len(collector):
        return None
    if keep == "none" or (keep == "failed" and not (report.failed or hasattr(report, "wasxfail"))):
        return None  # an xfailed test failed as expected: its trace is kept like a failed test's
    path = trace_dir / trace_file_name(item.nodeid)
    try:
        write_trace(path, collector.results)
        os.chmod(path, mode)
    except Exception as exc:  # a broken trace must not break the test report
        add_section(report, f"could not write the trace to {path}: {type(exc).__name__}: {exc}")
        return None
    lines = [f"trace of {len(collector)} run(s): {path}"]
    lines.extend(r.summary() for r in collector)
    add_section(report, "\n".join(lines))
    item.user_properties.append(("pyguard_trace", str(path)))  # JUnit XML reads them from the teardown report
    return path


def remove_earlier_traces(trace_dir: Path) -> int:
    """Remove the traces an earlier session kept in ``trace_dir`` (its ``*.jsonl`` files whose first record is a pyguard
    ``run_start``; nothing else in the folder is touched). Returns how many were removed."""
    removed = 0
    for path in sorted(trace_dir.glob("*.jsonl")) if trace_dir.is_dir() else []:
        try:
            with path.open("rb") as fh:
                first = loads(fh.readline(1 << 20) or b"null", source=str(path))  # the one safe reader
        except (OSError, ValueError):
            continue
        if isinstance(first, dict) and first.get("type") == "run_start":
            path.unlink(missing_ok=True)
            removed += 1
    return removed


def add_section(report: pytest.TestReport, text: str) -> None:
    """The "pyguard traces" section: in a failed test's failure text (what pytest prints under the failure and JUnit XML
    puts in ``<failure>``), else among the report's sections (printed with ``-rP`` for a passed test)."""
    addsection = getattr(report.longrepr, "addsection", None)  # a TerminalRepr's; not a plain string's
    if report.failed and callable(addsection):
        addsection(REPORT_SECTION, text)
    else:
        report.sections.append((REPORT_SECTION, text))


def _decisions_by_run(results: list[RunResult]) -> dict:
    out: dict = {}
    for r in results:
        kept = [d for d in r.decisions if d.iteration is not None and 1 <= d.iteration <= len(r.record.events)]
        out.setdefault(r.run_id, []).extend(kept)
    return out
