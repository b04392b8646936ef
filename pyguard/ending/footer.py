"""A run's footer from its events, and what a token total means (one meaning everywhere).

:class:`TokenTotals` / :func:`token_totals`: the sum over the model calls that reported usage, and a flag that says
when some did not (a lower bound, said so); None only when no call reported any (unknown, never 0). :func:`footer`
builds a :class:`~pyguard.events.RunEnd` from the events and a settled outcome; :func:`end_from_events` is the footer
of a run the engine did not finish.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from pyguard.ending.outcome import Settled, settle
from pyguard.events import IterationEvent, RunEnd, events_tokens_partial, sum_tokens

__all__ = ["TokenTotals", "end_from_events", "footer", "token_totals"]


class TokenTotals(NamedTuple):
    """A run's tokens: the sums over the model calls that reported usage (None when none did: unknown, never 0), and
    whether they are a lower bound (some calls reported nothing, or only part)."""

    input: int | None
    output: int | None
    total: int | None
    partial: bool

    @property
    def known(self) -> int:
        """The total as a number to add up (unknown counts 0): for sums over many runs, beside :attr:`partial`."""
        return self.total or 0


def token_totals(events: Sequence[IterationEvent]) -> TokenTotals:
    """The token totals of ``events`` (the total: :attr:`IterationEvent.tokens` summed over those that reported)."""
    known = [e for e in events if e.usage_reported]
    if not known:
        return TokenTotals(None, None, None, False)
    inp = sum(e.input_tokens or 0 for e in known)
    out = sum(e.output_tokens or 0 for e in known)
    return TokenTotals(inp, out, sum_tokens(known), events_tokens_partial(events))


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
) -> RunEnd:
    """The footer of a run from its events: the settled outcome, the counts, the token totals (default:
    :func:`token_totals` of the events) and ``censored`` (default: the last model call still asked for tools)."""
    t = token_totals(events) if tokens is None else tokens
    return RunEnd(
        run_id=run_id,
        outcome=settled.outcome,
        reason=settled.reason,
        answer=answer,
        iterations=len(events),
        tool_calls=sum(len(e.tool_calls) for e in events),
        input_tokens=t.input,
        output_tokens=t.output,
        total_tokens=t.total,
        tokens_partial=t.partial,
        cost=cost,
        wall_ms=wall_ms,
        evidence=evidence or {},
        success_label=success_label,
        censored=(bool(events) and not events[-1].is_final) if censored is None else censored,
    )


def end_from_events(
    run_id: str,
    events: Sequence[IterationEvent],
    *,
    answer: str | None = None,
    error: str | None = None,
    verified: bool | None = None,
    cancelled: bool = False,
    guard_error: str | None = None,
    expired: str | None = None,
    guard_failed: str | None = None,
    wall_ms: float | None = None,
) -> RunEnd:
    """The footer of a run the engine did not finish: an unguarded run, or a guarded one whose engine missed its
    deadline (``guard_failed`` says how): :func:`settle`, then :func:`footer`."""
    settled = settle(
        answer=answer,
        error=error,
        verified=verified,
        cancelled=cancelled,
        guard_error=guard_error,
        expired=expired,
        guard_failed=guard_failed,
    )
    return footer(run_id, events, settled, answer=answer, wall_ms=wall_ms)
