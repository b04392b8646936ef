"""Synthetic run sets drawn from a stated behaviour, with seeded numpy: for testing and benchmarking the gate.

A *behaviour* gives outcome probabilities (default: 10% stalled, 5% expired, 5% failed, the rest succeeded).
Stalled runs use more model calls than the rest, expired runs hit the cap (12), each model call costs 300-600
tokens. ``synth_runs`` gives RunRecords with footers (as a trace would); ``synth_summary`` goes straight to a
:class:`~pyguard.check.summary.RunSetSummary`, fast enough to draw hundreds of run sets.

    runs = synth_runs(300, seed=1, stalled=0.2)         # a prompt change that doubles the stall rate
"""

from __future__ import annotations

import numpy as np

from pyguard.base.events import IterationEvent, Outcome, RunEnd, RunRecord, RunStart
from pyguard.check.summary import ALL_TASKS, RunSetSummary, TaskTypeFigures

__all__: list[str] = []

CAP = 12
BASE = {Outcome.STALLED: 0.10, Outcome.EXPIRED: 0.05, Outcome.FAILED: 0.05}
"""The reference behaviour: 10% stalled, 5% expired, 5% failed, the rest succeeded."""


def behaviour(**rates: float) -> dict[Outcome, float]:
    """Outcome probabilities: BASE with ``rates`` (outcome name -> probability) overridden, SUCCEEDED the rest."""
    probs = dict(BASE)
    probs.update({Outcome(k): v for k, v in rates.items()})
    probs[Outcome.SUCCEEDED] = 1.0 - sum(v for k, v in probs.items() if k is not Outcome.SUCCEEDED)
    if probs[Outcome.SUCCEEDED] < 0:
        raise ValueError(f"outcome rates {rates} add up to more than 1")
    return probs


def draw(rng: np.random.Generator, n: int, probs: dict[Outcome, float]) -> tuple[list[Outcome], np.ndarray, np.ndarray]:
    """``n`` runs: their outcomes, iteration counts and token totals."""
    outs = list(probs)
    idx = rng.choice(len(outs), size=n, p=np.array([probs[o] for o in outs]))
    outcomes = [outs[i] for i in idx]
    iterations = 1 + rng.poisson(3, size=n)
    stalled = np.array([o is Outcome.STALLED for o in outcomes])
    expired = np.array([o is Outcome.EXPIRED for o in outcomes])
    iterations = np.where(stalled, 4 + rng.poisson(4, size=n), iterations)
    iterations = np.minimum(np.where(expired, CAP, iterations), CAP)
    tokens = iterations * rng.integers(300, 600, size=n)
    return outcomes, iterations, tokens


def synth_runs(
    n: int, seed: int, types: tuple[str, ...] = ("lookup",), with_events: bool = False, **rates: float
) -> list[RunRecord]:
    """``n`` runs per task type as RunRecords with footers (and per-call events when asked)."""
    rng = np.random.default_rng(seed)
    probs = behaviour(**rates)
    runs: list[RunRecord] = []
    for t in types:
        outcomes, iterations, tokens = draw(rng, n, probs)
        for i, (o, k, tok) in enumerate(zip(outcomes, iterations, tokens, strict=False)):
            rid = f"{t}-{seed}-{i}"
            k, tok = int(k), int(tok)
            events = []
            if with_events:
                per = [tok // k] * (k - 1) + [tok - (tok // k) * (k - 1)]
                events = [IterationEvent(run_id=rid, index=j + 1, total_tokens=per[j], task_type=t) for j in range(k)]
            end = RunEnd(run_id=rid, outcome=o, iterations=k, total_tokens=None if with_events else tok)
            runs.append(
                RunRecord(start=RunStart(run_id=rid, task_type=t, agent_style="executor"), events=events, end=end)
            )
    return runs


def synth_summary(
    rng: np.random.Generator, n: int, types: tuple[str, ...] = ("lookup",), **rates: float
) -> RunSetSummary:
    """The same behaviour straight to a summary (fast: for tests that draw hundreds of run sets)."""
    probs = behaviour(**rates)
    groups, all_o, all_i, all_t = {}, [], [], []
    for t in types:
        o, i, tok = draw(rng, n, probs)
        groups[t] = TaskTypeFigures.from_arrays(o, i, tok)
        all_o += o
        all_i += i.tolist()
        all_t += tok.tolist()
    groups[ALL_TASKS] = TaskTypeFigures.from_arrays(all_o, all_i, all_t)
    return RunSetSummary(groups=groups)
