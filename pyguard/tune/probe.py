"""Engine passes over the runs, in worker processes: what the tuner learns from the real engine.

A **probe pass** replays each run through the policy with one candidate's stall settings and an unlimited budget
(``base_budget`` 10^6, ``extension`` 0, ``earn_per_iteration`` 0), exactly as :func:`pyguard.replay.replay_run`
does (fresh session, the recorded clock, and with ``judge_results_early`` the same two moments per call), and
keeps per decision what the budget rules need: its call and turn-relative index, whether the model answered,
reflected, only polled (the budget then rises by exactly 1), was judged on its response alone (the results judged
before it was sent: the budget is checked, nothing is earned), the gain, and where the engine itself stopped (a stall
or a cap, which no budget changes). :mod:`pyguard.tune.simulate` then finds where any budget would stop the run
without another pass.

A **replay pass** scores a finished policy with :func:`pyguard.replay.replay_run` itself (the held-out figures).

Both run over the records in a process pool (``concurrent.futures``; the engine is pure Python). The records go to
each worker once, at start-up, not with every task.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyguard.base.decisions import Action, Decision
from pyguard.base.events import RunRecord
from pyguard.engine import Policy, PolicyConfig
from pyguard.engine.paired import judged_before_next
from pyguard.engine.session import RunSession
from pyguard.replay import RecordedClock, replay_runs
from pyguard.tune.shared import SharedReading, reading_key
from pyguard.tune.space import apply_engine

__all__: list[str] = []

KIND_EARN, KIND_POLL, KIND_REFLECT, KIND_FINAL, KIND_STOP, KIND_SPEND = 0, 1, 2, 3, 4, 5
"""Per-decision kinds of a probe: continue (earns if its gain reaches the threshold), poll, reflect, answer, the
engine's own stop, and a call's response judged alone (``judge_results_early``: its request's results were judged
before it was sent, so the budget is checked and nothing is earned)."""

_BIG = 10**6


@dataclass(frozen=True)
class Probe:
    """One run's probe under one stall setting (arrays over its decisions up to the engine's own stop: one per
    call, or two with ``judge_results_early``, the response and then the results judged before the next call)."""

    stop: int
    """1-based iteration at which the engine stopped by itself (stall or cap); 0 if it never did."""
    k: np.ndarray
    """Turn-relative 1-based index of each decision's call (the budget counts from the start of the turn)."""
    kind: np.ndarray
    gain: np.ndarray
    it: np.ndarray
    """The 1-based call (iteration) of each decision: a stop there is ``stop_at`` of that call."""


def probe_config(base: PolicyConfig, stall: dict[str, Any]) -> PolicyConfig:
    """``base`` with ``stall`` applied and a budget that never runs out (and rises only for polls)."""
    data = apply_engine(base.model_dump(), stall)
    data.update(base_budget=_BIG, hard_cap=2 * _BIG, extension=0, earn_per_iteration=0, task_types={})
    return PolicyConfig.model_validate(data)


def probe_run(
    record: RunRecord, config: PolicyConfig, reading: SharedReading | None = None, policy: Policy | None = None
) -> Probe:
    """Replay ``record`` through ``config`` (a :func:`probe_config`) and keep what the budget simulation needs;
    with ``reading``, the run's results are read once for every config sharing it (:mod:`pyguard.tune.shared`);
    ``policy``: a policy of ``config`` on a :class:`RecordedClock`, reused across runs (:func:`probe_policy`)."""
    if policy is None:
        policy = probe_policy(config)
    clock = policy.clock
    assert isinstance(clock, RecordedClock)  # probe_policy's
    clock.reset(record)
    session = policy.new_run(run_id=record.run_id, task_type=None)
    if reading is not None:
        reading.attach(session)
    early = config.judge_results_early
    points = _Points()
    events = record.events
    for i, event in enumerate(events, start=1):
        clock.advance(event)
        read = len(session.gains)
        d = session.observe(event)
        if points.add(i, d, session, event.is_final, len(session.gains) > read):
            break
        after = events[i].observations if i < len(events) else ()
        if early and judged_before_next(event, after):  # as replay_run: the results before the next call
            d = session.observe_results(i, after)
            if points.add(i, d, session, False, True):
                break
    return points.probe()


class _Points:
    """A probe's decisions as they come (:func:`probe_run`)."""

    def __init__(self) -> None:
        self.ks: list[int] = []
        self.kinds: list[int] = []
        self.gains: list[float] = []
        self.its: list[int] = []
        self.turn, self.turn_start, self.prev_budget, self.stop = 1, 0, _BIG, 0

    def add(self, i: int, d: Decision, session: RunSession, final: bool, read: bool) -> bool:
        """Keep decision ``d`` on call ``i`` (``read``: it read results, and so may earn); True when it stops."""
        assert d.turn is not None and d.budget is not None  # the engine's decisions always carry both
        if d.turn != self.turn:
            self.turn, self.turn_start, self.prev_budget = d.turn, i - 1, i - 1 + _BIG
        self.ks.append(i - self.turn_start)
        self.its.append(i)
        self.gains.append(session.gains[-1] if read else 0.0)
        if d.action is Action.STOP:
            self.kinds.append(KIND_STOP)
            self.stop = i
            return True
        if final:
            self.kinds.append(KIND_FINAL)
        elif not read:
            self.kinds.append(KIND_SPEND)
        elif d.action is Action.REFLECT:
            self.kinds.append(KIND_REFLECT)
        else:
            self.kinds.append(KIND_POLL if d.budget - self.prev_budget == 1 else KIND_EARN)
        self.prev_budget = d.budget
        return False

    def probe(self) -> Probe:
        return Probe(
            stop=self.stop,
            k=np.asarray(self.ks, dtype=np.int32),
            kind=np.asarray(self.kinds, dtype=np.int8),
            gain=np.asarray(self.gains, dtype=np.float64),
            it=np.asarray(self.its, dtype=np.int64),
        )


# ---- workers ------------------------------------------------------------------------------------------------------

_RECORDS: Sequence[RunRecord] = ()


def _init(records: Sequence[RunRecord]) -> None:
    global _RECORDS
    _RECORDS = records


def _probe_task(config_data: dict, indices: Sequence[int]) -> list[Probe]:
    config = PolicyConfig.model_validate(config_data)
    policy = probe_policy(config)
    return [probe_run(_RECORDS[i], config, None, policy) for i in indices]


def probe_policy(config: PolicyConfig) -> Policy:
    """A policy of ``config`` on its own :class:`RecordedClock`, for :func:`probe_run` to reuse across runs (a policy
    makes a fresh session per run; made once, not per run: ~50 µs each, 18 candidates × 10,000 runs)."""
    return Policy(config, clock=RecordedClock())


class Prober:
    """Probes runs under several configs at once: each run's results read once per :func:`reading_key` (not once
    per config: :mod:`pyguard.tune.shared`), one policy per config for all runs. The same probes as
    :func:`probe_run` gives config by config."""

    def __init__(self, configs: Sequence[PolicyConfig]) -> None:
        self.configs = list(configs)
        self.policies = [probe_policy(c) for c in self.configs]
        self.keys = [reading_key(c) for c in self.configs]

    def probes(self, record: RunRecord) -> list[Probe]:
        """``record``'s probe under each config, in order."""
        readings: dict[tuple, SharedReading] = {}
        out = []
        for config, policy, key in zip(self.configs, self.policies, self.keys, strict=True):
            reading = readings.get(key)
            if reading is None:
                reading = readings[key] = SharedReading()
            out.append(probe_run(record, config, reading, policy))
        return out


def _probe_many_task(configs_data: list[dict], indices: Sequence[int]) -> list[list[Probe]]:
    """Run-major: every config for one run before the next run, so that the run's reading is shared by all its
    configs (:class:`Prober`) and the engine's per-text caches are warm for all but the first config."""
    prober = Prober([PolicyConfig.model_validate(d) for d in configs_data])
    out: list[list[Probe]] = [[] for _ in configs_data]
    for i in indices:
        for k, probe in enumerate(prober.probes(_RECORDS[i])):
            out[k].append(probe)
    return out


def _replay_task(config_data: dict, indices: Sequence[int]) -> list[int]:
    config = PolicyConfig.model_validate(config_data)  # one policy for the chunk (replay_run makes one per run)
    return [r.stop_at or 0 for r in replay_runs([_RECORDS[i] for i in indices], config).runs]


def _chunks(indices: Sequence[int], size: int) -> list[list[int]]:
    return [list(indices[s : s + size]) for s in range(0, len(indices), size)]


class RunPool:
    """The records, and the worker processes that replay them (``workers=1``: in this process, no pool)."""

    def __init__(
        self, records: Sequence[RunRecord], workers: int = 1, progress: Callable[[int], None] | None = None
    ) -> None:
        self.records = records
        self.workers = max(1, workers)
        self.progress = progress or (lambda n: None)
        self._executor: Executor | None = None
        if self.workers > 1 and len(records) > 1:
            methods = multiprocessing.get_all_start_methods()
            ctx = multiprocessing.get_context("fork" if "fork" in methods and os.name == "posix" else "spawn")
            self._executor = ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=_init, initargs=(records,))
        else:
            _init(records)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(cancel_futures=True)
            self._executor = None

    def __enter__(self) -> RunPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _map(self, fn: Callable, data: Any, indices: Sequence[int], weight: int = 1) -> list:
        """``fn(data, chunk)`` over chunks of ``indices``, results in order (lists concatenated)."""
        if self._executor is None:
            results = []
            for chunk in _chunks(indices, 64):
                results.append(fn(data, chunk))
                self.progress(len(chunk) * weight)
            return results
        size = max(8, min(256, len(indices) // (self.workers * 8) + 1))
        chunks = _chunks(indices, size)
        futures = [self._executor.submit(fn, data, c) for c in chunks]
        results = []
        for chunk, fut in zip(chunks, futures, strict=False):
            results.append(fut.result())
            self.progress(len(chunk) * weight)
        return results

    def probes(self, config: PolicyConfig, indices: Sequence[int]) -> list[Probe]:
        """Probes of the runs at ``indices`` under ``config`` (a :func:`probe_config`), in that order."""
        return [p for part in self._map(_probe_task, config.model_dump(mode="json"), indices) for p in part]

    def probes_many(self, configs: Sequence[PolicyConfig], indices: Sequence[int]) -> list[list[Probe]]:
        """Probes of the runs at ``indices`` under each of ``configs`` (one list per config), computed run-major."""
        data = [c.model_dump(mode="json") for c in configs]
        parts = self._map(_probe_many_task, data, indices, weight=len(configs))
        return [[p for part in parts for p in part[k]] for k in range(len(configs))]

    def replay_stops(self, config: PolicyConfig, indices: Sequence[int]) -> list[int]:
        """``replay_run(record, config).stop_at`` (0 for none) of the runs at ``indices``, in that order."""
        return [s for part in self._map(_replay_task, config.model_dump(mode="json"), indices) for s in part]
