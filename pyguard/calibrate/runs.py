"""From recorded runs to numpy columns: one pass over the records, everything else is vectorised.

Calibration needs, per run, its task type, the number of model calls it made (``n``), how it ended
(success, failure, or censored) and the tokens of each of its model calls. :class:`RunArrays` holds those as
flat numpy arrays; :class:`RunAccumulator` builds them from :class:`~pyguard.base.events.RunRecord` s one record
at a time, so a live calibration can feed runs as they finish.

How a run's status is read: from evidence (:func:`read_run`, one :class:`Reading` per unit says why).

- A run that reached the cap it ran under is *censored*: its recording says so (a harness cut such as
  ``step_limit`` or a ``halted``/``truncated`` field: ``evidence["cut_off"]``), or a live run's footer does
  (``expired``: the agent's own cap or pyguard's fail-safe). So is a run with no footer, and one a guard stopped,
  cancelled or that ended in a guard error.
- A recording that ends while the model still requests an ordinary tool (``cut_off="recording_ends"``) says
  nothing about how it ended. Labelled successful: a success (its last call was the final one). Labelled failed:
  a *failure* when it ended below the longest run of its task type and source (the recording's cap, inferred and
  stated), *censored* at that length. Unlabelled: censored (cut while calling tools, and nothing says it ended).
- Otherwise the label (``RunEnd.success_label``), else the footer's outcome, says success or failure.

A censored run is *not* a failure at every n: it tells us only that the run had not finished after its n calls.
:func:`run_status` is the reading of one run alone (a labelled failure ending in a tool call is a failure there:
the longest run of its group is only known over all runs).

Units. A conversation is split into user turns (:func:`pyguard.base.events.turn_starts`): LangChain4j's
``maxToolCallingRoundTrips`` counts model calls per ``chat()`` call, i.e. per turn. Every turn is one unit of
the columns (``n`` counts the calls of that turn); a turn that was followed by another user message ended with an
answer and counts as a success (the user went on), the last turn takes the run's status. A run of one turn is one
unit, as before. ``RunArrays.run_index`` maps units back to runs; ``multi_turn`` names the task types with
conversations of more than one turn.

Tokens. A call's tokens are its recorded usage. With ``estimate_tokens=True`` a call without usage gets an
estimate from text length (the characters of everything the model had read and written so far, divided by
``chars_per_token``); ``token_estimated`` marks those entries so the report can say so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from pyguard.base.ending import verdict
from pyguard.base.errors import InputError
from pyguard.base.events import UNTYPED, IterationEvent, Outcome, RunRecord, turn_starts

__all__: list[str] = []


class RunStatus(IntEnum):
    """How a run ended, as calibration sees it. The values index the rows of an event-count matrix."""

    CENSORED = 0
    SUCCESS = 1
    FAILURE = 2


_EXCEEDED = re.compile(r"exceeded (\d+) (?:tool calling round trips|sequential tool)")


def agent_round_trips(record: RunRecord) -> int | None:
    """The agent's own ``maxToolCallingRoundTrips`` when it ended this run (LangChain4j's "exceeded R tool calling
    round trips" in the footer's reason): R round trips end a run at R + 1 model calls."""
    m = _EXCEEDED.search(record.end.reason or "") if record.end is not None else None
    return int(m.group(1)) if m else None


class Reading(IntEnum):
    """Why a unit has its status: the evidence the reading rests on (counted per task type in the report)."""

    ENDED = 0
    """It ended on its own: its label, else its footer, says success or failure."""
    CAP_FIELD = 1
    """Censored: the recording (a harness cut, a ``halted``/``truncated`` field) or a live footer (``expired``)
    says it reached the cap it ran under."""
    NO_FOOTER = 2
    """Censored: no footer (cut short, or still going)."""
    STOPPED = 3
    """Censored: stopped by a guard, cancelled, or a guard error."""
    TOOL_CALL_UNLABELLED = 4
    """Censored: the recording ends while the model calls a tool, with no label and nothing saying it ended."""
    AT_LONGEST_RUN = 5
    """Censored: a labelled failure ending in a tool call at the longest run of its task type and source."""
    FAILED_EARLY = 6
    """Failure: a labelled failure ending in a tool call below the longest run of its task type and source."""


def read_run(record: RunRecord) -> tuple[RunStatus, Reading]:
    """One run's status and the evidence for it, alone (a labelled failure ending in a tool call is read as
    :attr:`Reading.FAILED_EARLY`; :class:`RunAccumulator` turns it censored at the longest run of its group)."""
    end = record.end
    if end is None:
        return RunStatus.CENSORED, Reading.NO_FOOTER
    cut = end.evidence.get("cut_off") if end.evidence.get("imported_from") is not None else None
    if cut == "recording_ends" and end.success_label is not True:
        if end.success_label is False:
            return RunStatus.FAILURE, Reading.FAILED_EARLY
        return RunStatus.CENSORED, Reading.TOOL_CALL_UNLABELLED
    v = verdict(end)
    if v.censored:
        cap = end.censored or end.outcome is Outcome.EXPIRED
        return RunStatus.CENSORED, Reading.CAP_FIELD if cap else Reading.STOPPED
    return (RunStatus.SUCCESS if v.event_success else RunStatus.FAILURE), Reading.ENDED


def run_status(record: RunRecord) -> RunStatus:
    """The calibration status of one run alone (:func:`read_run`; see the module docstring for the rules)."""
    return read_run(record)[0]


def iteration_tokens(event: IterationEvent) -> float | None:
    """Tokens of one model call (:attr:`pyguard.base.events.IterationEvent.tokens`) as a float; None when unknown."""
    tokens = event.tokens
    return None if tokens is None else float(tokens)


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
    run_index: np.ndarray | None = None
    """The run each unit belongs to (units are user turns; None: one unit per run)."""
    multi_turn: tuple[str, ...] = ()
    """Task types with at least one conversation of several user turns (calibrated per turn)."""
    token_estimated: np.ndarray | None = None
    """Per token entry: True when the count is a text-length estimate, not recorded usage."""
    reading: np.ndarray | None = None
    """Per unit: the :class:`Reading` its status rests on (None: not known, e.g. columns built elsewhere)."""
    longest_run: np.ndarray | None = None
    """Per unit: the longest run of its task type and source (the inferred cap a labelled failure ending in a tool
    call is compared with); 0 where it does not apply."""
    agent_round_trips: np.ndarray | None = None
    """Per unit: the agent's own ``maxToolCallingRoundTrips`` when it ended the unit (:func:`agent_round_trips`), else 0."""
    run_cap: np.ndarray | None = None
    """Per unit: the cap on model calls a live calibration ran it under (its footer's ``calibration.cap``), else 0."""

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
    ) -> RunArrays:
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

    def select(self, code: int) -> RunArrays:
        """The runs of one task type (codes renumbered so the result holds one type, code 0)."""
        keep = self.type_code == code
        new_index = np.cumsum(keep) - 1
        tok_keep = keep[self.token_run]
        ids = None if self.run_ids is None else tuple(np.asarray(self.run_ids, dtype=object)[keep])
        name = self.task_types[code]
        return RunArrays(
            task_types=(self.task_types[code],),
            type_code=np.zeros(int(keep.sum()), np.int64),
            iterations=self.iterations[keep],
            status=self.status[keep],
            token_run=new_index[self.token_run[tok_keep]],
            token_iter=self.token_iter[tok_keep],
            token_value=self.token_value[tok_keep],
            run_ids=ids,
            run_index=None if self.run_index is None else self.run_index[keep],
            multi_turn=(name,) if name in self.multi_turn else (),
            token_estimated=None if self.token_estimated is None else self.token_estimated[tok_keep],
            reading=None if self.reading is None else self.reading[keep],
            longest_run=None if self.longest_run is None else self.longest_run[keep],
            agent_round_trips=None if self.agent_round_trips is None else self.agent_round_trips[keep],
            run_cap=None if self.run_cap is None else self.run_cap[keep],
        )

    @property
    def run_count(self) -> int:
        """Runs (conversations), as opposed to units (turns)."""
        return self.runs if self.run_index is None else len(np.unique(self.run_index))


def censor_at_longest_run(
    iterations: np.ndarray, status: np.ndarray, reading: np.ndarray, groups: list[tuple[str, str, str] | None]
) -> np.ndarray:
    """Censor (in place) each labelled failure that ended in a tool call (:attr:`Reading.FAILED_EARLY`) at the
    longest run of its group, ``(task type, format, source)`` per unit (None: not an imported recording's last
    turn); returns that longest run per unit (0 where no group). A source holding a single run of its type (a folder
    of one file per run) counts with the other sources of its format."""
    longest = np.zeros(len(iterations), np.int64)
    members: dict[tuple[str, str, str], list[int]] = {}
    for i, g in enumerate(groups):
        if g is not None:
            members.setdefault(g, []).append(i)
    merged: dict[tuple[str, str, str], list[int]] = {}
    for g, idx in members.items():
        merged.setdefault(g if len(idx) > 1 else (g[0], g[1], "*"), []).extend(idx)
    for idx in merged.values():
        longest[idx] = int(iterations[idx].max())
    at_cap = (reading == Reading.FAILED_EARLY) & (iterations >= longest)
    status[at_cap] = RunStatus.CENSORED
    reading[at_cap] = Reading.AT_LONGEST_RUN
    return longest


class RunAccumulator:
    """Collects runs one :class:`RunRecord` at a time (a live runner can ``add`` as runs finish)."""

    def __init__(self, *, estimate_tokens: bool = False, chars_per_token: float = 4.0) -> None:
        self.estimate_tokens = estimate_tokens
        self.chars_per_token = chars_per_token
        self._types: dict[str, int] = {}
        self._multi: set[str] = set()
        self._runs = 0
        self._type_code: list[int] = []
        self._iterations: list[int] = []
        self._status: list[int] = []
        self._run_ids: list[str] = []
        self._run_index: list[int] = []
        self._tok_run: list[int] = []
        self._tok_iter: list[int] = []
        self._tok_value: list[float] = []
        self._tok_est: list[bool] = []
        self._reading: list[int] = []
        self._agent_rt: list[int] = []
        self._run_cap: list[int] = []
        self._group: list[tuple[str, str, str] | None] = []

    def __len__(self) -> int:
        return len(self._iterations)

    def _estimates(self, events: list[IterationEvent]) -> list[float]:
        """Text-length token estimates per call: everything read so far (input) plus what it wrote (output)."""
        out: list[float] = []
        seen = 0  # characters the model has read or written so far
        for e in events:
            read = sum(o.chars for o in e.observations)  # a windowed result's whole size
            wrote = len(e.text or "") + sum(len(c.name) + len(c.arguments) for c in e.tool_calls)
            out.append((seen + read + wrote) / self.chars_per_token)
            seen += read + wrote
        return out

    def add(self, record: RunRecord) -> None:
        """Add one run (one unit per user turn). Raises :class:`InputError` for a run that made no model call."""
        events = record.events
        n = len(events) if events else (record.end.iterations if record.end else 0)
        if n < 1:
            raise InputError(
                f"run {record.run_id!r} has no iterations (no events and RunEnd.iterations=0); "
                "drop it from the calibration input or record its model calls"
            )
        ttype = record.task_type or next((e.task_type for e in events if e.task_type), None) or UNTYPED
        code = self._types.setdefault(ttype, len(self._types))
        starts = turn_starts(events) if events else [0]
        status, reading = read_run(record)
        if len(starts) > 1:
            self._multi.add(ttype)
        ends = starts[1:] + [n]
        first_unit = len(self._iterations)
        evidence = record.end.evidence if record.end is not None else {}
        fmt = evidence.get("imported_from")
        group = None if fmt is None else (ttype, str(fmt), str(evidence.get("source", "")))
        rt = agent_round_trips(record) or 0
        cap = evidence.get("calibration", {}).get("cap") if isinstance(evidence.get("calibration"), dict) else None
        run_cap = cap if isinstance(cap, int) and not isinstance(cap, bool) else 0
        for k, (lo, hi) in enumerate(zip(starts, ends, strict=False)):
            last = hi == n
            self._iterations.append(hi - lo)
            self._status.append(int(status) if last else int(RunStatus.SUCCESS))
            self._reading.append(int(reading) if last else int(Reading.ENDED))
            self._group.append(group if last else None)
            self._agent_rt.append(rt if last else 0)
            self._run_cap.append(run_cap)
            self._run_ids.append(record.run_id if len(starts) == 1 else f"{record.run_id}#turn{k + 1}")
        self._type_code.extend([code] * len(starts))
        self._run_index.extend([self._runs] * len(starts))
        estimates = self._estimates(events) if self.estimate_tokens else None
        unit, lo, k = first_unit, 0, 0
        for pos, event in enumerate(events):
            if k + 1 < len(starts) and pos == starts[k + 1]:
                k, unit, lo = k + 1, unit + 1, pos
            value = iteration_tokens(event)
            estimated = False
            if value is None:
                if estimates is None:
                    continue
                value, estimated = estimates[pos], True
            self._tok_run.append(unit)
            self._tok_iter.append(pos - lo + 1)
            self._tok_value.append(value)
            self._tok_est.append(estimated)
        self._runs += 1

    def extend(self, records: Iterable[RunRecord]) -> RunAccumulator:
        for record in records:
            self.add(record)
        return self

    def arrays(self) -> RunArrays:
        """The runs added so far, as columns (task types in order of first appearance). A labelled failure that
        ended in a tool call is censored when it reached the longest run of its task type and source."""
        iterations = np.asarray(self._iterations, dtype=np.int64)
        status = np.asarray(self._status, dtype=np.int8)
        reading = np.asarray(self._reading, dtype=np.int8)
        longest = censor_at_longest_run(iterations, status, reading, self._group)
        return RunArrays(
            task_types=tuple(self._types),
            type_code=np.asarray(self._type_code, dtype=np.int64),
            iterations=iterations,
            status=status,
            token_run=np.asarray(self._tok_run, dtype=np.int64),
            token_iter=np.asarray(self._tok_iter, dtype=np.int64),
            token_value=np.asarray(self._tok_value, dtype=np.float64),
            run_ids=tuple(self._run_ids),
            run_index=np.asarray(self._run_index, dtype=np.int64),
            multi_turn=tuple(t for t in self._types if t in self._multi),
            token_estimated=np.asarray(self._tok_est, dtype=bool),
            reading=reading,
            longest_run=longest,
            agent_round_trips=np.asarray(self._agent_rt, dtype=np.int64),
            run_cap=np.asarray(self._run_cap, dtype=np.int64),
        )


def extract_runs(
    records: Iterable[RunRecord], *, estimate_tokens: bool = False, chars_per_token: float = 4.0
) -> RunArrays:
    """One pass over ``records`` (any iterable, e.g. a generator from a live runner) -> :class:`RunArrays`."""
    return RunAccumulator(estimate_tokens=estimate_tokens, chars_per_token=chars_per_token).extend(records).arrays()
