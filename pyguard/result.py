"""The result of one guarded run: its outcome and the trace that shows why.

:class:`RunResult` is what :class:`pyguard.live.guard.Guard` returns and what the pytest plugin's assertions read.
It can also be built from a recorded run (``RunResult.from_record``), so the same assertions work offline.
"""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, ConfigDict

from pyguard.base.decisions import Decision
from pyguard.base.ending import TokenTotals, token_totals, tree_totals
from pyguard.base.errors import InputError
from pyguard.base.events import Outcome, RunEnd, RunRecord
from pyguard.escalation import EscalationHandle

__all__: list[str] = []


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
    trace_error: str | None = None
    """Why the trace at :attr:`trace_path` is incomplete (the first record that could not be written: a full disk, a
    lost permission), or None. The run itself is not affected: its decisions never depend on its trace."""
    escalation: EscalationHandle | None = None
    """For a run that ended ``escalated``: the handle to resume it from (:meth:`pyguard.live.guard.Guard.resume`)."""
    children: tuple[RunResult, ...] = ()
    """The child runs (sub-agent invocations of a supervisor or workflow), in the order they started: see
    :mod:`pyguard.live.nested`. Their spend is charged to this run: :meth:`tree_model_calls`, :meth:`tree_total_tokens`."""

    @classmethod
    def from_record(cls, record: RunRecord, **kwargs) -> RunResult:
        if record.end is None:
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
    def tool_calls_executed(self) -> int | None:
        """Tools that actually ran, beside :attr:`tool_calls` (requested): None where the agent's loop did not report
        them (wire ``run.after_tool_execution()`` into your AiServices builder; pyguard's own agents always do)."""
        return self.end.tool_calls_executed

    @property
    def tool_calls_blocked(self) -> dict[str, int]:
        """The calls a per-tool limit with ``exit = "continue"`` kept from running, by tool (``[caps.tool_limits]``;
        not among :attr:`tool_calls_executed`; the model read why instead): the footer's
        ``evidence["tool_limits"]["blocked"]``."""
        limits = self.end.evidence.get("tool_limits") or {}
        return dict(limits.get("blocked") or {})

    @property
    def conversation_id(self) -> str | None:
        """The conversation this run was a turn of (an attached agent's chat-memory id, or its thread's): the
        footer's ``evidence["conversation"]["id"]``; None for a run outside a conversation."""
        conversation = self.end.evidence.get("conversation") or {}
        value = conversation.get("id") if isinstance(conversation, dict) else None
        return None if value is None else str(value)

    @property
    def answer_source(self) -> str | None:
        """Where :attr:`answer` came from: ``"model"`` (its final answer), ``"wrap_up"`` (one last model call with no
        tools after a stop: ``Guard(on_stop="answer")``), ``"salvaged"`` (the last text before a stop),
        ``"stop_message"`` (the stop's message, no model call: ``on_stop="end"``), or None."""
        return self.end.answer_source

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
        """True when some model calls reported no usage (or only part of it): :attr:`total_tokens` then counts only
        what was reported (:attr:`pyguard.base.events.RunRecord.tokens_partial`)."""
        return self.record.tokens_partial

    @property
    def total_tokens(self) -> int | None:
        """Tokens of the run (:attr:`pyguard.base.events.RunRecord.tokens`): None when no call reported usage (unknown,
        never 0); a lower bound when :attr:`tokens_partial`."""
        return self.record.tokens

    def walk(self) -> list[RunResult]:
        """This run and every descendant, depth first."""
        out = [self]
        for child in self.children:
            out.extend(child.walk())
        return out

    @property
    def tree_model_calls(self) -> int:
        """Model calls of this run and all its descendants. A workflow's own iterations (``agent_style`` "workflow":
        one per sub-agent invocation, see :mod:`pyguard.live.nested`) are steps, not model calls: they count 0."""
        return sum(r.model_calls for r in self.walk() if r.record.start.agent_style != "workflow")

    @property
    def tree_tokens(self) -> TokenTotals:
        """Tokens of this run and all its descendants (:func:`pyguard.base.ending.tree_totals`): the known sum, partial when
        some run (or call) reported none. A workflow's own steps are not model calls: they count nothing."""
        return tree_totals(
            [token_totals(r.record.events) for r in self.walk() if r.record.start.agent_style != "workflow"]
        )

    @property
    def tree_total_tokens(self) -> int | None:
        """Tokens of this run and all its descendants: :attr:`tree_tokens`' total (None when no run reported any; a
        lower bound when :attr:`tree_tokens` is partial)."""
        return self.tree_tokens.total

    @property
    def reflections(self) -> list[int]:
        """Iterations after which the guard decided a reflection: injected, except in observe mode (then only
        recorded: :attr:`mode`)."""
        return [d.iteration for d in self.decisions if d.action.value == "reflect" and d.iteration is not None]

    @property
    def mode(self) -> str:
        """The guard's mode for this run as its trace header's policy records it (``enforce`` when not recorded)."""
        mode = (self.record.start.policy or {}).get("mode")
        return mode if mode in ("observe", "reflect") else "enforce"

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
        observing = self.mode == "observe"
        if self.reflections:
            sent = "reflections the guard would have sent (observe mode)" if observing else "reflections"
            lines.append(f"  {sent} after iterations: {self.reflections}")
        stop = self.end.evidence.get("observed_stop")
        if isinstance(stop, dict):
            lines.append(
                f"  would have stopped after call {stop.get('iteration')} ({stop.get('outcome')}, rule "
                f"{stop.get('rule')}): {self.mode} mode, the run went on"
            )
        repeated = [(a, n) for a, n in self.action_counts().most_common(5) if n > 1]
        for action, n in repeated:
            lines.append(f"  repeated {n}x: {action[:160]}")
        if self.answer:
            lines.append(f"  answer: {self.answer[:200]!r}")
        return "\n".join(lines[:max_lines])
