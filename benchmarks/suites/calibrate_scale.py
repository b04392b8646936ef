"""How long ``pyguard calibrate`` takes on many recorded runs: extraction and estimation timed separately.

``python benchmarks/run.py calibrate_scale`` (100,000 runs) or ``--quick`` (10,000 runs).

Runs are synthetic (:mod:`pyguard.calibrate.synthetic`), four task types of equal size, with censoring.
- extraction: RunRecords (already in memory, as ``load_runs`` returns them) -> numpy columns, one pass;
- estimation: ``calibrate_arrays`` with the default 1,000 bootstrap resamples: c(n), E[cost](N), N* and its
  interval, the token budget and its interval, for every task type.
Reading the trace files themselves is the trace reader's cost and is not measured here.
"""

from __future__ import annotations

import time

import numpy as np

from pyguard.base.events import IterationEvent, Outcome, RunEnd, RunRecord, RunStart, ToolCall
from pyguard.calibrate import RunArrays, calibrate_arrays, extract_runs, make_config
from pyguard.calibrate.runs import RunStatus
from pyguard.calibrate.synthetic import SyntheticType, sample_runs

TYPES = (
    SyntheticType(name="lookup", median_calls=4, spread=0.35, cancel_share=0.1),
    SyntheticType(name="incident", median_calls=8, spread=0.5, solvable=0.7, cancel_share=0.2),
    SyntheticType(name="refund", median_calls=3, spread=0.3, failure_hazard=0.05),
    SyntheticType(name="report", median_calls=10, spread=0.4, record_cap=40),
)


def _arrays(total: int, rng: np.random.Generator) -> list[RunArrays]:
    names = tuple(t.name for t in TYPES)
    return [sample_runs(t, total // len(TYPES), rng, type_code=i, task_types=names) for i, t in enumerate(TYPES)]


def _records(parts: list[RunArrays]) -> list[RunRecord]:
    """RunRecords for the runs (built with ``model_construct``: fast, and the data is known to be valid)."""
    call = (ToolCall.model_construct(id="c", name="lookup", arguments="{}"),)
    outcome = {
        RunStatus.SUCCESS: Outcome.SUCCEEDED,
        RunStatus.FAILURE: Outcome.FAILED,
        RunStatus.CENSORED: Outcome.EXPIRED,
    }
    records = []
    for part in parts:
        tokens = np.full((part.runs, int(part.iterations.max())), -1)
        tokens[part.token_run, part.token_iter - 1] = part.token_value
        name = part.task_types[int(part.type_code[0])]
        for i in range(part.runs):
            run_id = f"{name}-{i}"
            n = int(part.iterations[i])
            status = RunStatus(int(part.status[i]))
            events = [
                IterationEvent.model_construct(
                    run_id=run_id,
                    index=k,
                    total_tokens=int(tokens[i, k - 1]),
                    input_tokens=None,
                    output_tokens=None,
                    tool_calls=() if (k == n and status is not RunStatus.CENSORED) else call,
                    task_type=name,
                )
                for k in range(1, n + 1)
            ]
            end = RunEnd.model_construct(
                run_id=run_id,
                outcome=outcome[status],
                iterations=n,
                censored=status is RunStatus.CENSORED,
                success_label=None,
            )
            records.append(
                RunRecord.model_construct(
                    start=RunStart.model_construct(run_id=run_id, task_type=name), events=events, end=end
                )
            )
    return records


def _best(fn, repeats: int) -> tuple[float, object]:  # noqa: ANN001
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def run(quick: bool) -> dict:
    total = 10_000 if quick else 100_000
    rng = np.random.default_rng(0)
    parts = _arrays(total, rng)
    records = _records(parts)
    events = sum(len(r.events) for r in records)
    config = make_config(failure_cost=1.0, price_per_1k_tokens=0.01)  # bootstrap 1000 (the default)

    extract_s, arrays = _best(lambda: extract_runs(records), 1 if not quick else 3)
    estimate_s, report = _best(lambda: calibrate_arrays(arrays, config), 3)
    return {
        "runs": len(records),
        "model_calls": events,
        "task_types": len(TYPES),
        "bootstrap": config.bootstrap,
        "extract_s": round(extract_s, 3),
        "estimate_s": round(estimate_s, 3),
        "total_s": round(extract_s + estimate_s, 3),
        "recommended": {t.task_type: [t.recommended_max_iterations, t.ci_low, t.ci_high] for t in report.task_types},
        "command": "python benchmarks/run.py calibrate_scale" + (" --quick" if quick else ""),
    }


def render(result: dict, console) -> None:  # noqa: ANN001
    from rich.table import Table

    table = Table(
        title=f"calibrate: {result['runs']:,} runs, {result['model_calls']:,} model calls, "
        f"{result['task_types']} task types, bootstrap {result['bootstrap']}"
    )
    table.add_column("step")
    table.add_column("seconds", justify="right")
    table.add_row("extraction (RunRecords -> arrays)", f"{result['extract_s']:.3f}")
    table.add_row("estimation (all types, best of 3)", f"{result['estimate_s']:.3f}")
    table.add_row("total", f"{result['total_s']:.3f}")
    console.print(table)
    console.print(
        "N* [CI] per type: " + ", ".join(f"{k} {v[0]} [{v[1]}-{v[2]}]" for k, v in result["recommended"].items()),
        markup=False,
    )
    console.print(f"{result['machine']['cpus']} CPUs, {result['machine']['python']}; {result['command']}", markup=False)
