"""The result of one guarded run: its outcome and the trace that shows why.

:class:`RunResult` is what :class:`pyguard.guard.Guard` returns and what the pytest plugin's assertions read.
It can also be built from a recorded run (``RunResult.from_record``), so the same assertions work offline.
"""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, ConfigDict

from pyguard.decisions import Decision
from pyguard.events import IterationEvent, Outcome, RunEnd, RunRecord

__all__ = ["RunResult", "mark_partial_usage", "usage_totals"]


class RunResult(BaseModel):
    """One run's answer (or salvaged answer), its one outcome, its counts, and its full trace."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    record: RunRecord
    """The whole trace: header, every iteration event, footer (always present on a result)."""
    decisions: tuple[Decision, ...] = ()
    """The guard's decision after each iteration (empty for an unguarded run)."""
    gains: tuple[float, ...] = ()
    """Information gain per iteration, as the engine estimated it."""
    trace_path: str | None = None
    """Where the JSONL trace was written, if it was."""
    children: tuple[RunResult, ...] = ()
    """The child runs (sub-agent invocations of a supervisor or workflow), in the order they started: see
    :mod:`pyguard.nested`. Their spend is charged to this run: :meth:`tree_model_calls`, :meth:`tree_total_tokens`."""

    @classmethod
    def from_record(cls, record: RunRecord, **kwargs) -> RunResult:
        if record.end is None:
            from pyguard.errors import InputError

            raise InputError(f"run {record.run_id!r} has no run_end footer: it is incomplete and has no outcome")
        return cls(record=record, **kwargs)

    @property
    def end(self) -> RunEnd:
        assert self.record.end is not None
        return self.record.end

    @property
    def run_id(self) -> str:
        return self.record.run_id

    @property
    def task_type(self) -> str | None:
        return self.record.task_type

    @property
    def outcome(self) -> Outcome:
        return self.end.outcome

    @property
    def succeeded(self) -> bool:
        return self.end.outcome is Outcome.SUCCEEDED

    @property
    def answer(self) -> str | None:
        return self.end.answer

    @property
    def reason(self) -> str:
        return self.end.reason

    @property
    def evidence(self) -> dict:
        return self.end.evidence

    @property
    def iterations(self) -> int:
        return self.end.iterations or len(self.record.events)

    @property
    def model_calls(self) -> int:
        return len(self.record.events)

    @property
    def tool_calls(self) -> int:
        return self.end.tool_calls or sum(len(e.tool_calls) for e in self.record.events)

    @property
    def tokens_partial(self) -> bool:
        """True when some model calls reported no usage: :attr:`total_tokens` then counts only the calls that did."""
        if self.end.tokens_partial:
            return True
        reported = [e.total_tokens is not None or e.input_tokens is not None for e in self.record.events]
        return any(reported) and not all(reported)

    @property
    def total_tokens(self) -> int | None:
        """Tokens of the run as reported; a lower bound when :attr:`tokens_partial` (some calls reported no usage)."""
        if self.end.total_tokens is not None:
            return self.end.total_tokens
        totals = [e.total_tokens for e in self.record.events]
        return None if not totals or any(t is None for t in totals) else sum(totals)  # type: ignore[misc]

    def walk(self) -> list[RunResult]:
        """This run and every descendant, depth first."""
        out = [self]
        for child in self.children:
            out.extend(child.walk())
        return out

    @property
    def tree_model_calls(self) -> int:
        """Model calls of this run and all its descendants. A workflow's own iterations (``agent_style`` "workflow":
        one per sub-agent invocation, see :mod:`pyguard.nested`) are steps, not model calls: they count 0."""
        return sum(r.model_calls for r in self.walk() if r.record.start.agent_style != "workflow")

    @property
    def tree_total_tokens(self) -> int:
        """Tokens of this run and all its descendants (runs that reported none count 0)."""
        return sum(r.total_tokens or 0 for r in self.walk())

    @property
    def reflections(self) -> list[int]:
        """Iterations after which the guard injected a reflection."""
        return [d.iteration for d in self.decisions if d.action.value == "reflect" and d.iteration is not None]

    def action_counts(self) -> Counter[str]:
        """How often each exact action (tool name + raw arguments) was requested."""
        return Counter(f"{c.name}({c.arguments})" for e in self.record.events for c in e.tool_calls)

    def summary(self, max_lines: int = 12) -> str:
        """A few lines for humans: outcome, counts, gains, the most repeated actions."""
        lines = [
            f"run {self.run_id}: outcome={self.outcome.value} reason={self.reason or '-'}",
            f"  model calls={self.model_calls} tool calls={self.tool_calls} total tokens={self.total_tokens}"
            + (" (partial: some model calls reported no usage)" if self.tokens_partial else ""),
        ]
        if self.gains:
            lines.append(
                "  gains: " + " ".join(f"{g:.2f}" for g in self.gains[:40]) + (" ..." if len(self.gains) > 40 else "")
            )
        if self.reflections:
            lines.append(f"  reflections after iterations: {self.reflections}")
        repeated = [(a, n) for a, n in self.action_counts().most_common(5) if n > 1]
        for action, n in repeated:
            lines.append(f"  repeated {n}x: {action[:160]}")
        if self.answer:
            lines.append(f"  answer: {self.answer[:200]!r}")
        return "\n".join(lines[:max_lines])


def usage_totals(events: list[IterationEvent]) -> tuple[int | None, int | None, int | None, bool]:
    """(input, output, total, partial): sums over the calls that reported usage; partial when some did not."""
    known = [
        e for e in events if e.total_tokens is not None or e.input_tokens is not None or e.output_tokens is not None
    ]
    if not known:
        return None, None, None, False
    inp = sum(e.input_tokens or 0 for e in known)
    out = sum(e.output_tokens or 0 for e in known)
    tot = sum(
        e.total_tokens if e.total_tokens is not None else (e.input_tokens or 0) + (e.output_tokens or 0) for e in known
    )
    return inp, out, tot, len(known) < len(events)


def mark_partial_usage(end: RunEnd, events: list[IterationEvent]) -> RunEnd:
    """A footer whose token totals cover only some model calls says so (``tokens_partial``): never complete-looking."""
    if end.tokens_partial or not events:
        return end
    reported = [e.total_tokens is not None or e.input_tokens is not None for e in events]
    if any(reported) and not all(reported):
        return end.model_copy(update={"tokens_partial": True})
    return end
