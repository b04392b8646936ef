"""Where any budget would stop a run, from one probe pass, without running the engine again; and the figures.

The engine's budget rule (:mod:`pyguard.engine.policy`), per turn: the budget starts at ``base_budget``; a
reflection adds ``extension``; a productive iteration (gain >= ``earn_threshold``) adds ``earn_per_iteration``; a
poll adds ``max(earn_per_iteration, 1)``; it never exceeds ``hard_cap``; the run stops after iteration k of the turn
(not an answer) once k >= budget. With ``judge_results_early`` a call has two decisions: its response, checked
against the budget its request's results left (nothing earned), then its results before the next call, which earn
(or reflect, or poll) and are checked against the new budget; a stop at either is a stop at that call. The probe
keeps both, so the budget runs over decisions, not calls. Increments are never negative, so the capped running sum equals
``min(base + increments so far, hard_cap)``; the stall and cap stops do not depend on the budget. So, with a probe
(:mod:`pyguard.tune.probe`) of each run, the stop of every budget is a few numpy operations over all iterations at
once. ``tests/unit/tune`` checks the result against :func:`pyguard.replay.replay_run` for random policies.

Figures (``/work/shared/reference/real-runs-metrics.md``): a false stop is a successful run stopped early (before its
last iteration; with ``artifact=True``, at or before its last file-changing iteration); failed-run tool calls (and
tokens) saved are those requested after the stop, over all that failed runs requested.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from pyguard.base.events import RunRecord
from pyguard.engine.actions import classify_action
from pyguard.replay import event_tokens, recorded_success
from pyguard.tune.probe import KIND_EARN, KIND_POLL, KIND_REFLECT, KIND_SPEND, Probe
from pyguard.tune.space import Budget

__all__: list[str] = []


@dataclass
class Counts:
    """Additive counts over a set of runs under one policy (figures are ratios of sums).

    Not :class:`pyguard.replay.TypeSummary`, though both split stops by label (``successes`` / ``false_stops`` /
    ``failed`` / ``failed_stopped`` / ``failed_calls(_saved)`` are its ``successful`` / ``successful_stopped`` /
    ``failed`` / ``failed_stopped`` / ``failed_tool_calls(_saved)``): this is the tuner's objective, summed across
    types and folds at every step of the search from numpy columns (a plain dataclass with ``+``), its false stops
    judged by the last write for artifact sources, with the failed runs' tokens; that is a replay's report row
    (pydantic, in ``--json``), per task type, with reflections and usage coverage over all runs.
    """

    successes: int = 0
    false_stops: int = 0
    failed: int = 0
    failed_stopped: int = 0
    failed_calls: int = 0
    failed_calls_saved: int = 0
    failed_tokens: int = 0
    failed_tokens_saved: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(**{k: getattr(self, k) + getattr(other, k) for k in self.__dataclass_fields__})

    @property
    def false_stop_rate(self) -> float:
        return self.false_stops / self.successes if self.successes else 0.0

    @property
    def calls_saved(self) -> float:
        return self.failed_calls_saved / self.failed_calls if self.failed_calls else 0.0

    @property
    def tokens_saved(self) -> float | None:
        return self.failed_tokens_saved / self.failed_tokens if self.failed_tokens else None

    @property
    def caught(self) -> float:
        """Share of failed runs stopped early (loops caught)."""
        return self.failed_stopped / self.failed if self.failed else 0.0

    def as_dict(self) -> dict:
        return {
            "successful_runs": self.successes,
            "false_stops": self.false_stops,
            "false_stop_rate": self.false_stop_rate,
            "failed_runs": self.failed,
            "failed_tool_calls_saved": self.calls_saved,
            "failed_tokens_saved": self.tokens_saved,
            "caught_failed_share": self.caught,
        }


class RunSet:
    """What the figures need from each run, whatever the policy: iterations, labels, calls and tokens per iteration,
    the last file-changing iteration."""

    def __init__(
        self,
        records: Sequence[RunRecord],
        write_tools: Sequence[str] = (),
        read_tools: Sequence[str] = (),
        last_change: Callable[[RunRecord], int] | None = None,
    ):
        """``last_change(record)``: the 1-based last iteration that changed the artifact (0: none); by default the
        last iteration requesting a write (:func:`pyguard.engine.actions.classify_action` with the policy's
        ``tools`` lists)."""
        writes, reads = frozenset(write_tools), frozenset(read_tools)
        n = len(records)
        self.n_iter = np.zeros(n, dtype=np.int64)
        self.success = np.full(n, -1, dtype=np.int8)
        self.last_write = np.zeros(n, dtype=np.int64)
        self.has_tokens = np.zeros(n, dtype=bool)
        self.offset = np.zeros(n, dtype=np.int64)
        calls_cum: list[int] = []
        tokens_cum: list[int] = []
        for r, rec in enumerate(records):
            label = recorded_success(rec)
            self.success[r] = -1 if label is None else int(label)
            self.n_iter[r] = len(rec.events)
            self.offset[r] = len(calls_cum)
            c = t = 0
            calls_cum.append(0)
            tokens_cum.append(0)
            has_tokens = True
            for i, e in enumerate(rec.events, start=1):
                c += len(e.tool_calls)
                tok = event_tokens(e)
                has_tokens = has_tokens and tok is not None
                t += tok or 0
                calls_cum.append(c)
                tokens_cum.append(t)
                if last_change is None and any(
                    classify_action(tc.name, tc.arguments, writes, reads) == "write" for tc in e.tool_calls
                ):
                    self.last_write[r] = i
            if last_change is not None:
                self.last_write[r] = last_change(rec)
            self.has_tokens[r] = has_tokens
        self.calls_cum = np.asarray(calls_cum, dtype=np.int64)
        self.tokens_cum = np.asarray(tokens_cum, dtype=np.int64)
        self.total_calls = self.calls_cum[self.offset + self.n_iter]
        self.total_tokens = self.tokens_cum[self.offset + self.n_iter]

    def __len__(self) -> int:
        return len(self.n_iter)

    def counts(self, runs: np.ndarray, stop_at: np.ndarray, artifact: bool = False) -> Counts:
        """Counts over ``runs`` (indices) stopped at ``stop_at`` (1-based; 0 = never), aligned with ``runs``."""
        n = self.n_iter[runs]
        early = (stop_at > 0) & (stop_at < n)
        succ = self.success[runs] == 1
        fail = self.success[runs] == 0
        false = succ & early
        if artifact:
            false &= stop_at <= self.last_write[runs]
        at = self.offset[runs] + np.where(stop_at > 0, stop_at, n)
        calls_saved = self.total_calls[runs] - self.calls_cum[at]
        tok = fail & self.has_tokens[runs]
        tokens_saved = self.total_tokens[runs] - self.tokens_cum[at]
        return Counts(
            successes=int(succ.sum()),
            false_stops=int(false.sum()),
            failed=int(fail.sum()),
            failed_stopped=int((fail & early).sum()),
            failed_calls=int(self.total_calls[runs][fail].sum()),
            failed_calls_saved=int(calls_saved[fail].sum()),
            failed_tokens=int(self.total_tokens[runs][tok].sum()),
            failed_tokens_saved=int(tokens_saved[tok].sum()),
        )


class ProbeTable:
    """The probes of some runs under one stall setting, flattened, ready to simulate any budget."""

    def __init__(self, runs: np.ndarray, probes: Sequence[Probe]):
        self.runs = np.asarray(runs, dtype=np.int64)
        self.probe_stop = np.asarray([p.stop for p in probes], dtype=np.int64)
        lengths = np.asarray([len(p.k) for p in probes], dtype=np.int64)
        self.local = np.repeat(np.arange(len(probes)), lengths)
        self.k = np.concatenate([p.k for p in probes]).astype(np.int64) if probes else np.zeros(0, np.int64)
        self.kind = np.concatenate([p.kind for p in probes]) if probes else np.zeros(0, np.int8)
        self.gain = np.concatenate([p.gain for p in probes]) if probes else np.zeros(0)
        self.iteration = np.concatenate([p.it for p in probes]).astype(np.int64) if probes else np.zeros(0, np.int64)
        self.eligible = np.isin(self.kind, (KIND_EARN, KIND_POLL, KIND_REFLECT, KIND_SPEND))
        # a turn opens at its first decision: the first of a run, or a first call (k 1) not the previous decision's
        same = np.zeros(len(self.k), dtype=bool)
        same[1:] = (self.local[1:] == self.local[:-1]) & (self.iteration[1:] == self.iteration[:-1])
        self.first = (self.k == 1) & ~same
        self._segments()
        self.reflections = self._within((self.kind == KIND_REFLECT).astype(np.int64))
        self.polls = self._within((self.kind == KIND_POLL).astype(np.int64))
        self._earned: dict[float, np.ndarray] = {}

    def subset(self, mask: np.ndarray) -> ProbeTable:
        """The table of the runs where ``mask`` (aligned with ``self.runs``) is true."""
        out = object.__new__(ProbeTable)
        keep = mask[self.local]
        new_local = np.cumsum(mask) - 1
        out.runs = self.runs[mask]
        out.probe_stop = self.probe_stop[mask]
        out.local = new_local[self.local[keep]]
        for name in ("k", "kind", "gain", "iteration", "eligible", "first", "reflections", "polls"):
            setattr(out, name, getattr(self, name)[keep])
        out._segments()
        out._earned = {}
        return out

    def _segments(self) -> None:
        """The turns: each decision's turn (numbered over the table) and where each turn opens."""
        self._seg = np.cumsum(self.first) - 1
        self._seg_first = np.flatnonzero(self.first)

    def _within(self, x: np.ndarray) -> np.ndarray:
        """Running sum of ``x`` within each turn (inclusive)."""
        if not len(x):
            return x
        cs = np.cumsum(x)
        before = cs[self._seg_first] - x[self._seg_first]
        return cs - before[self._seg]

    def earned(self, threshold: float) -> np.ndarray:
        if threshold not in self._earned:
            self._earned[threshold] = self._within(
                ((self.kind == KIND_EARN) & (self.gain >= threshold)).astype(np.int64)
            )
        return self._earned[threshold]

    def stops(self, b: Budget) -> np.ndarray:
        """The 1-based stop iteration (0 = never) of each run under budget ``b``, aligned with ``self.runs``."""
        budget = b.base_budget + b.extension * self.reflections + b.earn_per_iteration * self.earned(b.earn_threshold)
        budget = budget + max(b.earn_per_iteration, 1) * self.polls
        np.minimum(budget, b.hard_cap, out=budget)
        hit = np.flatnonzero(self.eligible & (self.k >= budget))
        out = self.probe_stop.copy()
        if len(hit):
            runs, first = np.unique(self.local[hit], return_index=True)
            out[runs] = self.iteration[hit[first]]
        return out
