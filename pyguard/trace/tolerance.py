"""Tolerant reading of messy recordings: skip what cannot be read, count it per reason, keep going.

Every importer reports a record it cannot read (a run with no assistant message, a message with an unknown
role, a bad task type, a line that is not JSON) by raising or noting a :class:`~pyguard.base.errors.UnreadableRecord`
with a short ``reason``. A :class:`SkipLog` decides what happens: in strict mode it raises the error (the old
behaviour: the first bad record fails the load); otherwise it counts the reason, keeps the first few messages
as examples, and loading goes on. :class:`LoadResult` is what :func:`pyguard.loading.load_runs` returns: the
list of runs that were read, plus the skip counts, so every command can print them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from pyguard.base.errors import UnreadableRecord
from pyguard.base.events import RunRecord

__all__: list[str] = []

_EXAMPLES_PER_REASON = 3


class SkipLog:
    """What was skipped while loading, by reason (strict: nothing is skipped, the first problem raises)."""

    def __init__(self, *, strict: bool = False) -> None:
        self.strict = strict
        self.counts: Counter[str] = Counter()
        self.examples: dict[str, list[str]] = {}

    def skip(self, error: UnreadableRecord) -> None:
        """Count ``error`` under its reason; in strict mode raise it instead."""
        if self.strict:
            raise error
        self.counts[error.reason] += 1
        examples = self.examples.setdefault(error.reason, [])
        if len(examples) < _EXAMPLES_PER_REASON:
            examples.append(str(error))

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def first_example(self) -> str:
        """The first message kept for the most frequent reason ('' when nothing was skipped)."""
        if not self.counts:
            return ""
        reason = min(self.counts, key=lambda r: (-self.counts[r], r))
        return (self.examples.get(reason) or [""])[0]

    def summary(self) -> str:
        """One line: ``skipped 3 items: 2 unknown role 'exit' (messages), 1 no assistant message``; '' if none."""
        if not self.counts:
            return ""
        parts = [f"{n} {reason}" for reason, n in sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0]))]
        return f"skipped {self.total} unreadable item(s): " + "; ".join(parts)


class LoadResult(list[RunRecord]):
    """The runs that were read (a plain list of :class:`RunRecord`), plus what was skipped and why.

    ``skipped`` maps a reason to how many items were skipped for it; ``examples`` keeps the first messages
    per reason (naming the file and the run or line); ``files`` is the number of files read.
    """

    def __init__(self, runs: list[RunRecord] | None = None, log: SkipLog | None = None, files: int = 0) -> None:
        super().__init__(runs or [])
        log = log or SkipLog()
        self.skipped: dict[str, int] = dict(log.counts)
        self.examples: dict[str, list[str]] = {k: list(v) for k, v in log.examples.items()}
        self.files = files

    def skip_summary(self) -> str:
        """One line for stderr: what was skipped, per reason ('' when nothing was)."""
        log = SkipLog()
        log.counts.update(self.skipped)
        return log.summary()

    def to_dict(self) -> dict:
        return {"runs": len(self), "files": self.files, "skipped": dict(self.skipped), "examples": self.examples}


def records_by_instance(
    objects: list[tuple[str | None, Any]],
    convert: Callable[[Any, str], RunRecord],
    *,
    default_id: str,
    log: SkipLog,
) -> list[RunRecord]:
    """One record per trajectory object of a file (coding agents' formats), named by its ``instance_id``, else by
    its key in an id-keyed file, else by the file (``default_id``, indexed when the file holds several). A
    trajectory ``convert`` cannot read is skipped and counted in ``log``."""
    out = []
    for index, (key, obj) in enumerate(objects):
        rid = obj.get("instance_id") if isinstance(obj, dict) else None
        run_id = (
            str(rid)
            if isinstance(rid, (str, int))
            else (key or (default_id if len(objects) == 1 else f"{default_id}[{index}]"))
        )
        try:
            out.append(convert(obj, run_id))
        except UnreadableRecord as exc:
            log.skip(exc)
    return out
