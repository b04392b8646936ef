"""A run's footer from its events, and what a token total means (one meaning everywhere).

:class:`TokenTotals` / :func:`token_totals`: the sum over the model calls that reported usage, and a flag that says
when some did not (a lower bound, said so); None only when no call reported any (unknown, never 0). :func:`footer`
builds a :class:`~pyguard.base.events.RunEnd` from the events and a settled outcome; :func:`end_from_events` is the footer
of a run the engine did not finish.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from pyguard.base.ending.causes import Causes
from pyguard.base.ending.outcome import Settled, settle
from pyguard.base.events import IterationEvent, RunEnd, events_tokens_partial, sum_tokens

__all__: list[str] = []


class TokenTotals(NamedTuple):
    """A run's tokens: the sums over the model calls that reported usage (None when none did: unknown, never 0), and
    whether they are a lower bound (some calls reported nothing, or only part)."""

    input: int | None
    output: int | None
    total: int | None
    partial: bool

    def plus(self, other: TokenTotals) -> TokenTotals:
        """The totals of two runs together: :func:`tree_totals` of both."""
        return tree_totals([self, other])


def token_totals(events: Sequence[IterationEvent]) -> TokenTotals:
    """The token totals of ``events`` (the total: :attr:`IterationEvent.tokens` summed over those that reported)."""
    known = [e for e in events if e.usage_reported]
    if not known:
        return TokenTotals(None, None, None, False)
    inp = sum(e.input_tokens or 0 for e in known)
    out = sum(e.output_tokens or 0 for e in known)
    return TokenTotals(inp, out, sum_tokens(known), events_tokens_partial(events))


def tree_totals(totals: Sequence[TokenTotals]) -> TokenTotals:
    """The token totals of many runs together (a run tree, a run set): the known sums added; partial when any run's
    are, or when some runs' tokens are unknown while others' are known (theirs are missing from the sum)."""
    known = [t for t in totals if t.total is not None]
    partial = any(t.partial for t in totals) or (bool(known) and len(known) < len(totals))
    if not known:
        return TokenTotals(None, None, None, partial)

    def add(values: list[int | None]) -> int | None:
        present = [v for v in values if v is not None]
        return sum(present) if present else None

    return TokenTotals(
        add([t.input for t in known]), add([t.output for t in known]), add([t.total for t in known]), partial
    )


@dataclass(frozen=True, slots=True)
class EndNotes:
    """What the driver of a live run knows of its end beside the causes and the events (the guarded run gives them to
    the engine's ``RunSession.finish`` or to :func:`end_from_events`; :func:`footer` writes them, once)."""

    tokens: TokenTotals | None = None
    """The run's own model calls' tokens (default: the footer's writer counts them)."""
    answer_source: Literal["model", "wrap_up", "salvaged", "stop_message"] | None = None
    wrap_up_tokens: TokenTotals | None = None
    """The wrap-up call's tokens, when one was made and reported usage."""
    tool_calls_executed: int | None = None
    evidence: Mapping[str, Any] = field(default_factory=dict)
    """Added to the footer's evidence (an observed stop, the wrap-up's record)."""


_NO_NOTES = EndNotes()


def footer(
    run_id: str,
    events: Sequence[IterationEvent],
    settled: Settled,
    *,
    answer: str | None = None,
    tokens: TokenTotals | None = None,
    censored: bool | None = None,
    wall_ms: float | None = None,
    cost: float | None = None,
    evidence: dict[str, Any] | None = None,
    success_label: bool | None = None,
    iterations: int | None = None,
    tool_calls: int | None = None,
    notes: EndNotes = _NO_NOTES,
) -> RunEnd:
    """The footer of a run from its events: the settled outcome, the counts (default: of the events), the token
    totals (``notes.tokens``, else ``tokens``, else :func:`token_totals` of the events) and ``censored`` (default: the
    last model call still asked for tools); ``notes`` (:class:`EndNotes`) add what the run's driver knows."""
    t = notes.tokens or (token_totals(events) if tokens is None else tokens)
    return RunEnd(
        run_id=run_id,
        outcome=settled.outcome,
        reason=settled.reason,
        answer=answer,
        iterations=len(events) if iterations is None else iterations,
        tool_calls=sum(len(e.tool_calls) for e in events) if tool_calls is None else tool_calls,
        input_tokens=t.input,
        output_tokens=t.output,
        total_tokens=t.total,
        tokens_partial=t.partial,
        cost=cost,
        wall_ms=wall_ms,
        evidence={**(evidence or {}), **notes.evidence},
        success_label=success_label,
        censored=(bool(events) and not events[-1].is_final) if censored is None else censored,
        answer_source=notes.answer_source if answer is not None else None,
        wrap_up_tokens=None if notes.wrap_up_tokens is None else notes.wrap_up_tokens.total,
        tool_calls_executed=notes.tool_calls_executed,
    )


def end_from_events(
    run_id: str,
    events: Sequence[IterationEvent],
    causes: Causes,
    *,
    wall_ms: float | None = None,
    notes: EndNotes = _NO_NOTES,
) -> RunEnd:
    """The footer of a run the engine did not finish: an unguarded run, or a guarded one whose engine missed its
    deadline (``causes.engine_gave_up`` says how): :func:`settle`, then :func:`footer`."""
    return footer(run_id, events, settle(causes), answer=causes.answer, wall_ms=wall_ms, notes=notes)
