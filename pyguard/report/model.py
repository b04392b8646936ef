"""What the report shows of one run, as plain data: the page's tables, its plots and its embedded JSON all read this.

A run's decisions are the guard's own when its trace recorded them (``source == "recorded"``: what happened); a
recording without decisions is replayed through the policy (``source == "replayed"``: what the policy would have
decided, :func:`pyguard.replay.replay_run`; a reflection cannot change a recording, so replay goes on after it).

Content capture (the switch of :mod:`pyguard.otel.capture`): without it nothing the user, the model or a tool wrote
is kept here (no task, answer, reasons, reflection texts, flag messages, tool arguments or results): only names,
rule ids, actions, counts, tokens, gains and budgets.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from pyguard.base.decisions import Action, Decision
from pyguard.base.events import RunRecord, events_tokens_partial, sum_tokens

__all__: list[str] = []

_CONTENT_KEYS = frozenset({"message", "fingerprints", "variants", "normalised", "actions", "arguments", "text"})
"""Evidence keys that may quote the user, the model or a tool: kept only with content capture."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Thresholds(_Model):
    """The gain thresholds a run was judged against (the policy in its trace header, else the replay's)."""

    earn_threshold: float | None = None
    """A call whose gain reaches it earns budget (``PolicyConfig.earn_threshold``)."""
    low_gain_threshold: float | None = None
    """A call below it counts toward a low-gain streak (``StallConfig.low_gain_threshold``)."""


class CallPoint(_Model):
    """One model call of a run."""

    index: int
    tokens: int | None
    """The call's tokens as reported (None: no usage reported)."""
    tools: list[str]
    """The names of the tools it asked for."""
    gain: float | None
    """The information gain the engine measured for the results that arrived in its request (None: not measured)."""
    budget: int | None
    """The iteration budget in force after it."""
    action: str | None
    """The decision after it: continue, reflect or stop (None: none)."""
    rule: str | None = None
    error: bool = False


class GuardMark(_Model):
    """A reflection or a stop, and its evidence (the flags that fired; their messages only with content capture)."""

    iteration: int
    action: Literal["reflect", "stop"]
    rule: str | None
    outcome: str | None = None
    reason: str | None = None
    reflection: str | None = None
    flags: list[dict[str, Any]] = []
    caps: list[Any] = []


class RunView(_Model):
    run_id: str
    task_type: str | None
    source: Literal["recorded", "replayed", "none"]
    """Where the decisions come from: the trace's guard, a replay through the policy, or nowhere (no calls)."""
    outcome: str | None
    """The footer's outcome (None: the run has no footer)."""
    model_calls: int
    tool_calls: int
    tokens: int | None
    """The tokens of the run's model calls (summed from the calls; the footer's total when no call reported any),
    without the wrap-up call: that is ``wrap_up_tokens``, whatever the footer's total counts."""
    tokens_partial: bool
    wrap_up_tokens: int | None
    thresholds: Thresholds
    calls: list[CallPoint]
    marks: list[GuardMark]
    replay_stop_at: int | None = None
    """For a replayed run: the call after which the policy would stop."""
    answer: str | None = None
    """Only with content capture."""
    answer_source: str | None = None
    """Where the answer came from (``RunEnd.answer_source``: model, wrap_up, salvaged)."""
    task: str | None = None
    """Only with content capture."""
    mode: Literal["observe", "reflect", "enforce"] = "enforce"
    """The recording guard's mode (its trace header's policy): in ``observe`` it acted on no decision, in ``reflect``
    on its reflections only, so a stop mark is what it would have done."""


def _mode(record: RunRecord, source: str) -> Literal["observe", "reflect", "enforce"]:
    mode = (record.start.policy or {}).get("mode") if source == "recorded" else None
    return mode if mode in ("observe", "reflect") else "enforce"


def thresholds_of(policy: dict | None, fallback: Thresholds) -> Thresholds:
    """The thresholds of a trace header's policy, else ``fallback``."""
    if not policy:
        return fallback
    stall = policy.get("stall") or {}
    return Thresholds(
        earn_threshold=policy.get("earn_threshold", fallback.earn_threshold),
        low_gain_threshold=stall.get("low_gain_threshold", fallback.low_gain_threshold),
    )


def _gain(decision: Decision) -> float | None:
    ev = decision.evidence
    if isinstance(ev.get("gain"), (int, float)):
        return float(ev["gain"])
    gains = ev.get("gains")
    if isinstance(gains, list) and gains and isinstance(gains[-1], (int, float)):
        return float(gains[-1])
    return None


def call_gains(record: RunRecord, decisions: list[Decision]) -> dict[int, float]:
    """The gain of the results that arrived in each call's request, by call: the run's own list when its footer
    has one for every call (``evidence["gains"]``, one per call read, whichever moment read it), else from the
    decisions. A call's results judged before the next call (``judge_results_early``: a second decision on the same
    call) are the next call's request; a response judged alone after them read nothing."""
    gains = record.end.evidence.get("gains") if record.end is not None else None
    n = len(record.events)
    if isinstance(gains, list) and len(gains) >= n and all(isinstance(g, (int, float)) for g in gains[:n]):
        return {i + 1: float(g) for i, g in enumerate(gains[:n])}
    out: dict[int, float] = {}
    seen: dict[int, int] = {}
    for d in decisions:
        if d.iteration is None:
            continue
        seen[d.iteration] = seen.get(d.iteration, 0) + 1
        if seen[d.iteration] == 2:  # the call's results, judged before the next call
            target = d.iteration + 1
        elif seen.get(d.iteration - 1, 0) >= 2:  # its request's results were judged already
            continue
        else:
            target = d.iteration
        gain = _gain(d)
        if gain is not None:
            out[target] = gain
    return out


def _clean(value: Any, content: bool) -> Any:
    """Evidence as shown: with content everything; without, only names, rule ids, counts and flags."""
    if isinstance(value, dict):
        return {
            k: _clean(v, content)
            for k, v in value.items()
            if content or (k not in _CONTENT_KEYS and not (isinstance(v, str) and k not in ("rule", "tool", "kind")))
        }
    if isinstance(value, list):
        return [_clean(v, content) for v in value]
    return value


def _mark(decision: Decision, content: bool) -> GuardMark | None:
    if decision.action is Action.CONTINUE or decision.iteration is None:
        return None
    ev = decision.evidence
    return GuardMark(
        iteration=decision.iteration,
        action="reflect" if decision.action is Action.REFLECT else "stop",
        rule=decision.rule,
        outcome=decision.outcome.value if decision.outcome is not None else None,
        reason=decision.reason if content else None,
        reflection=decision.reflection if content else None,
        flags=[_clean(f, content) for f in ev.get("flags", []) if isinstance(f, dict)],
        caps=[_clean(c, content) for c in ev.get("caps", [])],
    )


def run_view(
    record: RunRecord,
    decisions: list[Decision],
    source: Literal["recorded", "replayed", "none"],
    thresholds: Thresholds,
    *,
    content: bool,
    replay_stop_at: int | None = None,
) -> RunView:
    """The report's view of one run, from its record and the decisions after its calls."""
    by_iteration = {d.iteration: d for d in decisions if d.iteration is not None}
    gains = call_gains(record, decisions)
    calls = []
    for event in record.events:
        d = by_iteration.get(event.index)
        calls.append(
            CallPoint(
                index=event.index,
                tokens=event.tokens,
                tools=[c.name for c in event.tool_calls],
                gain=gains.get(event.index),
                budget=d.budget if d is not None else None,
                action=d.action.value if d is not None else None,
                rule=d.rule if d is not None else None,
                error=event.error is not None,
            )
        )
    end = record.end
    calls_tokens = sum_tokens(record.events)
    return RunView(
        run_id=record.run_id,
        task_type=record.task_type,
        source=source,
        outcome=end.outcome.value if end is not None else None,
        model_calls=len(record.events),
        tool_calls=sum(len(e.tool_calls) for e in record.events),
        tokens=calls_tokens if calls_tokens is not None else record.tokens,
        tokens_partial=events_tokens_partial(record.events) if calls_tokens is not None else record.tokens_partial,
        wrap_up_tokens=end.wrap_up_tokens if end is not None else None,
        thresholds=thresholds_of(record.start.policy, thresholds),
        calls=calls,
        marks=[m for m in (_mark(d, content) for d in decisions) if m is not None],
        replay_stop_at=replay_stop_at,
        answer=end.answer if content and end is not None else None,
        answer_source=end.answer_source if end is not None else None,
        task=record.start.task if content else None,
        mode=_mode(record, source),
    )
