"""Many synthetic runs as one Arrow table, built column by column (for the scale benchmark and tests).

    table = synthetic_table(1_000_000, seed=0)        # pyguard's Parquet schema, ~7 model calls per run
    pyarrow.parquet.write_table(table, "runs.parquet")

Each run is a recorded, guarded-looking run of a tool-calling agent: call 1 carries the user's task, call i+1
the result of call i's one tool call, the last call answers (or, for a run cut off, still asks for a tool). A
share of the runs loop: from some call on they ask for the same thing and get the same result back. Outcomes:
looping runs ``stalled`` or ``expired`` (censored), the others ``succeeded`` or ``failed``. Token counts grow
with the call index. Seeded: the same ``n`` and ``seed`` give the same table.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyguard.base._extras import require
from pyguard.store.parquet import run_schema

__all__: list[str] = []

_TOOLS = ("get_shipment_status", "search_orders", "lookup_customer", "list_invoices", "check_inventory")
_WORDS = ("in transit", "delivered", "delayed", "held at customs", "out for delivery", "returned", "lost", "pending")


def synthetic_batches(n: int, seed: int = 0, *, batch: int = 100_000, **kwargs: Any) -> Iterator[Any]:
    """The same runs as :func:`synthetic_table`, as tables of at most ``batch`` runs (bounded memory)."""
    for k, first in enumerate(range(0, n, batch)):
        yield _table(min(batch, n - first), [seed, k], first, **kwargs)


def synthetic_table(n: int, seed: int = 0, **kwargs: Any) -> Any:
    """``n`` synthetic runs in :func:`pyguard.store.parquet.run_schema` (nested events, no decisions)."""
    pa = require("pyarrow", extra="columnar", feature="synthetic Parquet runs")

    tables = list(synthetic_batches(n, seed, **kwargs))
    return pa.concat_tables(tables) if tables else run_schema().empty_table()


@dataclass(frozen=True)
class _Calls:
    """The model calls of ``n`` runs, one entry per call (``run_of``: its run) unless named per run."""

    n: int
    first: int
    loops: np.ndarray
    """Per run: does it loop."""
    iters: np.ndarray
    """Per run: its model calls."""
    cut: np.ndarray
    """Per run: cut off while still asking for a tool."""
    offsets: np.ndarray
    total: int
    run_of: np.ndarray
    pos: np.ndarray
    """1-based call index."""
    has_call: np.ndarray
    looping: np.ndarray
    tool: np.ndarray
    word: np.ndarray
    key: np.ndarray
    inp: np.ndarray
    out: np.ndarray

    @property
    def gid(self) -> list[int]:
        """Per call: the run's number across batches."""
        return (self.run_of + self.first).tolist()


def _table(
    n: int,
    seed: list[int],
    first: int,
    *,
    task_types: Sequence[str] = ("lookup", "triage", "refund"),
    loop_share: float = 0.25,
    longest_run: int = 24,
) -> Any:
    pa = require("pyarrow", extra="columnar", feature="synthetic Parquet runs")

    rng = np.random.default_rng(seed)  # drawn in one order: the calls' shape, their latencies, the runs' types
    calls = _draw_calls(rng, n, first, loop_share, longest_run)
    events = _events(pa, rng, calls)
    return _runs(pa, rng, calls, events, task_types)


def _draw_calls(rng: np.random.Generator, n: int, first: int, loop_share: float, longest_run: int) -> _Calls:
    loops = rng.random(n) < loop_share
    iters = np.where(loops, rng.integers(6, longest_run + 1, n), 1 + rng.geometric(0.22, n)).clip(1, longest_run)
    loop_from = np.where(loops, rng.integers(2, 5, n), iters + 1)  # first looping call (1-based)
    cut = loops & (rng.random(n) < 0.5)  # cut off while still asking for a tool
    offsets = np.concatenate([[0], np.cumsum(iters)]).astype(np.int32)
    total = int(offsets[-1])
    run_of = np.repeat(np.arange(n), iters)
    pos = np.arange(total) - offsets[run_of] + 1  # 1-based call index
    last = pos == iters[run_of]
    has_call = ~last | cut[run_of]
    looping = pos >= loop_from[run_of]
    tool = rng.integers(0, len(_TOOLS), n)[run_of]
    word = rng.integers(0, len(_WORDS), total)
    key = np.where(looping, loop_from[run_of], pos)  # the argument repeats once the run loops
    inp = 180 + 140 * pos + rng.integers(0, 40, total)
    out = rng.integers(15, 60, total)
    return _Calls(
        n, first, loops, iters, cut, offsets, total, run_of, pos, has_call, looping, tool, word, key, inp, out
    )


def _events(pa: Any, rng: np.random.Generator, c: _Calls) -> Any:
    """The runs' events (one per model call), each with its tool call and its observation."""
    s = pa.string()
    total, pos, has_call = c.total, c.pos, c.has_call
    gid = c.gid
    args = [f'{{"id": "{r}-{k}"}}' for r, k in zip(gid, c.key.tolist(), strict=False)]
    result = [
        f'{{"id": "{r}-{k}", "status": "{_WORDS[w]}"}}'
        for r, k, w in zip(gid, c.key.tolist(), np.where(c.looping, 0, c.word).tolist(), strict=False)
    ]
    tool_names = np.asarray(_TOOLS, dtype=object)[c.tool]
    call_idx = np.flatnonzero(has_call)
    calls = pa.StructArray.from_arrays(
        [
            pa.array([f"call_{i}" for i in call_idx.tolist()], s),
            pa.array(tool_names[call_idx], s),
            pa.array(np.asarray(args, dtype=object)[call_idx], s),
        ],
        names=["id", "name", "arguments"],
    )
    call_offsets = np.concatenate([[0], np.cumsum(has_call)]).astype(np.int32)
    observations = _observations(pa, c, result, tool_names)
    obs_offsets = np.arange(total + 1, dtype=np.int32)
    none_s = pa.nulls(total, s)
    return pa.StructArray.from_arrays(
        [
            pa.array(pos, pa.int64()),
            pa.array(np.full(total, "openai", object), s),
            pa.array(np.full(total, "gpt-4o-mini", object), s),
            pa.array(c.inp, pa.int64()),
            pa.array(c.out, pa.int64()),
            pa.array(c.inp + c.out, pa.int64()),
            pa.array(rng.gamma(4.0, 200.0, total), pa.float64()),
            pa.array(np.where(has_call, "TOOL_EXECUTION", "STOP"), s),
            pa.ListArray.from_arrays(pa.array(call_offsets), calls),
            pa.ListArray.from_arrays(pa.array(obs_offsets), observations),
            pa.array(np.where(has_call, None, "The order is on its way."), s),  # type: ignore[call-overload]  # numpy's stubs reject None for x/y, which object arrays take
            none_s,
            none_s,
            pa.nulls(total, pa.float64()),
            *(none_s for _ in range(5)),  # request/response model, response id, request parameters, trace context
        ],
        fields=list(run_schema().field("events").type.value_type),
    )


def _observations(pa: Any, c: _Calls, result: list[str], tool_names: np.ndarray) -> Any:
    """Observations: the user's task at call 1, else the previous call's result."""
    s = pa.string()
    first_call = c.pos == 1
    obs_kind = np.where(first_call, "user", "tool")
    prev = np.arange(c.total) - 1
    obs_text = [
        f"Task {r}: where is order {r}?" if f else result[p]
        for r, f, p in zip(c.gid, first_call.tolist(), prev.tolist(), strict=False)
    ]
    obs_call = [None if f else f"call_{p}" for f, p in zip(first_call.tolist(), prev.tolist(), strict=False)]
    obs_tool = [None if f else tool_names[p] for f, p in zip(first_call.tolist(), prev.tolist(), strict=False)]
    return pa.StructArray.from_arrays(
        [
            pa.array(obs_kind, s),
            pa.array(obs_call, s),
            pa.array(obs_tool, s),
            pa.array(obs_text, s),
            pa.array(np.zeros(c.total, bool)),
            pa.nulls(c.total, pa.int64()),
        ],
        names=["kind", "tool_call_id", "tool_name", "text", "is_error", "whole_chars"],
    )


def _runs(pa: Any, rng: np.random.Generator, c: _Calls, events: Any, task_types: Sequence[str]) -> Any:
    """One row per run around its ``events``: its footer (outcome, tokens, calls) and its start."""
    s = pa.string()
    n, first, offsets, cut = c.n, c.first, c.offsets, c.cut
    types = np.asarray(task_types, dtype=object)[rng.integers(0, len(task_types), n)]
    ok = rng.random(n) < 0.85
    outcome = np.where(c.loops, np.where(cut, "expired", "stalled"), np.where(ok, "succeeded", "failed"))
    tok_in = np.add.reduceat(c.inp, offsets[:-1]) if n else np.zeros(0, np.int64)
    tok_out = np.add.reduceat(c.out, offsets[:-1]) if n else np.zeros(0, np.int64)
    n_calls = np.add.reduceat(c.has_call.astype(np.int64), offsets[:-1]) if n else np.zeros(0, np.int64)
    nulls = pa.nulls(n, s)
    columns = {
        "run_id": pa.array([f"run-{i:07d}" for i in range(first, first + n)], s),
        "task_type": pa.array(types, s),
        "task": nulls,
        "agent_style": pa.array(np.full(n, "aiservices", object), s),
        "policy": nulls,
        "started_at_ms": pa.nulls(n, pa.float64()),
        "parent_run_id": nulls,
        "complete": pa.array(np.ones(n, bool)),
        "outcome": pa.array(outcome, s),
        "reason": pa.array(np.full(n, "synthetic", object), s),
        "answer": pa.array(np.where(outcome == "succeeded", "The order is on its way.", None), s),  # type: ignore[call-overload]  # as above
        "iterations": pa.array(c.iters, pa.int64()),
        "tool_calls": pa.array(n_calls, pa.int64()),
        "input_tokens": pa.array(tok_in, pa.int64()),
        "output_tokens": pa.array(tok_out, pa.int64()),
        "total_tokens": pa.array(tok_in + tok_out, pa.int64()),
        "cost": pa.nulls(n, pa.float64()),
        "wall_ms": pa.nulls(n, pa.float64()),
        "evidence": pa.array(np.full(n, "{}", object), s),
        "success_label": pa.nulls(n, pa.bool_()),
        "censored": pa.array(cut),
        "tokens_partial": pa.array(np.zeros(n, bool)),
        "answer_source": pa.nulls(n, s),
        "wrap_up_tokens": pa.nulls(n, pa.int64()),
        "tool_calls_executed": pa.nulls(n, pa.int64()),
        "events": pa.ListArray.from_arrays(pa.array(offsets), events),
        "decisions": pa.array([[]] * n, run_schema().field("decisions").type),
    }
    return pa.Table.from_pydict(columns, schema=run_schema())
