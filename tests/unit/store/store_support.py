"""A mixed set of runs for the store and OpenTelemetry tests: live-looking pyguard runs with every kind of ending,
missing usage, untyped runs, decisions, and OpenAI recordings that need a replay."""

from __future__ import annotations

from pathlib import Path

from pyguard.base.decisions import Decision
from pyguard.base.events import IterationEvent, Outcome, RunEnd, RunRecord, RunStart
from pyguard.engine import Policy
from pyguard.testing.synthetic import labelled_set
from pyguard.trace import import_openai

DATA = Path(__file__).resolve().parents[2] / "data"
OPENAI = DATA / "recordings" / "openai_runs.jsonl"

_ENDINGS = [
    dict(outcome=Outcome.SUCCEEDED),
    dict(outcome=Outcome.STALLED, censored=True),
    dict(outcome=Outcome.EXPIRED, censored=True),
    dict(outcome=Outcome.FAILED),
    dict(outcome=Outcome.SUCCEEDED, success_label=False),
    dict(outcome=Outcome.CANCELLED),
]


def _strip_usage(events: list[IterationEvent], k: int) -> list[IterationEvent]:
    """Vary what usage is known: none at all, input only, or everything."""
    if k % 5 == 1:
        return [
            e.model_copy(update={"input_tokens": None, "output_tokens": None, "total_tokens": None}) for e in events
        ]
    if k % 5 == 2:
        return [e.model_copy(update={"output_tokens": None, "total_tokens": None}) for e in events]
    return events


def guarded_runs(n_seeds: int = 2) -> tuple[list[RunRecord], dict[str, list[Decision]]]:
    """Synthetic runs replayed live through the default policy: real decisions, varied footers."""
    policy = Policy()
    records, decisions = [], {}
    for k, lr in enumerate(labelled_set(range(n_seeds))):
        events = _strip_usage(list(lr.events), k)
        session = policy.new_run(lr.name, lr.kind)
        ds = []
        for e in events:
            d = session.observe(e)
            ds.append(d)
            if d.stops:
                break
        kept = events[: len(ds)]
        tokens = [e.total_tokens for e in kept]
        end = RunEnd(
            run_id=lr.name,
            reason="test",
            iterations=len(kept),
            tool_calls=sum(len(e.tool_calls) for e in kept),
            total_tokens=None if k % 5 in (1, 2) or any(t is None for t in tokens) else sum(tokens),
            evidence={"rule": ds[-1].rule} if ds[-1].stops else {},
            **_ENDINGS[k % len(_ENDINGS)],
        )
        task_type = None if k % 7 == 3 else lr.kind
        records.append(
            RunRecord(
                start=RunStart(
                    run_id=lr.name,
                    task_type=task_type,
                    task=f"task {k}",
                    agent_style="aiservices",
                    started_at_ms=1.7e12 + k,
                ),
                events=kept,
                end=end,
            )
        )
        decisions[lr.name] = ds
    return records, decisions


def mixed_runs() -> tuple[list[RunRecord], dict[str, list[Decision]]]:
    """Guarded runs plus OpenAI recordings (their footers say imported_from: a check replays them)."""
    records, decisions = guarded_runs()
    return records + import_openai(OPENAI), decisions
