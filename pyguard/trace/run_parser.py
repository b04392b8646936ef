"""How importers parse runs: the options every importer takes (:class:`ImportOptions`), and the parse step every
container importer shares (:class:`RunParser`: a file's run objects in, run records out).

A container importer (mini-swe-agent, SWE-agent, BFCL, MedAgentBench, τ²-bench) knows how to turn *one* run object
into a :class:`~pyguard.base.events.RunRecord`; a :class:`RunParser` does the rest the same way for all of them: it finds
the run objects in each parsed object of a file (``runs_of``), names them when the format names runs by instance
(``by_instance``: :func:`~pyguard.trace.tolerance.records_by_instance`), converts each, and skips and counts the ones
that cannot be read in the skip log (strict when none is given: the first bad run raises).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypedDict, Unpack

from pyguard.base.errors import UnreadableRecord
from pyguard.base.events import RunRecord
from pyguard.trace.labels import Labels
from pyguard.trace.tolerance import SkipLog, records_by_instance

__all__: list[str] = []


class ImportOptions(TypedDict, total=False):
    """The options every importer takes besides the text or objects it reads and their ``source``."""

    log: SkipLog | None
    """Where unreadable records are skipped and counted; None: a strict log (the first bad record raises)."""
    terminal_tools: frozenset[str] | None
    """Tools that end a run (see :mod:`pyguard.trace.ending`); None: the built-in ones."""
    labels: Labels | None
    """Outcome labels kept apart from the recording (a SWE-bench report, a BFCL score file)."""


def _itself(obj: Any) -> list[Any]:
    return [obj]


@dataclass(frozen=True)
class RunParser:
    """Reads the parsed objects of one file (``[(id_hint, object), ...]``, see
    :func:`~pyguard.trace.containers.parse_container`) into run records.

    ``to_record(obj, source=, labels=, terminal_tools=)`` converts one run object (with ``run_id=`` too when
    ``by_instance``) and raises :class:`~pyguard.base.errors.UnreadableRecord` for one it cannot read.
    """

    to_record: Callable[..., RunRecord]
    by_instance: bool = False
    """Runs are named by their ``instance_id``, else their key in an id-keyed file, else the file (``default_id``)."""
    runs_of: Callable[[Any], Iterable[Any]] = _itself
    """The run objects one parsed object holds (a results file holding many; by default the object itself)."""
    duplicate: str | None = None
    """When set, a run whose id was already read from the same file is skipped as a duplicate; the value names a
    run in the message ("simulation")."""

    def __call__(
        self,
        objects: list[tuple[str | None, Any]],
        *,
        source: str,
        default_id: str = "run",
        **options: Unpack[ImportOptions],
    ) -> list[RunRecord]:
        log = options.get("log")
        log = log if log is not None else SkipLog(strict=True)
        convert = partial(
            self.to_record, source=source, labels=options.get("labels"), terminal_tools=options.get("terminal_tools")
        )
        if self.by_instance:
            return records_by_instance(
                objects, lambda obj, run_id: convert(obj, run_id=run_id), default_id=default_id, log=log
            )
        out: list[RunRecord] = []
        seen: set[str] = set()
        for _, obj in objects:
            for run in self.runs_of(obj):
                try:
                    record = convert(run)
                    if self.duplicate is not None and record.run_id in seen:
                        raise UnreadableRecord(
                            f"{source}: {self.duplicate} {record.run_id!r} appears twice", reason="duplicate run id"
                        )
                except UnreadableRecord as exc:
                    log.skip(exc)
                    continue
                seen.add(record.run_id)
                out.append(record)
        return out
