"""Offline replay: feed recorded runs through a policy and report where it would stop and what that saves.

    from pyguard.replay import replay_runs
    report = replay_runs(load_runs("runs/"), PolicyConfig())     # -> ReplayReport
    report.to_dict()   # {"runs": [{"id", "success", "iterations", "stop_at", ...}], "summary": {...}}

Semantics. Every recorded iteration is given to a fresh engine session in order. A STOP after iteration i
gives ``stop_at = i``: the run would have made i model calls, so the tool calls and tokens of iterations
i+1.. are saved. A recording cannot show what a reflection would have changed, so a REFLECT is noted in
``reflect_at`` and replay goes on as if the guard had said "continue". The engine's clock follows the
recorded timestamps (``timestamp_ms``, else the sum of ``latency_ms``), so time rules see recorded time.
With ``judge_results_early`` the replay models the live guard's two moments per call: the response (``observe``),
then, before the next call, the call's tool results as the next recorded request shows them (``observe_results``);
a stop at either is ``stop_at = i``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from pyguard.base.decisions import Action, Decision
from pyguard.base.ending import Causes, Settled, footer, settle, token_totals, verdict
from pyguard.base.events import UNTYPED, IterationEvent, Outcome, RunEnd, RunRecord
from pyguard.engine import Policy, PolicyConfig
from pyguard.engine.paired import judged_before_next
from pyguard.engine.stop import with_recorded_stop
from pyguard.engine.tool_limit_replay import replayed_events

__all__: list[str] = []

REFLECTION_NOTE = (
    "A recording cannot show what a reflection would have changed: replay counts a reflection as 'continue'"
    " and goes on with the recorded iterations."
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReplayRun(_Model):
    """One recorded run replayed through the policy. Its JSON form has exactly the documented keys."""

    id: str
    task_type: str | None = None
    """The run's task type (None when the recording has none)."""
    success: bool | None
    """Whether the recorded run succeeded: its label, else a live trace's outcome; None when unknown
    (an unlabelled recording, a cancelled run, a run with no footer)."""
    iterations: int
    """Model calls recorded."""
    stop_at: int | None
    """The 1-based iteration after which the guard stops; None if it never stops."""
    reason: str | None
    """Why it stops (None if it never stops)."""
    reflect_at: list[int]
    """Iterations after which it would inject a reflection (counted as continue)."""
    tool_calls: int
    tool_calls_saved: int
    tokens: int | None
    """Tokens recorded (:class:`pyguard.base.ending.TokenTotals`): the sum over the calls that reported usage; None when
    none did."""
    tokens_partial: bool = False
    """True when some calls reported no usage, or only part of it: ``tokens`` is then a lower bound, and the summary
    leaves the run out of its token figures (a share of a lower bound means nothing)."""
    tokens_saved: int | None
    rule: str | None = Field(default=None, exclude=True)
    """The rule that stopped it (not in the JSON; the reason says it in words)."""
    outcome: Outcome | None = Field(default=None, exclude=True)
    """The outcome the stop would give (not in the JSON)."""
    complete: bool = Field(default=True, exclude=True)
    """False when the recorded run had no footer."""
    censored: bool = Field(default=False, exclude=True)
    """True when the recording was cut off while the model still requested tools."""
    end: RunEnd | None = Field(default=None, exclude=True)
    """The footer of the run as guarded by this policy (not in the JSON): when it stops, the engine's outcome
    and reason with the recording's counts up to ``stop_at`` (``evidence["replayed"]`` is True, the label is
    dropped: nobody knows how the cut run would have ended); otherwise the recorded footer (None if none)."""
    decisions: list[Decision] = Field(default_factory=list, exclude=True)
    """The engine's decision after each replayed iteration, up to the stop (not in the JSON)."""
    tool_calls_blocked: dict[str, int] = Field(default_factory=dict, exclude=True)
    """Calls a per-tool ``continue`` limit of the policy would have blocked, by tool (not in the JSON): replayed as not
    run (:mod:`pyguard.engine.tool_limit_replay`)."""


class ReplayTotals(_Model):
    """Totals over one group of runs (successful, failed or unlabelled)."""

    runs: int = 0
    stopped: int = 0
    """Runs the guard would stop (stop_at is not null)."""
    reflected: int = 0
    """Runs in which the guard would inject at least one reflection."""
    tool_calls: int = 0
    tool_calls_saved: int = 0
    tokens: int | None = None
    """Sum over the group's runs with usage; None when none has usage."""
    tokens_saved: int | None = None
    runs_without_usage: int = 0


class TypeSummary(ReplayTotals):
    """Totals over the runs of one task type (or all runs, ``task_type`` ``"*"``), with the stops split by label:
    a stopped successful run is a false stop, a stopped failed run saved work that led nowhere."""

    task_type: str
    successful: int = 0
    successful_stopped: int = 0
    failed: int = 0
    failed_stopped: int = 0
    failed_tool_calls: int = 0
    failed_tool_calls_saved: int = 0


class ReplaySummary(_Model):
    runs: int
    stopped: int
    task_types: list[TypeSummary] = Field(default_factory=list)
    """One row per task type (sorted; runs without one under ``"(untyped)"``), then all runs (``"*"``)."""
    successful: ReplayTotals
    """Runs labelled successful: a stop here cuts a run that would have succeeded (a false stop)."""
    failed: ReplayTotals
    """Runs labelled failed: a stop here saves work that led nowhere."""
    unlabelled: ReplayTotals
    """Runs with no outcome label (and runs with no footer)."""
    incomplete: list[str]
    """Ids of runs with no footer (cut short): replayed as far as they go, counted as unlabelled."""
    censored: list[str]
    """Ids of runs cut off while still requesting tools."""
    reflections: str = REFLECTION_NOTE


class ReplayReport(_Model):
    runs: list[ReplayRun]
    summary: ReplaySummary

    def to_dict(self) -> dict:
        """The JSON object printed by ``pyguard replay --json``."""
        return self.model_dump(mode="json")


class RecordedClock:
    """A clock (seconds) that replays recorded time: moved before each event to its timestamp (or by its latency)."""

    def __init__(self) -> None:
        self.now_ms = 0.0

    def reset(self, record: RunRecord) -> None:
        start = record.start.started_at_ms
        if start is None and record.events and record.events[0].timestamp_ms is not None:
            first = record.events[0]
            start = (first.timestamp_ms or 0.0) - (first.latency_ms or 0.0)  # not None: checked above
        self.now_ms = start or 0.0

    def advance(self, event: IterationEvent) -> None:
        if event.timestamp_ms is not None:
            self.now_ms = max(self.now_ms, event.timestamp_ms)
        elif event.latency_ms is not None:
            self.now_ms += event.latency_ms

    def __call__(self) -> float:
        return self.now_ms / 1000.0


class _Replayer:
    """One policy (from one config) and its recorded clock, reused for every run; each run its own session. A run
    whose trace header recorded stop conditions (``policy.stop``) is replayed with them (one policy per recorded
    condition), unless the replay's config sets its own."""

    def __init__(self, config: PolicyConfig | None) -> None:
        self.clock = RecordedClock()
        self.policy = Policy(config if config is not None else PolicyConfig(), clock=self.clock)
        self._recorded: dict[str, Policy] = {}
        self.blocked: dict[str, int] = {}
        """The calls of the run last decided that a per-tool ``continue`` limit blocked, by tool."""

    def _policy_for(self, record: RunRecord) -> Policy:
        header = record.start.policy
        if not header or header.get("stop") is None or self.policy.config.stop is not None:
            return self.policy
        key = json.dumps(header["stop"], sort_keys=True)
        policy = self._recorded.get(key)
        if policy is None:
            policy = Policy(with_recorded_stop(self.policy.config, header), clock=self.clock)
            self._recorded[key] = policy
        return policy

    def decide(self, record: RunRecord) -> tuple[list[Decision], RunEnd | None]:
        """The decisions after each iteration (up to the first STOP) and, when it stops, the engine's RunEnd."""
        self.clock.reset(record)
        session = self._policy_for(record).new_run(run_id=record.run_id, task_type=record.task_type)
        decisions: list[Decision] = []
        limited = replayed_events(record.events, session.config.caps.tool_limits)  # blocked calls do not run
        events, self.blocked = limited.events, dict(limited.blocked)
        early = session.config.judge_results_early
        for k, event in enumerate(events):
            self.clock.advance(event)
            decision = session.observe(event)
            decisions.append(decision)
            after = events[k + 1].observations if k + 1 < len(events) else ()
            if early and decision.action is not Action.STOP and judged_before_next(event, after):
                # call k+1's tool results, as the recording shows them in call k+2's request: judged before that
                # call is sent, as the guarded model does live (a stop here means call k+2 is never made)
                decision = session.observe_results(event.index, after)
                decisions.append(decision)
            if decision.action is Action.STOP:
                kept = events[: _iteration(decision, k + 1)]
                salvaged = next((e.text for e in reversed(kept) if e.text), None)
                return decisions, session.finish(Causes(answer=salvaged))
        return decisions, None


def event_tokens(event: IterationEvent) -> int | None:
    """A call's :attr:`~pyguard.base.events.IterationEvent.tokens` when complete, else None: replay states a run's tokens
    and what a stop saves only for runs whose every call reported its whole usage (a share of a lower bound means
    nothing)."""
    return event.tokens if event.tokens_complete else None


def replay_run(record: RunRecord, config: PolicyConfig | None = None) -> ReplayRun:
    """Replay one recorded run through a fresh policy built from ``config`` (None = the default PolicyConfig)."""
    replayer = _Replayer(config)
    return _summarise_run(record, *replayer.decide(record), replayer.blocked)


def _stopped_end(record: RunRecord, engine_end: RunEnd, stop_at: int, decision: Decision) -> RunEnd:
    """The footer the guarded run would have had: the engine's outcome, the recording's counts up to the stop."""
    return footer(
        engine_end.run_id,
        record.events[:stop_at],
        Settled(engine_end.outcome, engine_end.reason),
        answer=engine_end.answer,
        censored=False,
        wall_ms=engine_end.wall_ms,
        cost=engine_end.cost,
        evidence={**decision.evidence, "rule": decision.rule, "replayed": True, "stop_at": stop_at},
    )


def _iteration(decision: Decision, default: int) -> int:
    return decision.iteration if decision.iteration is not None else default


def _summarise_run(
    record: RunRecord, decisions: list[Decision], engine_end: RunEnd | None, blocked: dict[str, int] | None = None
) -> ReplayRun:
    events = record.events
    stop = next(((_iteration(d, k), d) for k, d in enumerate(decisions, start=1) if d.action is Action.STOP), None)
    stop_at = stop[0] if stop else None
    reflect_at = [_iteration(d, k) for k, d in enumerate(decisions, start=1) if d.action is Action.REFLECT]
    calls = [len(e.tool_calls) for e in events]
    after = slice(stop_at, None) if stop_at is not None else slice(len(events), None)
    tokens = token_totals(events)
    return ReplayRun(
        id=record.run_id,
        task_type=record.task_type or next((e.task_type for e in events if e.task_type), None),
        success=recorded_success(record),
        iterations=len(events),
        stop_at=stop_at,
        reason=(stop[1].reason or stop[1].rule or "stop") if stop else None,
        reflect_at=reflect_at,
        tool_calls=sum(calls),
        tool_calls_saved=sum(calls[after]),
        tokens=tokens.total,
        tokens_partial=tokens.partial,
        tokens_saved=None if tokens.total is None else token_totals(events[after]).total or 0,
        rule=stop[1].rule if stop else None,
        outcome=stop[1].outcome if stop else None,
        complete=record.end is not None,
        censored=bool(record.end and record.end.censored),
        end=_stopped_end(record, engine_end, stop_at, stop[1])
        if stop_at is not None and stop and engine_end
        else record.end,
        decisions=decisions,
        tool_calls_blocked=dict(blocked or {}),
    )


def recorded_success(record: RunRecord) -> bool | None:
    """Did the recorded run succeed? Its label when it has one; else, for a live pyguard trace, its outcome
    (cancelled and guard errors are unknown); None for an unlabelled recording or a run with no footer
    (:func:`pyguard.base.ending.verdict`)."""
    return verdict(record.end).success


def guarded_end(record: RunRecord, replayed: ReplayRun) -> RunEnd:
    """The one end of ``record`` under the policy that replayed it as ``replayed`` (what ``pyguard check`` counts):
    the stop's footer, settled by the engine, when the policy stops it; else :func:`finished_end`."""
    if replayed.stop_at is not None and replayed.end is not None:
        return replayed.end
    return finished_end(record)


def finished_end(record: RunRecord) -> RunEnd:
    """The footer of a recorded run a policy lets finish: its own settled outcome as :func:`pyguard.base.ending.verdict`
    reads it (a stop, a failure, a cut-off its writer settled) stands; a run that finished (or has no footer: replayed
    as far as it goes) is settled by :func:`pyguard.base.ending.settle` from what the recording says: labelled
    successful (a final tool call ends such a run), labelled failed, cut off by its own cap with no label
    (``censored``: expired), else ended on its own."""
    end, read = record.end, verdict(record.end)
    if end is None:
        return footer(
            record.run_id, record.events, settle(Causes(ended="no footer: replayed as far as the recording goes"))
        )
    if read.outcome is end.outcome and read.outcome is not Outcome.SUCCEEDED:
        settled = Settled(end.outcome, end.reason)
    else:
        label = end.success_label
        causes = Causes(
            ended="the recorded run ended on its own",
            expired="the recorded agent was cut off by its own cap" if end.censored and label is None else None,
            failed="recorded as failed" if label is False else None,
        )
        settled = settle(causes)
    return footer(
        record.run_id,
        record.events,
        settled,
        answer=end.answer,
        censored=end.censored,
        evidence=dict(end.evidence),
        success_label=end.success_label,
    )


def _group(runs: Iterable[ReplayRun], g: ReplayTotals | None = None) -> ReplayTotals:
    g = ReplayTotals() if g is None else g
    tokens: list[int] = []
    saved: list[int] = []
    for r in runs:
        g.runs += 1
        g.stopped += r.stop_at is not None
        g.reflected += bool(r.reflect_at)
        g.tool_calls += r.tool_calls
        g.tool_calls_saved += r.tool_calls_saved
        if r.tokens is None or r.tokens_partial:
            g.runs_without_usage += 1
        else:
            tokens.append(r.tokens)
            saved.append(r.tokens_saved or 0)
    if tokens:
        g.tokens, g.tokens_saved = sum(tokens), sum(saved)
    return g


def _type_row(name: str, runs: list[ReplayRun]) -> TypeSummary:
    row = TypeSummary(task_type=name)
    _group(runs, row)
    ok = [r for r in runs if r.success is True]
    bad = [r for r in runs if r.success is False]
    row.successful, row.successful_stopped = len(ok), sum(r.stop_at is not None for r in ok)
    row.failed, row.failed_stopped = len(bad), sum(r.stop_at is not None for r in bad)
    row.failed_tool_calls = sum(r.tool_calls for r in bad)
    row.failed_tool_calls_saved = sum(r.tool_calls_saved for r in bad)
    return row


def summarise(runs: list[ReplayRun]) -> ReplaySummary:
    """The summary of replayed runs: per task type and overall, and successful and failed apart."""
    by_type: dict[str, list[ReplayRun]] = {}
    for r in runs:
        by_type.setdefault(r.task_type if r.task_type is not None else UNTYPED, []).append(r)
    rows = [_type_row(name, by_type[name]) for name in sorted(by_type)] + [_type_row("*", runs)]
    ok = [r for r in runs if r.success is True]
    bad = [r for r in runs if r.success is False]
    unknown = [r for r in runs if r.success is None]
    groups = [_group(ok), _group(bad), _group(unknown)]
    return ReplaySummary(
        runs=len(runs),
        stopped=sum(g.stopped for g in groups),
        task_types=rows,
        successful=groups[0],
        failed=groups[1],
        unlabelled=groups[2],
        incomplete=[r.id for r in runs if not r.complete],
        censored=[r.id for r in runs if r.censored],
    )


def replay_runs(runs: Iterable[RunRecord], config: PolicyConfig | None = None) -> ReplayReport:
    """Replay every run (each in its own engine session) through ``config`` (None = the default PolicyConfig)."""
    replayer = _Replayer(config)
    replayed = [_summarise_run(r, *replayer.decide(r), replayer.blocked) for r in runs]
    return ReplayReport(runs=replayed, summary=summarise(replayed))
