"""Assertions about guarded runs that read like the questions people ask.

Each helper takes a :class:`pyguard.result.RunResult` (or a finished :class:`pyguard.base.events.RunRecord`) and raises
an ``AssertionError`` whose message holds the run's trace summary: its outcome and reason, the model calls with the
tools each asked for, the gain series, the guard's decisions and the repeated action fingerprints. So a failing test
says *why* the agent did not converge, without opening the trace.

    from pyguard.testing import assert_succeeded, assert_never_stalled, assert_max_repeats

    assert_succeeded(result, within=8)
    assert_never_stalled(result)
    assert_max_repeats(result, 2)
    assert_tokens_under(result, 5000)
    assert_outcome(result, "expired")

Nothing here imports jpype: the helpers work on recorded runs as well as live ones.
"""

from __future__ import annotations

from collections import Counter

from pyguard.base.decisions import Action
from pyguard.base.errors import InputError
from pyguard.base.events import Outcome, RunRecord, ToolCall
from pyguard.engine.fingerprint import fingerprint
from pyguard.result import RunResult

__all__: list[str] = []

_MAX_ITERATION_LINES = 16


def action_fingerprint(call: ToolCall, *, normalised: bool = False) -> str:
    """The identity of one action, as the guard's engine sees it: the tool name and its canonical arguments.

    Two calls with the same arguments written differently (key order, spaces, ``1.0`` vs ``1``) are the same
    action. With ``normalised=True`` trivial rewrites (``orderId`` vs ``order_id``, ``SO-12345`` vs ``12345``) are
    folded too. See :mod:`pyguard.engine.fingerprint`.
    """
    fp = fingerprint(call.name, call.arguments or "")
    return fp.normalised if normalised else fp.canonical


def repeated_actions(
    result: RunResult | RunRecord, more_than: int = 1, *, normalised: bool = False
) -> list[tuple[str, int]]:
    """The action fingerprints requested more than ``more_than`` times, most repeated first."""
    record = _as_result(result).record
    counts = Counter(action_fingerprint(c, normalised=normalised) for e in record.events for c in e.tool_calls)
    return [(fp, n) for fp, n in counts.most_common() if n > more_than]


def describe_run(result: RunResult | RunRecord, *, normalised: bool = False) -> str:
    """The trace summary the assertions put in their messages (also handy in a test's own messages); its repeated
    fingerprints counted as :func:`repeated_actions` counts them with the same ``normalised``."""
    result = _as_result(result)
    end = result.end
    lines = [
        f"run {result.run_id} (task type {result.task_type or '-'}): outcome={end.outcome.value}"
        + (f" reason={end.reason!r}" if end.reason else ""),
        f"  iterations={result.iterations} model calls={result.model_calls} tool calls={result.tool_calls}"
        f" total tokens={result.total_tokens}",
    ]
    decisions = {d.iteration: d for d in result.decisions if d.iteration is not None}
    events = result.record.events
    shown = events if len(events) <= _MAX_ITERATION_LINES else events[:6] + events[-(_MAX_ITERATION_LINES - 6) :]
    for i, event in enumerate(shown):
        if len(events) > _MAX_ITERATION_LINES and i == 6:
            lines.append(f"  ... {len(events) - _MAX_ITERATION_LINES} iterations not shown ...")
        # the gain of the results this call asked for: the engine measures them when they arrive, with the next
        # call (gains[k] is call k's results; gains[0] the task itself), so an answer has none
        gain = result.gains[event.index] if event.tool_calls and event.index < len(result.gains) else None
        if event.error:
            did = f"error: {event.error[:120]}"
        elif event.tool_calls:
            did = ", ".join(action_fingerprint(c)[:100] for c in event.tool_calls)
        else:
            did = f"answered {(event.text or '')[:100]!r}"
        decision = decisions.get(event.index)
        verdict = ""
        if decision is not None and decision.action is not Action.CONTINUE:
            verdict = f"  -> {decision.action.value}" + (f" [{decision.rule}]" if decision.rule else "")
        gain_text = f" gain={gain:.2f}" if gain is not None else ""
        lines.append(f"  #{event.index}{gain_text}: {did}{verdict}")
    if result.gains:
        lines.append(
            "  gains: " + " ".join(f"{g:.2f}" for g in result.gains[:40]) + (" ..." if len(result.gains) > 40 else "")
        )
    repeats = repeated_actions(result, normalised=normalised)
    label = "repeated fingerprints (normalised)" if normalised else "repeated fingerprints"
    if repeats:
        lines.append(f"  {label}: " + "; ".join(f"{fp[:120]} x{n}" for fp, n in repeats[:5]))
    else:
        lines.append(f"  {label}: none")
    if end.answer:
        lines.append(f"  answer: {end.answer[:200]!r}")
    if result.trace_path:
        lines.append(f"  trace: {result.trace_path}")
    return "\n".join(lines)


def assert_succeeded(result: RunResult | RunRecord, within: int | None = None) -> None:
    """The run's outcome is SUCCEEDED and, if ``within`` is given, it took at most ``within`` iterations."""
    __tracebackhide__ = True
    result = _as_result(result)
    if within is not None:
        _check_count("within", within)
    if result.outcome is not Outcome.SUCCEEDED:
        _fail(f"expected the run to succeed, but its outcome is {result.outcome.value!r}", result)
    if within is not None and result.iterations > within:
        _fail(f"expected the run to succeed within {within} iterations, it took {result.iterations}", result)


def assert_outcome(result: RunResult | RunRecord, outcome: Outcome | str) -> None:
    """The run ended with exactly this outcome (an :class:`Outcome` or its value, e.g. ``"expired"``)."""
    __tracebackhide__ = True
    result = _as_result(result)
    expected = _parse_outcome(outcome)
    if result.outcome is not expected:
        _fail(f"expected outcome {expected.value!r}, got {result.outcome.value!r}", result)


def assert_never_stalled(result: RunResult | RunRecord, *, allow_reflections: bool = False) -> None:
    """The run was never stopped as stalled and (unless ``allow_reflections``) the guard never had to reflect.

    A reflection is the guard's answer to a stall it saw (repeats without gain, a cycle, a streak of low gains), so
    by default a run the guard nudged back on track also counts as having stalled.
    """
    __tracebackhide__ = True
    result = _as_result(result)
    if result.outcome is Outcome.STALLED:
        _fail("expected the run never to stall, but it was stopped as stalled", result)
    if not allow_reflections and result.reflections:
        rules = sorted({d.rule or "?" for d in result.decisions if d.action is Action.REFLECT})
        _fail(
            f"expected the run never to stall, but the guard injected a reflection after iterations "
            f"{result.reflections} (rules: {', '.join(rules)})",
            result,
        )


def assert_max_repeats(result: RunResult | RunRecord, k: int, *, normalised: bool = False) -> None:
    """No action (tool name + canonical arguments) was requested more than ``k`` times.

    ``normalised=True`` also counts trivially rewritten arguments as the same action (see :func:`action_fingerprint`).
    """
    __tracebackhide__ = True
    result = _as_result(result)
    _check_count("k", k)
    repeats = repeated_actions(result, more_than=k, normalised=normalised)
    if repeats:
        worst = "; ".join(f"{fp[:120]} x{n}" for fp, n in repeats[:5])
        _fail(f"expected no action repeated more than {k} times, but: {worst}", result, normalised=normalised)


def assert_tokens_under(result: RunResult | RunRecord, limit: int) -> None:
    """The run used fewer than ``limit`` tokens in all (fails when the provider reported no usage)."""
    __tracebackhide__ = True
    result = _as_result(result)
    _check_count("limit", limit)
    total = result.total_tokens
    if total is None:
        _fail(
            f"expected fewer than {limit} tokens, but the run's token usage is unknown (the model reported none)",
            result,
        )
    if total >= limit:  # type: ignore[operator]
        _fail(f"expected fewer than {limit} tokens, the run used {total}", result)


def assert_iterations_at_most(result: RunResult | RunRecord, n: int) -> None:
    """The run made at most ``n`` model calls, whatever its outcome."""
    __tracebackhide__ = True
    result = _as_result(result)
    _check_count("n", n)
    if result.iterations > n:
        _fail(f"expected at most {n} iterations, the run took {result.iterations}", result)


def assert_tool_called(
    result: RunResult | RunRecord, name: str, *, times: int | None = None, at_least: int = 1
) -> None:
    """The tool ``name`` was requested exactly ``times`` times, or at least ``at_least`` times."""
    __tracebackhide__ = True
    result = _as_result(result)
    count = sum(1 for e in result.record.events for c in e.tool_calls if c.name == name)
    if times is not None:
        if count != times:
            _fail(f"expected tool {name!r} to be called {times} times, it was called {count}", result)
    elif count < at_least:
        _fail(f"expected tool {name!r} to be called at least {at_least} times, it was called {count}", result)


def assert_answer_contains(result: RunResult | RunRecord, text: str, *, case_sensitive: bool = False) -> None:
    """The run's (final or salvaged) answer contains ``text``."""
    __tracebackhide__ = True
    result = _as_result(result)
    answer = result.answer or ""
    found = text in answer if case_sensitive else text.lower() in answer.lower()
    if not found:
        _fail(f"expected the answer to contain {text!r}, the answer is {answer[:300]!r}", result)


def _as_result(result: RunResult | RunRecord) -> RunResult:
    if isinstance(result, RunResult):
        return result
    if isinstance(result, RunRecord):
        return RunResult.from_record(result)
    raise InputError(
        f"expected a pyguard RunResult or RunRecord, got {type(result).__name__} ({result!r:.80}): "
        "pass the result of a guarded run (run.result or guard.run_scenario(...))"
    )


def _parse_outcome(outcome: Outcome | str) -> Outcome:
    if isinstance(outcome, Outcome):
        return outcome
    try:
        return Outcome(str(outcome).lower())
    except ValueError:
        choices = ", ".join(o.value for o in Outcome)
        raise InputError(f"unknown outcome {outcome!r}: use one of {choices}") from None


def _check_count(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"{name}={value!r} must be a non-negative integer")


def _fail(headline: str, result: RunResult, *, normalised: bool = False) -> None:
    __tracebackhide__ = True
    raise AssertionError(f"{headline}\n{describe_run(result, normalised=normalised)}")
