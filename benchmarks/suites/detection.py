"""Stall detection quality on labelled synthetic runs: precision, recall, delay, false stops.

``python benchmarks/run.py detection [--quick] [--json] [--config POLICY.toml]``

Runs: every kind of :mod:`pyguard.testing.synthetic` (4 legitimate, 6 loop kinds) for many seeds (quick 20, full 200),
each in generated variations, replayed through the default policy (``Policy(PolicyConfig())``), or the policy in
``--config``. Runs are recordings: they do not react to reflections, so a loop keeps looping and shows whether the
engine stops it. With ``judge_results_early`` a call's tool results are judged before the next call, as
:mod:`pyguard.replay` models it: a flag there counts at the call whose results were judged.

Variations (the headline figures cover the first three):
- ``plain``: the generator's run;
- ``volatile``: every tool result gets a changing timestamp, request UUID and duration (must be masked);
- ``parallel``: about a third of the iterations also request an unrelated productive lookup in parallel;
- ``reread`` (legitimate runs only, reported apart): the agent re-reads one earlier result once, getting the
  same text: not a loop, but the engine flags it (one reflection) by design; it shows what that costs;
- ``counter`` (loop runs only, reported apart, adversarial): each looping result carries an incrementing
  ``attempt N`` that no mask removes, so the loop's results "change" like a poll's: the known blind spot.

Definitions: a run is *flagged* at the first REFLECT, or STOP with outcome stalled/escalated. recall = loop runs
flagged at or after ``loop_start`` / loop runs; precision = loop runs flagged / flagged runs; ``mean_delay`` =
mean of (flag iteration - loop_start) over detected loops; ``false_stop_rate`` = legitimate runs stopped (any
outcome) / legitimate runs; ``false_flag_rate`` = legitimate runs flagged / legitimate runs.
"""

from __future__ import annotations

import random
import statistics
from collections import defaultdict
from collections.abc import Callable

from pyguard.base.decisions import Action
from pyguard.base.events import Observation, Outcome, ToolCall
from pyguard.engine import Policy, PolicyConfig
from pyguard.engine.paired import judged_before_next
from pyguard.testing.synthetic import KINDS, LabelledRun, generate, logistics_incident

HEADLINE = ("plain", "volatile", "parallel")


def _turns(run: LabelledRun) -> list[tuple[tuple[ToolCall, ...], tuple[Observation, ...]]]:
    """(tool calls of iteration i, observations they produced) for each iteration; the last has no calls."""
    evs = run.events
    return [(ev.tool_calls, evs[k + 1].observations if k + 1 < len(evs) else ()) for k, ev in enumerate(evs)]


def _rebuild(run: LabelledRun, turns, loop_start: int | None, suffix: str) -> LabelledRun:
    events = []
    first_obs = run.events[0].observations
    for k, (calls, _) in enumerate(turns):
        obs = first_obs if k == 0 else turns[k - 1][1]
        base = run.events[min(k, len(run.events) - 1)]
        events.append(
            base.model_copy(
                update={
                    "index": k + 1,
                    "tool_calls": calls,
                    "observations": obs,
                    "run_id": run.name + suffix,
                    "text": base.text if not calls else None,
                }
            )
        )
    return run.model_copy(update={"name": run.name + suffix, "events": tuple(events), "loop_start": loop_start})


def _volatile(run: LabelledRun, rng: random.Random) -> LabelledRun:
    def stamp(o: Observation) -> Observation:
        served = f"2024-06-{rng.randint(10, 28)}T{rng.randint(10, 23)}:{rng.randint(10, 59)}:{rng.randint(10, 59)}Z"
        extra = f"\n(served {served}, request {_uuid(rng)}, took {rng.uniform(0.01, 3):.2f}s)"
        return o.model_copy(update={"text": o.text + extra})

    turns = [(calls, tuple(stamp(o) for o in obs)) for calls, obs in _turns(run)]
    return _rebuild(run, turns, run.loop_start, "~volatile")


def _uuid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _parallel(run: LabelledRun, rng: random.Random) -> LabelledRun:
    turns = []
    for k, (calls, obs) in enumerate(_turns(run)):
        if calls and rng.random() < 0.33:
            cid = f"noise_{k}"
            q = " ".join(
                f"{rng.choice('bcdfghklmnprstvz')}{rng.choice('aeiou')}{rng.randint(0, 99999)}" for _ in range(3)
            )
            text = " ".join(f"w{rng.getrandbits(32):x}" for _ in range(rng.randint(40, 150)))
            calls = calls + (ToolCall(id=cid, name="lookup_reference", arguments=f'{{"q": "{q}"}}'),)
            obs = obs + (Observation(tool_call_id=cid, tool_name="lookup_reference", text=text),)
        turns.append((calls, obs))
    return _rebuild(run, turns, run.loop_start, "~parallel")


def _reread(run: LabelledRun, rng: random.Random) -> LabelledRun:
    turns = _turns(run)
    candidates = [k for k, (calls, obs) in enumerate(turns[:-1]) if len(calls) == 1 and obs]
    if not candidates:
        return run
    k = rng.choice(candidates)
    at = rng.randint(k + 1, len(turns) - 1)
    calls, obs = turns[k]
    cid = f"reread_{k}"
    again = (calls[0].model_copy(update={"id": cid}),), (obs[0].model_copy(update={"tool_call_id": cid}),)
    return _rebuild(run, turns[:at] + [again] + turns[at:], None, "~reread")


def _counter(run: LabelledRun, rng: random.Random) -> LabelledRun:
    turns = []
    for k, (calls, obs) in enumerate(_turns(run)):
        if run.loop_start is not None and k + 1 >= run.loop_start - 1:
            obs = tuple(o.model_copy(update={"text": o.text + f" (attempt {k + 1})"}) for o in obs)
        turns.append((calls, obs))
    return _rebuild(run, turns, run.loop_start, "~counter")


VARIATIONS: dict[str, tuple[Callable[[LabelledRun, random.Random], LabelledRun], tuple[str, ...]]] = {
    "plain": (lambda r, rng: r, ("loop", "legitimate")),
    "volatile": (_volatile, ("loop", "legitimate")),
    "parallel": (_parallel, ("loop", "legitimate")),
    "reread": (_reread, ("legitimate",)),
    "counter": (_counter, ("loop",)),
}


def _replay(run: LabelledRun, policy: Policy) -> dict:
    s = policy.new_run(run.name)
    flag = stop = None
    early = policy.config.judge_results_early
    events = run.events
    for k, ev in enumerate(events):
        decisions = [s.observe(ev)]
        after = events[k + 1].observations if k + 1 < len(events) else ()
        if early and not decisions[0].stops and judged_before_next(ev, after):
            decisions.append(s.observe_results(ev.index, after))
        for d in decisions:
            stall_stop = d.stops and d.outcome in (Outcome.STALLED, Outcome.ESCALATED)
            if flag is None and (d.action is Action.REFLECT or stall_stop):
                flag = (d.iteration, d.rule)
            if d.stops:
                stop = (d.iteration, d.rule, d.outcome.value)
        if stop is not None:
            break
    return {
        "kind": run.kind,
        "label": run.label,
        "loop_start": run.loop_start,
        "flag": flag,
        "stop": stop,
        "length": len(run.events),
    }


def _metrics(rows: list[dict]) -> dict:
    loops = [r for r in rows if r["label"] == "loop"]
    legit = [r for r in rows if r["label"] == "legitimate"]
    detected = [r for r in loops if r["flag"] is not None and r["flag"][0] >= r["loop_start"]]
    early = [r for r in loops if r["flag"] is not None and r["flag"][0] < r["loop_start"]]
    flagged_legit = [r for r in legit if r["flag"] is not None]
    flagged = len(detected) + len(early) + len(flagged_legit)
    delays = [r["flag"][0] - r["loop_start"] for r in detected]
    stops = [r["stop"][0] - r["loop_start"] for r in detected if r["stop"] is not None]
    return {
        "runs": len(rows),
        "loop_runs": len(loops),
        "legitimate_runs": len(legit),
        "precision": round(len(detected) / flagged, 4) if flagged else None,
        "recall": round(len(detected) / len(loops), 4) if loops else None,
        "mean_delay": round(statistics.fmean(delays), 3) if delays else None,
        "max_delay": max(delays) if delays else None,
        "false_stop_rate": round(sum(r["stop"] is not None for r in legit) / len(legit), 4) if legit else None,
        "false_flag_rate": round(len(flagged_legit) / len(legit), 4) if legit else None,
        "early_flags": len(early),
        "loops_stopped": round(sum(r["stop"] is not None for r in loops) / len(loops), 4) if loops else None,
        "mean_delay_to_stop": round(statistics.fmean(stops), 3) if stops else None,
    }


def run(quick: bool, config: str | None = None) -> dict:
    seeds = range(20 if quick else 200)
    policy = Policy(PolicyConfig.from_file(config))
    rows: dict[str, list[dict]] = defaultdict(list)
    for kind, (label, _, _) in KINDS.items():
        for seed in seeds:
            base = generate(kind, seed)
            for name, (fn, labels) in VARIATIONS.items():
                if label in labels:
                    rng = random.Random(f"{name}:{kind}:{seed}")
                    rows[name].append(_replay(fn(base, rng), policy))
    headline = [r for name in HEADLINE for r in rows[name]]
    by_kind = {}
    for kind in KINDS:
        by_kind[kind] = _metrics([r for r in headline if r["kind"] == kind])
    incident = _replay(logistics_incident(), policy)
    return {
        **_metrics(headline),
        "config": config,
        "targets": {"recall": ">= 0.95", "mean_delay": "<= 2", "false_stop_rate": "< 0.01"},
        "seeds_per_kind": len(seeds),
        "headline_variations": list(HEADLINE),
        "by_kind": by_kind,
        "by_variation": {name: _metrics(rs) for name, rs in rows.items()},
        "logistics_incident": {
            "flagged_at": incident["flag"],
            "stopped_at": incident["stop"],
            "model_calls_recorded": incident["length"],
        },
    }


def render(result: dict, console) -> None:
    from rich.table import Table

    cols = (
        "runs",
        "precision",
        "recall",
        "mean_delay",
        "false_stop_rate",
        "false_flag_rate",
        "loops_stopped",
        "mean_delay_to_stop",
    )

    def table(title: str, groups: dict) -> Table:
        t = Table(title=title)
        t.add_column("")
        for c in cols:
            t.add_column(c, justify="right")
        for name, m in groups.items():
            t.add_row(name, *("-" if m.get(c) is None else str(m.get(c)) for c in cols))
        return t

    console.print(
        table(
            f"detection, headline ({', '.join(result['headline_variations'])}), {result['seeds_per_kind']} seeds per kind",
            {"all": result},
        )
    )
    console.print(table("by kind (headline variations)", result["by_kind"]))
    console.print(table("by variation (reread and counter are reported apart)", result["by_variation"]))
    inc = result["logistics_incident"]
    console.print(
        f"logistics incident: flagged at {inc['flagged_at']}, stopped at {inc['stopped_at']} "
        f"(the recording made {inc['model_calls_recorded']} model calls)"
    )
    console.print(f"targets: {result['targets']}")
