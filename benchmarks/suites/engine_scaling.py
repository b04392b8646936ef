"""How the engine's decision time per iteration grows with the length of the run.

``python benchmarks/run.py engine_scaling [--quick] [--json]``

For each observation size (1 KB and 100 KB of fresh text per iteration: the worst case for the novelty
memory, which then fills, grows and rotates) and each run length N (10, 100, 1000 iterations), one run of N
iterations goes through ``RunSession.observe`` (fingerprints, novelty, stall rules, caps, budget: everything a
live guard does per model call). Reported per (size, N): the median time of one ``observe`` over the last 10
iterations of the run (the cost of a decision *at* iteration N), and the mean over all N. ``ratio_1000_vs_10``
compares the 1000-iteration figure with the 10-iteration one: flat means close to 1 (target <= 1.5).
``cpu_us_per_decision_at_n``: the same median in this thread's CPU time, which a machine shared with other work
inflates less than the wall time.
Texts are generated before timing; one untimed warm-up run first takes the process's one-time costs (first
calls, caches) off the 10-iteration figure; the garbage collector is run before each timed run (not during it);
each configuration is repeated (quick 3, full 5) and the median taken.

Also reported: ``replay_one_core``, recorded runs replayed per second in this one process
(:func:`pyguard.replay.replay_runs`, no workers): the synthetic labelled runs (every kind, quick 20 seeds, full
100) with the logistics incident, built before timing; best of 3 passes. ``novelty_backend`` says whether the
compiled kernel (``fast`` extra) or numpy scored the shingles. ``prepare_json_100KB``: the text preparation alone
(:func:`pyguard.engine.novelty.prepare_text`) on 100 KB of JSON lines full of ids, timestamps and numbers (seeded),
with and without volatile masking, median of 7: what real tool results cost before any shingle is hashed (the
benchmark's fresh texts above are letters only, which skip the masking).

``by_observation_size``: the time of one decision about one tool result of 1 KB up to 100 MB (quick: up to 1 MB),
the second iteration of a fresh run (the engine reads at most a window of it: :mod:`pyguard.engine.window`); median
of 3 (quick 1), wall and CPU; ``peak_alloc_mb``: the most Python memory allocated at once during one more, untimed,
decision (tracemalloc), against the observation's own size. Target: at most 100 ms for 50 MB and 100 MB.

``adversarial``: this thread's CPU milliseconds for text operations on 1 MiB of each crafted shape of
:mod:`pyguard.testing.adversarial` (a token without digits, dashes, hex, timestamps, ...): one decision about a tool
result of that shape (the third call of a run repeating one failing lookup), ``error_kind`` on one 1 MiB token, and
four decisions whose tool name is 1 MiB long. Linear operations take milliseconds; a pattern quadratic in a token's
length would take hours. Target: under 1,000 ms each (``tests/unit/engine/test_engine_adversarial_text.py`` checks
what those decisions say, not their time).
"""

from __future__ import annotations

import gc
import json
import random
import statistics
import time

import numpy as np

from pyguard.base.events import IterationEvent, Observation, RunRecord, RunStart, ToolCall
from pyguard.engine import Policy, PolicyConfig, shingles
from pyguard.engine.novelty import prepare_text
from pyguard.replay import replay_runs
from pyguard.testing.adversarial import MIB, adversarial_texts
from pyguard.testing.synthetic import labelled_set, logistics_incident

SIZES = {"1KB": 1_000, "100KB": 100_000}
OBSERVATION_SIZES = {
    "1KB": 1_000,
    "100KB": 100_000,
    "1MB": 1_000_000,
    "10MB": 10_000_000,
    "50MB": 50_000_000,
    "100MB": 100_000_000,
}
QUICK_OBSERVATION_SIZES = ("1KB", "100KB", "1MB")
DECISION_TARGET_MS = 100.0
ADVERSARIAL_TARGET_MS = 1000.0
LENGTHS = (10, 100, 1000)
WINDOW = 10


class _Texts:
    """Fresh pseudo-text of a given size, from a seeded vocabulary (numpy)."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
        lengths = self.rng.integers(2, 10, size=50_000)
        self.vocab = np.array(["".join(self.rng.choice(letters, size=n)) for n in lengths])

    def make(self, chars: int) -> str:
        words = self.vocab[self.rng.integers(0, self.vocab.size, size=chars // 5 + 8)]
        return " ".join(words.tolist())[:chars]


def _events(n: int, chars: int, texts: _Texts) -> list[IterationEvent]:
    out = []
    prev: str | None = None
    for i in range(1, n + 1):
        obs = (
            (Observation(kind="user", text="Summarise the corpus."),)
            if prev is None
            else (Observation(tool_call_id=f"c{i - 1}", tool_name="read_chunk", text=texts.make(chars)),)
        )
        call = ToolCall(id=f"c{i}", name="read_chunk", arguments=f'{{"chunk": {i}}}')
        out.append(
            IterationEvent(
                run_id="bench", index=i, input_tokens=1000, output_tokens=20, tool_calls=(call,), observations=obs
            )
        )
        prev = "x"
    return out


def _time_run(events: list[IterationEvent]) -> tuple[list[float], list[float]]:
    """Wall and CPU (this thread's) microseconds of each ``observe``."""
    n = len(events)
    config = PolicyConfig(base_budget=n + 1, hard_cap=n + 1)
    session = Policy(config).new_run("bench")
    times, cpu = [], []
    for ev in events:
        c0 = time.thread_time_ns()
        t0 = time.perf_counter_ns()
        d = session.observe(ev)
        times.append((time.perf_counter_ns() - t0) / 1000.0)
        cpu.append((time.thread_time_ns() - c0) / 1000.0)
        if d.stops:  # must not happen: fresh content every iteration
            raise RuntimeError(f"the benchmark run was stopped at {d.iteration}: {d.reason}")
    return times, cpu


def _replay_one_core(quick: bool) -> dict:
    runs = labelled_set(range(20 if quick else 100)) + [logistics_incident()]
    records = [RunRecord(start=RunStart(run_id=r.events[0].run_id), events=list(r.events)) for r in runs]
    events = sum(len(r.events) for r in records)
    replay_runs(records[:20])  # warm-up, untimed
    best = float("inf")
    for _ in range(3):
        gc.collect()
        t0 = time.perf_counter()
        replay_runs(records)
        best = min(best, time.perf_counter() - t0)
    return {
        "runs": len(records),
        "events": events,
        "seconds": round(best, 3),
        "runs_per_s": round(len(records) / best),
        "events_per_s": round(events / best),
    }


def _json_lines(chars: int, seed: int) -> str:
    rng = random.Random(seed)
    words = "order status shipped customer invoice warehouse pending delivered error retry request total".split()
    lines: list[str] = []
    size = 0
    while size < chars:
        record = {
            "id": f"SO-{rng.randint(10000, 99999)}",
            "status": rng.choice(words),
            "checked_at": f"2024-05-{rng.randint(10, 28)}T12:{rng.randint(10, 59)}:03Z",
            "note": " ".join(rng.choices(words, k=8)),
            "amount": rng.randint(1, 5000),
            "took": f"{rng.random():.2f}s",
        }
        lines.append(json.dumps(record))
        size += len(lines[-1]) + 1
    return "\n".join(lines)[:chars]


def _prepare_json() -> dict:
    texts = [_json_lines(100_000, seed) for seed in range(7)]
    out = {}
    for label, mask in (("masked_us", True), ("unmasked_us", False)):
        times = []
        for text in texts:
            t0 = time.perf_counter_ns()
            prepare_text.__wrapped__(text, ("SO-12345",), mask)
            times.append((time.perf_counter_ns() - t0) / 1000.0)
        out[label] = round(statistics.median(times), 1)
    return out


def _one_result(chars: int, texts: _Texts) -> tuple[IterationEvent, IterationEvent]:
    """The two events of a run whose second model call reads one tool result of ``chars`` characters."""
    block = texts.make(min(chars, 1_000_000))
    text = (block * (chars // max(len(block), 1) + 1))[:chars]
    call = ToolCall(id="c1", name="read_file", arguments='{"path": "dump.log"}')
    first = IterationEvent(
        run_id="size", index=1, tool_calls=(call,), observations=(Observation(kind="user", text="Read the dump."),)
    )
    second = IterationEvent(
        run_id="size",
        index=2,
        tool_calls=(ToolCall(id="c2", name="read_file", arguments='{"path": "dump2.log"}'),),
        observations=(Observation(tool_call_id="c1", tool_name="read_file", text=text),),
    )
    return first, second


def _decide(first: IterationEvent, second: IterationEvent) -> tuple[float, float]:
    """Wall and CPU milliseconds of the decision about ``second`` in a fresh run."""
    session = Policy(PolicyConfig()).new_run("size")
    session.observe(first)
    gc.collect()
    c0 = time.thread_time_ns()
    t0 = time.perf_counter_ns()
    session.observe(second)
    return (time.perf_counter_ns() - t0) / 1e6, (time.thread_time_ns() - c0) / 1e6


def _by_observation_size(quick: bool, texts: _Texts) -> list[dict]:
    import tracemalloc

    rows = []
    labels = QUICK_OBSERVATION_SIZES if quick else tuple(OBSERVATION_SIZES)
    for label in labels:
        chars = OBSERVATION_SIZES[label]
        first, second = _one_result(chars, texts)
        timed = [_decide(first, second) for _ in range(1 if quick else 3)]
        tracemalloc.start()
        try:
            _decide(first, second)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        ms = statistics.median(t[0] for t in timed)
        rows.append(
            {
                "observation": label,
                "chars": chars,
                "ms_per_decision": round(ms, 2),
                "cpu_ms_per_decision": round(statistics.median(t[1] for t in timed), 2),
                "peak_alloc_mb": round(peak / 1e6, 2),
                "within_target": ms <= DECISION_TARGET_MS,
                "repeats": len(timed),
            }
        )
        del first, second
    return rows


def _cpu_ms(fn) -> float:  # noqa: ANN001
    c0 = time.thread_time_ns()
    fn()
    return round((time.thread_time_ns() - c0) / 1e6, 2)


def _lookup(index: int, name: str, text: str, error: bool) -> IterationEvent:
    """Model call ``index`` of a run calling ``name`` with the same arguments, after a result ``text``."""
    previous = f"c{index - 1}"
    observations = (
        (Observation(tool_call_id=previous, tool_name=name, text=text, is_error=error),)
        if index > 1
        else (Observation(kind="user", text="Look it up."),)
    )
    call = ToolCall(id=f"c{index}", name=name, arguments='{"id": 1}')
    return IterationEvent(run_id="adv", index=index, tool_calls=(call,), observations=observations)


def _adversarial() -> dict:
    """CPU milliseconds of text operations on 1 MiB of each crafted shape (see the module docstring)."""
    from pyguard.engine.result_kinds import error_kind

    rows = []
    for shape, text in adversarial_texts(MIB).items():
        session = Policy(PolicyConfig()).new_run("adv")
        session.observe(_lookup(1, "lookup", "", False))
        session.observe(_lookup(2, "lookup", text, True))
        third = _lookup(3, "lookup", text, True)
        gc.collect()
        rows.append({"shape": shape, "cpu_ms_per_decision": _cpu_ms(lambda s=session, e=third: s.observe(e))})
    long_name = "a" * MIB
    session = Policy(PolicyConfig()).new_run("adv")
    events = [_lookup(i, long_name, "same result", False) for i in range(1, 5)]
    rows.append(
        {
            "shape": "1 MiB tool name (4 decisions)",
            "cpu_ms_per_decision": _cpu_ms(lambda: [session.observe(e) for e in events]),
        }
    )
    rows.append(
        {"shape": "error_kind on one 1 MiB token", "cpu_ms_per_decision": _cpu_ms(lambda: error_kind("a" * MIB))}
    )
    worst = max(r["cpu_ms_per_decision"] for r in rows)
    return {
        "rows": rows,
        "worst_cpu_ms": worst,
        "target_ms": ADVERSARIAL_TARGET_MS,
        "within_target": worst < ADVERSARIAL_TARGET_MS,
    }


def run(quick: bool) -> dict:
    repeats = 3 if quick else 5
    shingles.backend()  # load the compiled kernel (if installed) before timing
    texts = _Texts(7)
    _time_run(_events(20, 1_000, texts))  # warm-up, untimed
    rows = []
    for label, chars in SIZES.items():
        for n in LENGTHS:
            at_n, mean, cpu_at_n = [], [], []
            for _r in range(repeats):
                events = _events(n, chars, texts)
                gc.collect()
                times, cpu = _time_run(events)
                at_n.append(statistics.median(times[-WINDOW:]))
                cpu_at_n.append(statistics.median(cpu[-WINDOW:]))
                mean.append(statistics.fmean(times))
            rows.append(
                {
                    "observation": label,
                    "iterations": n,
                    "us_per_decision_at_n": round(statistics.median(at_n), 1),
                    "us_per_decision_mean": round(statistics.median(mean), 1),
                    "cpu_us_per_decision_at_n": round(statistics.median(cpu_at_n), 1),
                    "repeats": repeats,
                }
            )
    ratios = {}
    for label in SIZES:
        by_n = {r["iterations"]: r["us_per_decision_at_n"] for r in rows if r["observation"] == label}
        ratios[label] = round(by_n[1000] / by_n[10], 3)
    return {
        "rows": rows,
        "ratio_1000_vs_10": ratios,
        "target_ratio": 1.5,
        "within_target": all(v <= 1.5 for v in ratios.values()),
        "note": "us_per_decision_at_n: median observe() time over the last 10 iterations of an N-iteration run",
        "novelty_backend": shingles.backend(),
        "replay_one_core": _replay_one_core(quick),
        "prepare_json_100KB": _prepare_json(),
        "by_observation_size": _by_observation_size(quick, texts),
        "decision_target_ms": DECISION_TARGET_MS,
        "adversarial": _adversarial(),
    }


def _table(title: str, columns: tuple[str, ...], rows: list[tuple[str, ...]]):  # noqa: ANN202
    from rich.table import Table

    table = Table(title=title)
    for col in columns:
        table.add_column(col, justify="right")
    for row in rows:
        table.add_row(*row)
    return table


def render(result: dict, console) -> None:  # noqa: ANN001
    console.print(
        _table(
            f"engine decision time per iteration ({result['date']}, quick={result['quick']})",
            ("observation", "iterations", "µs/decision at N", "µs/decision mean", "CPU µs at N"),
            [
                (
                    r["observation"],
                    str(r["iterations"]),
                    f"{r['us_per_decision_at_n']:.1f}",
                    f"{r['us_per_decision_mean']:.1f}",
                    f"{r['cpu_us_per_decision_at_n']:.1f}",
                )
                for r in result["rows"]
            ],
        )
    )
    for label, ratio in result["ratio_1000_vs_10"].items():
        ok = "[green]ok[/]" if ratio <= result["target_ratio"] else "[red]over target[/]"
        console.print(f"{label}: 1000-iteration / 10-iteration = {ratio:.3f} (target <= {result['target_ratio']}) {ok}")
    console.print(f"novelty backend: {result['novelty_backend']}")
    r = result["replay_one_core"]
    console.print(
        f"replay on one core: {r['runs']} runs ({r['events']} events) in {r['seconds']} s = "
        f"{r['runs_per_s']:,} runs/s, {r['events_per_s']:,} events/s"
    )
    p = result["prepare_json_100KB"]
    console.print(
        f"prepare_text on 100 KB of JSON lines: {p['masked_us']:,.0f} µs masked, {p['unmasked_us']:,.0f} µs unmasked"
    )
    console.print(
        _table(
            f"one decision by the size of its tool result (target <= {result['decision_target_ms']} ms)",
            ("observation", "ms/decision", "CPU ms", "peak alloc MB", "within target"),
            [
                (
                    r["observation"],
                    f"{r['ms_per_decision']:.2f}",
                    f"{r['cpu_ms_per_decision']:.2f}",
                    f"{r['peak_alloc_mb']:.2f}",
                    "yes" if r["within_target"] else "[red]no[/]",
                )
                for r in result["by_observation_size"]
            ],
        )
    )
    adv = result["adversarial"]
    console.print(
        _table(
            f"text operations on 1 MiB of crafted text, CPU ms (target < {adv['target_ms']:,.0f} ms)",
            ("shape", "CPU ms"),
            [(r["shape"], f"{r['cpu_ms_per_decision']:.2f}") for r in adv["rows"]],
        )
    )
