"""Synthetic run sets for the gate's tests, generated with seeded numpy.

A *behaviour* is a dict of outcome probabilities; runs are drawn from it. Stalled runs use more model calls
than runs that succeed, expired runs hit the cap (12), and each model call costs 300-600 tokens.
"""

from __future__ import annotations

import numpy as np
import pytest

from pyguard.check import GroupSummary, RunSetSummary
from pyguard.events import IterationEvent, Outcome, RunEnd, RunRecord, RunStart

CAP = 12
BASE = {Outcome.STALLED: 0.10, Outcome.EXPIRED: 0.05, Outcome.FAILED: 0.05}
"""The reference behaviour: 10% stalled, 5% expired, 5% failed, the rest succeeded."""


def behaviour(**rates: float) -> dict[Outcome, float]:
    probs = dict(BASE)
    probs.update({Outcome(k): v for k, v in rates.items()})
    probs[Outcome.SUCCEEDED] = 1.0 - sum(v for k, v in probs.items() if k is not Outcome.SUCCEEDED)
    assert probs[Outcome.SUCCEEDED] >= 0
    return probs


def draw(rng: np.random.Generator, n: int, probs: dict[Outcome, float]) -> tuple[list[Outcome], np.ndarray, np.ndarray]:
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


def synth_runs(n: int, seed: int, types: tuple[str, ...] = ("lookup",), with_events: bool = False,
               **rates: float) -> list[RunRecord]:
    """``n`` runs per task type as RunRecords with footers (and per-call events when asked)."""
    rng = np.random.default_rng(seed)
    probs = behaviour(**rates)
    runs: list[RunRecord] = []
    for t in types:
        outcomes, iterations, tokens = draw(rng, n, probs)
        for i, (o, k, tok) in enumerate(zip(outcomes, iterations, tokens)):
            rid = f"{t}-{seed}-{i}"
            k, tok = int(k), int(tok)
            events = []
            if with_events:
                per = [tok // k] * (k - 1) + [tok - (tok // k) * (k - 1)]
                events = [IterationEvent(run_id=rid, index=j + 1, total_tokens=per[j], task_type=t) for j in range(k)]
            end = RunEnd(run_id=rid, outcome=o, iterations=k, total_tokens=None if with_events else tok)
            runs.append(RunRecord(start=RunStart(run_id=rid, task_type=t, agent_style="executor"), events=events,
                                  end=end))
    return runs


def synth_summary(rng: np.random.Generator, n: int, types: tuple[str, ...] = ("lookup",),
                  **rates: float) -> RunSetSummary:
    """The same behaviour straight to a summary (fast: for tests that draw hundreds of run sets)."""
    probs = behaviour(**rates)
    groups, all_o, all_i, all_t = {}, [], [], []
    for t in types:
        o, i, tok = draw(rng, n, probs)
        groups[t] = GroupSummary.from_arrays(o, i, tok)
        all_o += o
        all_i += i.tolist()
        all_t += tok.tolist()
    groups["*"] = GroupSummary.from_arrays(all_o, all_i, all_t)
    return RunSetSummary(groups=groups)


@pytest.fixture
def make_runs():
    return synth_runs


@pytest.fixture
def make_summary():
    return synth_summary
