"""The load options applied to runs stored by pyguard (a pyguard trace, Parquet), as the importers apply them.

An importer reads ``--labels`` and ``--terminal-tools`` while it builds a run's footer. Runs pyguard stored already
carry a footer, so the options are applied here, after reading, by the same rules (:func:`apply_options`):

- ``labels``: a run's label comes from the labels when they name it, or when the run has none (as every importer
  does); a live run keeps its guard outcome beside the label (:func:`pyguard.base.ending.verdict` reads both);
- ``terminal_tools``: a run imported from a recording (its footer's ``evidence.imported_from``) has its ending
  decided again by :func:`pyguard.trace.ending.build_end` with these names and its label; a live run's end was seen
  by its guard, so terminal tools do not apply to it.
"""

from __future__ import annotations

from typing import Any

from pyguard.base.events import RunEnd, RunRecord
from pyguard.trace.ending import build_end
from pyguard.trace.labels import Labels

__all__: list[str] = []

_SETTLED_KEYS = ("imported_from", "source", "cut_off", "ended_by_tool")


def apply_options(record: RunRecord, *, labels: Labels | None, terminal_tools: frozenset[str] | None) -> RunRecord:
    """``record`` with ``labels`` and ``terminal_tools`` applied (the same object when neither changes it)."""
    end = record.end
    if end is None or (labels is None and terminal_tools is None):
        return record
    label = end.success_label
    if labels is not None and (record.run_id in labels or label is None):
        label = labels.label(record.run_id)
    imported = end.evidence.get("imported_from")
    if imported is None or not record.events:
        if label == end.success_label:
            return record
        return record.model_copy(update={"end": end.model_copy(update={"success_label": label})})
    return record.model_copy(update={"end": _imported_end(record, end, str(imported), label, terminal_tools)})


def _imported_end(
    record: RunRecord, end: RunEnd, imported: str, label: bool | None, terminal_tools: frozenset[str] | None
) -> RunEnd:
    """The footer of an imported run settled again, as its importer would have with these options."""
    evidence: dict[str, Any] = dict(end.evidence)
    cut_off = evidence.get("cut_off")
    if cut_off == "recording_ends":
        cut_off = None  # the last call decides again, with these terminal tools
    # the importer knew the run finished on its own (mini-swe-agent's "Submitted") when it neither was cut off nor
    # ended by a terminal tool although its last call requested tools
    finished = (
        "cut_off" not in evidence and "ended_by_tool" not in evidence and bool(record.events[-1].tool_calls)
    ) or None
    rebuilt = build_end(
        record.run_id,
        list(record.events),
        label=label,
        imported_from=imported,
        source=str(evidence.get("source", "")),
        terminal_tools=terminal_tools,
        finished=finished,
        cut_off=cut_off,
        answer=None if end.censored else end.answer,
        evidence={k: v for k, v in evidence.items() if k not in _SETTLED_KEYS},
    )
    return end.model_copy(
        update={
            "outcome": rebuilt.outcome,
            "reason": rebuilt.reason,
            "answer": rebuilt.answer,
            "success_label": rebuilt.success_label,
            "censored": rebuilt.censored,
            "evidence": rebuilt.evidence,
        }
    )
