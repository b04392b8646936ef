"""Synthetic guarded runs for the plugin's tests (no JVM): a RunResult from a list of steps."""

from __future__ import annotations

from pyguard.base.decisions import Action, Decision
from pyguard.base.events import IterationEvent, Outcome, RunEnd, RunRecord, RunStart, ToolCall
from pyguard.result import RunResult

__all__ = ["make_result", "MAKE_RESULT_SOURCE"]


def make_result(
    steps: list[list[tuple[str, str]] | str],
    *,
    outcome: str = "succeeded",
    reason: str = "",
    gains: list[float] | None = None,
    reflect_after: tuple[int, ...] = (),
    tokens_per_call: int | None = 100,
    run_id: str = "r1",
    task_type: str = "lookup",
) -> RunResult:
    """Each step is a model call: a list of (tool, arguments) it requested, or a str (its final answer)."""
    events = []
    for i, step in enumerate(steps, start=1):
        calls = (
            ()
            if isinstance(step, str)
            else tuple(ToolCall(id=f"c{i}_{j}", name=n, arguments=a) for j, (n, a) in enumerate(step))
        )
        events.append(
            IterationEvent(
                run_id=run_id,
                index=i,
                tool_calls=calls,
                text=step if isinstance(step, str) else None,
                total_tokens=tokens_per_call,
            )
        )
    decisions = tuple(
        Decision(action=Action.REFLECT, rule="repeat_no_gain", reason="repeats", reflection="try else", iteration=i)
        if i in reflect_after
        else Decision.proceed(iteration=i)
        for i in range(1, len(events) + 1)
    )
    answer = steps[-1] if steps and isinstance(steps[-1], str) else None
    end = RunEnd(run_id=run_id, outcome=Outcome(outcome), reason=reason, answer=answer, iterations=len(events))
    record = RunRecord(start=RunStart(run_id=run_id, task_type=task_type), events=events, end=end)
    return RunResult(record=record, decisions=decisions, gains=tuple(gains or ()))


MAKE_RESULT_SOURCE = open(__file__, encoding="utf-8").read()
"""This module's source, to drop into a pytester test folder."""
