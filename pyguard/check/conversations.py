"""``pyguard check --by-conversation``: recorded runs grouped by the conversation they were turns of (an attached agent's
chat-memory id, or its thread: the footer's ``evidence["conversation"]``, see :mod:`pyguard.live.conversations`), each
with what it spent and whether its ``[conversation]`` budget stopped a turn. Runs outside any conversation are
counted apart, not dropped silently."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field
from rich.console import Console
from rich.table import Table

from pyguard.base.events import RunRecord

__all__: list[str] = []


class ConversationFigures(BaseModel):
    """One conversation's runs in the recorded set."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    conversation: str
    runs: int = Field(ge=0)
    model_calls: int = Field(ge=0)
    tokens: int | None = None
    """The runs' tokens together; None when none reported usage."""
    outcomes: dict[str, int] = Field(default_factory=dict)
    stopped_by: str | None = None
    """The rule of the conversation budget that stopped a turn (``conversation_budget:model_calls``, ...), or None."""
    stopped_run: str | None = None
    """The run it stopped first."""


class ConversationReport(BaseModel):
    """Every conversation, in the order its first run appears, and the runs that belonged to none."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    conversations: list[ConversationFigures] = Field(default_factory=list)
    outside: int = Field(default=0, ge=0)
    """Runs whose footer names no conversation (or runs with no footer)."""


def by_conversation(records: Iterable[RunRecord]) -> ConversationReport:
    """Group ``records`` by their footer's conversation id (see the module docstring)."""
    rows: dict[str, dict] = {}
    outside = 0
    for record in records:
        end = record.end
        conversation = end.evidence.get("conversation") if end is not None else None
        cid = conversation.get("id") if isinstance(conversation, dict) else None
        if end is None or cid is None:
            outside += 1
            continue
        row = rows.setdefault(
            str(cid),
            {"runs": 0, "model_calls": 0, "tokens": None, "outcomes": {}, "stopped_by": None, "stopped_run": None},
        )
        row["runs"] += 1
        row["model_calls"] += len(record.events)
        tokens = record.tokens
        if tokens is not None:
            row["tokens"] = (row["tokens"] or 0) + tokens
        row["outcomes"][end.outcome.value] = row["outcomes"].get(end.outcome.value, 0) + 1
        stopped = conversation.get("stopped_by") if isinstance(conversation, dict) else None
        if stopped and row["stopped_by"] is None:
            row["stopped_by"], row["stopped_run"] = str(stopped), record.run_id
    figures = [ConversationFigures(conversation=cid, **row) for cid, row in rows.items()]
    return ConversationReport(conversations=figures, outside=outside)


def render_conversations(report: ConversationReport, console: Console) -> None:
    """A table of the conversations (one row each), and a line for the runs outside any."""
    table = Table(title="per conversation", title_justify="left")
    for name in ("conversation", "runs", "model calls", "tokens", "outcomes", "budget stop"):
        table.add_column(name, justify="right" if name in ("runs", "model calls", "tokens") else "left")
    for c in report.conversations:
        outcomes = ", ".join(f"{n} {o}" for o, n in sorted(c.outcomes.items()))
        tokens = "n/a" if c.tokens is None else str(c.tokens)
        table.add_row(c.conversation, str(c.runs), str(c.model_calls), tokens, outcomes, "yes" if c.stopped_by else "-")
    console.print(table)
    for c in report.conversations:
        if c.stopped_by:
            console.print(f"conversation {c.conversation!r}: its budget stopped run {c.stopped_run} ({c.stopped_by})")
    if report.outside:
        console.print(f"{report.outside} run(s) outside any conversation (not an attached agent's turn)")
