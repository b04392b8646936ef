"""From recorded runs to numpy columns: one pass over the records, everything else is vectorised.

Calibration needs, per run, its task type, the number of model calls it made (``n``), how it ended
(success, failure, or censored) and the tokens of each of its model calls. :class:`RunArrays` holds those as
flat numpy arrays; :class:`RunAccumulator` builds them from :class:`~pyguard.events.RunRecord` s one record
at a time, so a live calibration can feed runs as they finish.

How a run's status is read (first rule that applies wins):

1. no ``RunEnd`` (the run was cut short or is still going)  -> censored at its number of iterations;
2. ``RunEnd.censored`` is true                               -> censored;
3. outcome ``expired``, ``stalled``, ``escalated``, ``cancelled`` or ``guard_error`` (something stopped the
   run before it finished on its own)                        -> censored;
4. ``RunEnd.success_label`` is set                            -> success if true, failure if false;
5. outcome ``succeeded``                                      -> success; ``failed`` -> failure.

A censored run is *not* a failure at every n: it tells us only that the run had not finished after its n
calls. Censoring wins over a success label because a cut-off run did not finish within its n calls.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from pyguard.errors import InputError
from pyguard.events import IterationEvent, Outcome, RunRecord

__all__ = ["RunStatus", "RunArrays", "RunAccumulator", "run_status", "iteration_tokens", "extract_runs", "UNTYPED"]

UNTYPED = "default"
"""The task type given to runs that carry none (they form one type)."""

_CUT_OFF = {Outcome.EXPIRED, Outcome.STALLED, Outcome.ESCALATED, Outcome.CANCELLED, Outcome.GUARD_ERROR}


class RunStatus(IntEnum):
    """How a run ended, as calibration sees it. The values index the rows of an event-count matrix."""

    CENSORED = 0
    SUCCESS = 1
    FAILURE = 2


def run_status(record: RunRecord) -> RunStatus:
    """The calibration status of one run (see the module docstring for the rules)."""
    end = record.end
    if end is None or end.censored or end.outcome in _CUT_OFF:
        return RunStatus.CENSORED
    if end.success_label is not None:
        return RunStatus.SUCCESS if end.success_label else RunStatus.FAILURE
    if end.outcome is Outcome.SUCCEEDED:
        return RunStatus.SUCCESS
    return RunStatus.FAILURE


def iteration_tokens(event: IterationEvent) -> float | None:
    """Tokens of one model call: ``total_tokens``, else input + output (whichever are known), else None."""
    if event.total_tokens is not None:
        return float(event.total_tokens)
    parts = [t for t in (event.input_tokens, event.output_tokens) if t is not None]
    return float(sum(parts)) if parts else None


@dataclass(frozen=True)
class RunArrays:
    """Runs as columns. Run ``i`` has type ``task_types[type_code[i]]``, ``iterations[i]`` model calls and
    ``status[i]`` (a :class:`RunStatus` value). Token counts are flat: the model call ``token_iter[k]``
    (1-based) of run ``token_run[k]`` used ``token_value[k]`` tokens; calls without a count are absent."""

    task_types: tuple[str, ...]
    type_code: np.ndarray
    iterations: np.ndarray
    status: np.ndarray
    token_run: np.ndarray
    token_iter: np.ndarray
    token_value: np.ndarray
    run_ids: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        m = len(self.type_code)
        if len(self.iterations) != m or len(self.status) != m:
            raise InputError(
                f"run columns differ in length: type_code {m}, iterations {len(self.iterations)}, "
                f"status {len(self.status)}; build RunArrays from one set of runs"
            )
        if not (len(self.token_run) == len(self.token_iter) == len(self.token_value)):
            raise InputError("token columns token_run, token_iter, token_value differ in length")
        if m and (self.iterations.min() < 1):
            bad = int(np.flatnonzero(self.iterations < 1)[0])
            raise InputError(
                f"run {self._name(bad)} made {int(self.iterations[bad])} model calls; every run needs at least one"
            )
        if m and (self.type_code.min() < 0 or self.type_code.max() >= len(self.task_types)):
            raise InputError(f"type_code outside 0..{len(self.task_types) - 1}; give one name per code in task_types")
        if len(self.token_value) and not np.all(np.isfinite(self.token_value) & (self.token_value >= 0)):
            raise InputError("token counts must be finite and non-negative; fix the recorded usage")

    def _name(self, i: int) -> str:
        return repr(self.run_ids[i]) if self.run_ids is not None else f"#{i}"

    @property
    def runs(self) -> int:
        return len(self.type_code)

    @classmethod
    def from_columns(
        cls,
        iterations: np.ndarray,
        status: np.ndarray,
        token_matrix: np.ndarray,
        *,
        task_types: tuple[str, ...] = (UNTYPED,),
        type_code: np.ndarray | None = None,
    ) -> "RunArrays":
        """Build from dense columns: ``token_matrix[i, n-1]`` is the tokens of call n of run i (NaN where absent
        or past the run's end). Used by synthetic data, the benchmark and a live runner that keeps arrays."""
        iterations = np.asarray(iterations, dtype=np.int64)
        m = len(iterations)
        token_matrix = np.asarray(token_matrix, dtype=np.float64)
        token_matrix = token_matrix.reshape(m, token_matrix.size // m if m else 0)
        cols = np.arange(token_matrix.shape[1])
        present = (cols[None, :] < iterations[:, None]) & ~np.isnan(token_matrix)
        run_idx, col_idx = np.nonzero(present)
        return cls(
            task_types=tuple(task_types),
            type_code=np.zeros(m, np.int64) if type_code is None else np.asarray(type_code, np.int64),
            iterations=iterations,
            status=np.asarray(status, dtype=np.int8),
            token_run=run_idx.astype(np.int64),
            token_iter=(col_idx + 1).astype(np.int64),
            token_value=token_matrix[run_idx, col_idx],
        )

    def select(self, code: int) -> "RunArrays":
        """The runs of one task type (codes renumbered so the result holds one type, code 0)."""
        keep = self.type_code == code
        new_index = np.cumsum(keep) - 1
        tok_keep = keep[self.token_run]
        ids = None if self.run_ids is None else tuple(np.asarray(self.run_ids, dtype=object)[keep])
        return RunArrays(
            task_types=(self.task_types[code],),
            type_code=np.zeros(int(keep.sum()), np.int64),
            iterations=self.iterations[keep],
            status=self.status[keep],
            token_run=new_index[self.token_run[tok_keep]],
            token_iter=self.token_iter[tok_keep],
            token_value=self.token_value[tok_keep],
            run_ids=ids,
        )


class RunAccumulator:
    """Collects runs one :class:`RunRecord` at a time (a live runner can ``add`` as runs finish)."""

    def __init__(self) -> None:
        self._types: dict[str, int] = {}
        self._type_code: list[int] = []
        self._iterations: list[int] = []
        self._status: list[int] = []
        self._run_ids: list[str] = []
        self._tok_run: list[int] = []
        self._tok_iter: list[int] = []
        self._tok_value: list[float] = []

    def __len__(self) -> int:
        return len(self._iterations)

    def add(self, record: RunRecord) -> None:
        """Add one run. Raises :class:`InputError` for a run that made no model call."""
        i = len(self._iterations)
        n = len(record.events) if record.events else (record.end.iterations if record.end else 0)
        if n < 1:
            raise InputError(
                f"run {record.run_id!r} has no iterations (no events and RunEnd.iterations=0); "
                "drop it from the calibration input or record its model calls"
            )
        ttype = record.task_type or next((e.task_type for e in record.events if e.task_type), None) or UNTYPED
        self._type_code.append(self._types.setdefault(ttype, len(self._types)))
        self._iterations.append(n)
        self._status.append(int(run_status(record)))
        self._run_ids.append(record.run_id)
        for pos, event in enumerate(record.events, start=1):
            tokens = iteration_tokens(event)
            if tokens is not None:
                self._tok_run.append(i)
                self._tok_iter.append(pos)
                self._tok_value.append(tokens)

    def extend(self, records: Iterable[RunRecord]) -> "RunAccumulator":
        for record in records:
            self.add(record)
        return self

    def arrays(self) -> RunArrays:
        """The runs added so far, as columns (task types in order of first appearance)."""
        return RunArrays(
            task_types=tuple(self._types),
            type_code=np.asarray(self._type_code, dtype=np.int64),
            iterations=np.asarray(self._iterations, dtype=np.int64),
            status=np.asarray(self._status, dtype=np.int8),
            token_run=np.asarray(self._tok_run, dtype=np.int64),
            token_iter=np.asarray(self._tok_iter, dtype=np.int64),
            token_value=np.asarray(self._tok_value, dtype=np.float64),
            run_ids=tuple(self._run_ids),
        )


def extract_runs(records: Iterable[RunRecord]) -> RunArrays:
    """One pass over ``records`` (any iterable, e.g. a generator from a live runner) -> :class:`RunArrays`."""
    return RunAccumulator().extend(records).arrays()
