"""Where each run's outcome comes from: the trace footer, or a replay of a recording through a policy.

pyguard traces carry their outcome in the ``run_end`` footer. Recordings imported from the OpenAI messages
format carry only a success label: whether such a run *would have* stalled or expired under a policy is only
known by replaying it (:func:`pyguard.replay.replay_runs`). That step sits behind one function,
:func:`replay_outcomes`, and the replayer is injectable so the rest of the gate does not depend on it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from pyguard.base.ending import verdict
from pyguard.base.errors import InputError
from pyguard.base.events import Outcome, RunEnd, RunRecord, sum_tokens
from pyguard.check.summary import ALL_TASKS, RunFacts
from pyguard.engine import PolicyConfig
from pyguard.replay import guarded_end, replay_runs

__all__: list[str] = []

Replayer = Callable[[Sequence[RunRecord]], Sequence[RunEnd]]
"""Replays runs through a policy and returns one settled RunEnd per run, in order: the footer each would have had
under the policy (:func:`pyguard.replay.guarded_end`)."""


def needs_replay(run: RunRecord, fmt: str | None) -> bool:
    """True when the run's outcome must come from a replay.

    ``fmt="openai"``: always (recordings carry a label, not a guard outcome); ``"pyguard"``: never (the footer
    holds the outcome). ``None`` (unknown source): when the footer says the run was imported from a recording
    (``evidence["imported_from"]``, set by the OpenAI importer).
    """
    if fmt == "openai":
        return True
    if fmt == "pyguard" or run.end is None:
        return False
    return run.end.evidence.get("imported_from") is not None


def run_tokens(run: RunRecord, iterations: int | None = None) -> int | None:
    """Tokens of a run (:attr:`pyguard.base.events.RunRecord.tokens`), or of its first ``iterations`` model calls when
    given; None without usage data (unknown)."""
    if iterations is None:
        return run.tokens
    return sum_tokens(run.events[:iterations])


def _check_task_type(run: RunRecord) -> None:
    if run.task_type == ALL_TASKS:
        raise InputError(
            f"run {run.run_id!r} has task_type {ALL_TASKS!r}, which pyguard check reserves for "
            "all runs together: rename the task type"
        )


def facts_from_footer(run: RunRecord) -> RunFacts:
    """The run's facts as its trace footer records them."""
    _check_task_type(run)
    if run.end is None:
        raise InputError(
            f"run {run.run_id!r} has no run_end footer (cut short?): complete or drop the run, or "
            "pass --format openai to replay it through a policy"
        )
    end = run.end
    observed = _observed_stop(end)
    if observed is not None:  # a guard in observe or reflect mode: the run counts as the stop it recorded
        outcome, at = observed
        spent, until_stop = run_tokens(run), run_tokens(run, at)
        return RunFacts(
            run_id=run.run_id,
            task_type=run.task_type,
            outcome=outcome,
            iterations=at,
            tokens=spent,  # what the run spent: the guard did not act, so nothing was saved
            tokens_saved=spent - until_stop if spent is not None and until_stop is not None else None,
            observed=True,
        )
    iterations = end.iterations or len(run.events)
    return RunFacts(
        run_id=run.run_id,
        task_type=run.task_type,
        outcome=verdict(end).outcome or end.outcome,
        iterations=iterations,
        tokens=run_tokens(run),
    )


def _observed_stop(end: RunEnd) -> tuple[Outcome, int] | None:
    """The stop a guard in observe or reflect mode recorded (footer ``evidence["observed_stop"]``, written by
    ``pyguard.live.run.GuardedRun``): its outcome and iteration, or None."""
    stop = end.evidence.get("observed_stop")
    if not isinstance(stop, dict):
        return None
    try:
        return Outcome(stop["outcome"]), int(stop["iteration"])
    except (KeyError, TypeError, ValueError):
        return None


def replay_outcomes(runs: Sequence[RunRecord], replayer: Replayer) -> list[RunFacts]:
    """Facts of recordings replayed through a policy: where the policy would stop them, and how, as the replayer
    settled each run's end (:func:`pyguard.replay.guarded_end`: a run the policy lets finish keeps what the recording
    says); read here, never re-decided."""
    for run in runs:
        _check_task_type(run)
    ends = list(replayer(runs))
    if len(ends) != len(runs):
        raise InputError(f"the replay returned {len(ends)} outcomes for {len(runs)} runs")
    facts = []
    for run, end in zip(runs, ends, strict=False):
        iterations = end.iterations or len(run.events)
        tokens = end.total_tokens if end.total_tokens is not None else run_tokens(run, iterations)
        facts.append(
            RunFacts(
                run_id=run.run_id,
                task_type=run.task_type,
                outcome=end.outcome,
                iterations=iterations,
                tokens=tokens,
                replayed=True,
            )
        )
    return facts


def resolve_runs(
    runs: Sequence[RunRecord], fmt: str | None = None, make_replayer: Callable[[], Replayer] | None = None
) -> list[RunFacts]:
    """One RunFacts per run, in order: footers where they hold the outcome, a replay where they cannot.

    ``make_replayer`` (a zero-argument factory) is called only if some run needs a replay. Raises InputError
    when there are no runs, or when runs need a replay and no replayer is available.
    """
    if not runs:
        raise InputError("no runs to check: the input holds no run (check the path and --format)")
    todo = [i for i, r in enumerate(runs) if needs_replay(r, fmt)]
    skip = set(todo)
    facts: list[RunFacts | None] = [None if i in skip else facts_from_footer(r) for i, r in enumerate(runs)]
    if todo:
        if make_replayer is None:
            raise InputError(
                f"{len(todo)} run(s) (first: {runs[todo[0]].run_id!r}) carry no guard outcome and "
                "need a policy replay, which is not available here"
            )
        for i, f in zip(todo, replay_outcomes([runs[i] for i in todo], make_replayer()), strict=False):
            facts[i] = f
    return [f for f in facts if f is not None]


def policy_replayer(config_path: str | Path | None) -> Replayer:
    """The replayer backed by :func:`pyguard.replay.replay_runs` and the policy in ``config_path`` (a TOML
    file or a pyproject.toml with ``[tool.pyguard]``; the default policy when None). ConfigError when the
    file is bad."""

    config = PolicyConfig.from_file(config_path)

    def replay(runs: Sequence[RunRecord]) -> list[RunEnd]:
        report = replay_runs(list(runs), config)
        return [guarded_end(record, r) for record, r in zip(runs, report.runs, strict=False)]

    return replay
