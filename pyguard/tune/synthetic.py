"""Labelled synthetic runs for tuning: :mod:`pyguard.testing.synthetic` runs, legitimate ones labelled successful
and loops failed, grouped into tasks (several runs per task) and task types with different mixes."""

from __future__ import annotations

import random

from pyguard.base.events import Outcome, RunEnd, RunRecord, RunStart
from pyguard.testing.synthetic import RunBuilder, generate, productive_calls, sentence

__all__: list[str] = []

TYPE_MIXES: dict[str, dict[str, float]] = {
    "lookup": {"convergent": 0.6, "exact_repeat": 0.25, "normalised_repeat": 0.15},
    "ops": {"polling": 0.35, "rerun_after_change": 0.25, "error_storm": 0.2, "cycle": 0.2},
    "research": {"pagination": 0.3, "convergent": 0.3, "divergent": 0.25, "oscillating": 0.15},
}
"""Kinds of run (:data:`pyguard.testing.synthetic.KINDS`) per task type, with their shares."""


def tune_runs(
    n: int, seed: int = 0, types: tuple[str, ...] = tuple(TYPE_MIXES), runs_per_task: int = 3
) -> list[RunRecord]:
    """``n`` labelled runs, deterministic in ``seed``: task types in turn, kinds drawn by the type's mix, each task
    (``runs_per_task`` runs of one kind) named in the run header."""
    rng = random.Random(f"tune:{seed}")
    out: list[RunRecord] = []
    task = 0
    while len(out) < n:
        ttype = types[task % len(types)]
        mix = TYPE_MIXES[ttype]
        kind = rng.choices(list(mix), weights=list(mix.values()))[0]
        for _ in range(min(runs_per_task, n - len(out))):
            run = generate(kind, rng.randrange(1 << 30))
            run_id = f"{ttype}-{len(out)}"
            events = [e.model_copy(update={"run_id": run_id}) for e in run.events]
            success = run.label == "legitimate"
            out.append(
                RunRecord(
                    start=RunStart(run_id=run_id, task_type=ttype, task=f"{ttype}-task-{task}"),
                    events=events,
                    end=RunEnd(
                        run_id=run_id,
                        outcome=Outcome.SUCCEEDED if success else Outcome.FAILED,
                        iterations=len(events),
                        success_label=success,
                    ),
                )
            )
        task += 1
    return out


# ---- a workload whose best policy is known ------------------------------------------------------------------------

KNOWN_LONGEST: dict[str, int] = {"lookup": 5, "ops": 11, "research": 24}
"""Per task type, the most tool-calling iterations a successful run makes (uniform from 1 to this)."""

EXPLORER_CALLS = 40
"""Tool calls of a failed explorer run (it never answers; the agent's own cap cuts it)."""


def known_best_runs(n: int, seed: int = 0, runs_per_task: int = 2) -> list[RunRecord]:
    """Runs whose best policy is known by construction. Every tool result is new (every iteration earns), so only a
    hard cap can stop a run: successful runs of type t make 1..``KNOWN_LONGEST[t]`` tool calls (uniform) and answer;
    failed runs are explorers (70%: new results for ``EXPLORER_CALLS`` calls, never an answer) or exact-repeat loops
    (30%, which the stall rules catch whatever the budget). The best policy under any bound below
    ``1 / KNOWN_LONGEST[t]`` is the smallest hard cap above ``KNOWN_LONGEST[t]`` (:func:`known_best_cap`)."""
    rng = random.Random(f"known-best:{seed}")
    types = tuple(KNOWN_LONGEST)
    out: list[RunRecord] = []
    task = 0
    while len(out) < n:
        ttype = types[task % len(types)]
        kind = rng.choices(["success", "explorer", "repeat"], weights=[0.6, 0.28, 0.12])[0]
        for _ in range(min(runs_per_task, n - len(out))):
            run_id = f"{ttype}-{len(out)}"
            if kind == "repeat":
                events = [
                    e.model_copy(update={"run_id": run_id})
                    for e in generate("exact_repeat", rng.randrange(1 << 30)).events
                ]
            else:
                r = RunBuilder(run_id, f"Task {task}: " + sentence(rng), rng)
                productive_calls(r, rng, rng.randint(1, KNOWN_LONGEST[ttype]) if kind == "success" else EXPLORER_CALLS)
                if kind == "success":
                    r.answer("Done: " + sentence(rng))
                events = r.events
            success = kind == "success"
            out.append(
                RunRecord(
                    start=RunStart(run_id=run_id, task_type=ttype, task=f"{ttype}-task-{task}"),
                    events=events,
                    end=RunEnd(
                        run_id=run_id,
                        outcome=Outcome.SUCCEEDED if success else Outcome.FAILED,
                        iterations=len(events),
                        success_label=success,
                        censored=not events[-1].is_final,
                    ),
                )
            )
        task += 1
    return out


def known_best_cap(task_type: str, hard_caps: tuple[int, ...]) -> int:
    """The best hard cap of ``task_type`` among ``hard_caps``: the smallest that stops no successful run."""
    return min(c for c in hard_caps if c > KNOWN_LONGEST[task_type])


__all__ += ["KNOWN_LONGEST", "EXPLORER_CALLS", "known_best_runs", "known_best_cap"]
