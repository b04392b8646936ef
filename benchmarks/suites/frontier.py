"""The frontier: task success against tokens, pyguard's dynamic policy against every static cap.

``python benchmarks/run.py frontier [--quick] [--json] [--config POLICY.toml]``

One workload (:mod:`workload`: 70% legitimate tasks, 30% looping ones, in seven families: the classic six kinds
(converging with a long tail, polling, pagination; oscillating, diverging, stalling) and one legitimate and one looping
kind for each pattern of real agents' runs: conversations of 3-6 user messages, edit-then-re-run, rephrased failing
lookups, polling with volatile fields, 10 KB results with a modest new share, long productive work; quick 100 tasks,
full 1000) runs through real LangChain4j AiServices around the Java scripted model, once per policy:

- ``static-N`` (N = 3, 5, 8, 10, 15, 25) and ``langchain4j-default`` (N = 100): unguarded, LangChain4j's
  ``maxToolCallingRoundTrips(N)`` only (:func:`pyguard.live.guard.run_unguarded`);
- ``dynamic``: ``Guard(PolicyConfig())``, pyguard's default policy (LangChain4j's cap left at 100), or the policy
  in ``--config`` (``PolicyConfig.from_toml``);
- ``dynamic-no-recovery``: the same policy on the same tasks played by agents that never react to a reflection.

What ``static-N`` means, measured (``tests/benchmarks/test_frontier.py`` checks it): a task succeeds under
``maxToolCallingRoundTrips(N)`` only if it answers by model call N (N-1 tool round trips). A task still calling
tools makes model call N+1 too, whose response LangChain4j throws away ("exceeded N tool calling round trips")
even when it is the answer; so a capped run costs N+1 model calls. That exception is counted as ``expired`` here
(the bridge reports it as a failed run).

A conversation is one run of several ``chat()`` calls on one AiServices agent (one chat memory); LangChain4j's cap
applies to each call.

Per policy: success rate (see :func:`workload.is_success`), outcome mix, mean and p95 model calls, total tokens
(as the scripted model reported them), success and tokens per task kind and per family. The oracle floor: every
legitimate task's tokens under LangChain4j's default, plus for each looping task the tokens of its loop-free scenario
(:attr:`workload.Task.oracle`: the same run answering where its loop starts, after what it tries on a reflection),
run unguarded. Full mode saves ``benchmarks/results/frontier.png``.

The agent's draw: after a reflection the scripted agent answers with probability ``recover_probability`` (0.6),
drawn once per reflection from a seed that depends on the model call the reflection arrives at; so a rule that
moves a reflection by one call re-draws that task, and the success rate of one run moves by a few tasks either way
for reasons that are not the rule's. ``dynamic_draw_averaged`` removes the draw: the dynamic policy run once more
with agents that always react (``dynamic-always-recovers``), then per task ``p * always + (1 - p) * never`` (never:
the ``dynamic-no-recovery`` run) for success and tokens: the expected figures over the draw, exact for every task
whose agent draws at most once (counted: ``tasks_with_several_reflections``).
"""

from __future__ import annotations

import os
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from workload import (
    FAMILIES,
    LOOPING,
    WAITING_MIX,
    WAITING_TASKS,
    Task,
    WorkloadSpec,
    describe,
    generate,
    is_success,
    no_recovery,
    with_recovery,
)

__all__ = ["STATIC_CAPS", "POLICY_NAMES", "run", "render", "plot", "run_policy"]

STATIC_CAPS = (3, 5, 8, 10, 15, 25)
DEFAULT_ROUND_TRIPS = 100
POLICY_NAMES = tuple(f"static-{n}" for n in STATIC_CAPS) + ("langchain4j-default", "dynamic", "dynamic-no-recovery")
RESULTS_DIR = Path(__file__).resolve().parent.parent / "results"
QUICK_TASKS, FULL_TASKS = 100, 1000
THREADS = max(2, min(4, os.cpu_count() or 2))


def answers_of(result: Any) -> list[str]:
    """Every answer of the run: the final text of each user message's turn, and the run's answer."""
    texts = [e.text for e in result.record.events if e.is_final and e.text]
    return texts + ([result.answer] if result.answer else [])


def _row(task: Task, result: Any, outcome: str) -> dict[str, Any]:
    stop = next((d for d in result.decisions if d.action.value == "stop"), None)
    return {
        "task": task.id,
        "kind": task.kind.value,
        "family": task.family,
        "user_turns": len(task.user_turns),
        "outcome": outcome,
        "success": is_success(task, outcome, answers_of(result)),
        "model_calls": result.model_calls,
        "total_tokens": int(result.total_tokens or 0),
        "reflections": list(result.reflections),
        "rule": stop.rule if stop is not None else None,
        "stopped_after": stop.iteration if stop is not None else None,
        "answer_at": task.answer_at,
        "loop_from_call": task.loop_from_call,
        "answer_source": result.answer_source,
        "wrap_up_tokens": result.record.end.wrap_up_tokens,
        "answer_holds_keys": is_success(task, "succeeded", answers_of(result)),
    }


def _static_job(n: int) -> Callable[[Task], dict[str, Any]]:
    from pyguard.jvm import scripted_model
    from pyguard.live.guard import run_unguarded

    def job(task: Task) -> dict[str, Any]:
        r = run_unguarded(
            "aiservices",
            scripted_model(task.scenario),
            task.task,
            task_type=task.kind.value,
            run_id=f"{task.id}-static{n}",
            max_tool_calling_round_trips=n,
        )
        return _row(task, r, r.outcome.value)

    return job


def _dynamic_job(tag: str, config: str | Path | None = None) -> Callable[[Task], dict[str, Any]]:
    from pyguard.engine import PolicyConfig
    from pyguard.jvm import scripted_model
    from pyguard.live.guard import Guard

    guard = Guard(PolicyConfig.from_file(config))

    def job(task: Task) -> dict[str, Any]:
        r = guard.run(
            "aiservices",
            scripted_model(task.scenario),
            task.task,
            run_id=f"{task.id}-{tag}",
            max_tool_calling_round_trips=DEFAULT_ROUND_TRIPS,
        )
        return _row(task, r, r.outcome.value)

    return job


def run_policy(
    name: str, tasks: list[Task], threads: int = THREADS, config: str | Path | None = None
) -> list[dict[str, Any]]:
    """One row per task for policy ``name`` (one of :data:`POLICY_NAMES`; the dynamic ones with the policy in the
    TOML file ``config``, None: the default); the JVM must be started."""
    if name.startswith("static-"):
        job = _static_job(int(name.split("-")[1]))
    elif name == "langchain4j-default":
        job = _static_job(DEFAULT_ROUND_TRIPS)
    elif name in ("dynamic", "dynamic-no-recovery"):
        job = _dynamic_job(name, config)
    else:
        raise ValueError(f"unknown policy {name!r}; use one of {POLICY_NAMES}")
    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(job, tasks))


def _summary(name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    calls = np.array([r["model_calls"] for r in rows], dtype=float)
    by_kind: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        by_kind[r["kind"]].append(r["success"])
    return {
        "name": name,
        "tasks": len(rows),
        "success_rate": round(float(np.mean([r["success"] for r in rows])), 4),
        "total_tokens": int(sum(r["total_tokens"] for r in rows)),
        "mean_model_calls": round(float(calls.mean()), 3),
        "p95_model_calls": float(np.percentile(calls, 95)),
        "outcomes": dict(sorted(Counter(r["outcome"] for r in rows).items())),
        "success_by_kind": {k: round(float(np.mean(v)), 4) for k, v in sorted(by_kind.items())},
        "tokens_by_kind": {k: int(sum(r["total_tokens"] for r in rows if r["kind"] == k)) for k in sorted(by_kind)},
        "success_by_family": {
            f: round(float(np.mean([r["success"] for r in rows if r["family"] == f])), 4)
            for f in FAMILIES
            if any(r["family"] == f for r in rows)
        },
        "tokens_by_family": {
            f: int(sum(r["total_tokens"] for r in rows if r["family"] == f))
            for f in FAMILIES
            if any(r["family"] == f for r in rows)
        },
        "stops": _stops(rows),
    }


def _stops(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The runs that were stopped (stalled, expired) and what they still delivered: an answer at all, one holding
    every answer key of the task, a wrap-up answer (``Guard(on_stop="answer")``) and its tokens (not in
    ``total_tokens``, which counts the runs' iterations)."""
    stopped = [r for r in rows if r["outcome"] in ("stalled", "expired")]
    wrapped = [r for r in stopped if r.get("answer_source") == "wrap_up"]
    return {
        "stopped": len(stopped),
        "with_answer": sum(1 for r in stopped if r.get("answer_source") is not None),
        "with_correct_answer": sum(1 for r in stopped if r.get("answer_holds_keys")),
        "wrap_ups": len(wrapped),
        "wrap_up_tokens": int(sum(r.get("wrap_up_tokens") or 0 for r in wrapped)),
    }


def _losses(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Where a dynamic policy lost tasks (by kind, outcome and rule; legitimate tasks with the call they needed), and
    per kind how fast loops were caught: calls from the loop's first call to the first reflection and to the stop."""
    looping = {k.value for k in LOOPING}
    lost = [r for r in rows if not r["success"]]
    groups = Counter((r["kind"], r["outcome"], r["rule"] or "-") for r in lost)
    per_kind: dict[str, Any] = {}
    for kind in sorted({r["kind"] for r in rows}):
        rs = [r for r in rows if r["kind"] == kind]
        entry: dict[str, Any] = {
            "tasks": len(rs),
            "reflected": sum(1 for r in rs if r["reflections"]),
            "stopped": sum(1 for r in rs if r["stopped_after"] is not None),
            "mean_model_calls": round(float(np.mean([r["model_calls"] for r in rs])), 3),
        }
        if kind in looping:
            delays = [r["reflections"][0] - r["loop_from_call"] for r in rs if r["reflections"]]
            stops = [r["stopped_after"] - r["loop_from_call"] for r in rs if r["stopped_after"] is not None]
            entry["mean_reflection_delay"] = round(float(np.mean(delays)), 3) if delays else None
            entry["max_reflection_delay"] = max(delays) if delays else None
            entry["mean_stop_delay"] = round(float(np.mean(stops)), 3) if stops else None
        per_kind[kind] = entry
    return {
        "lost": len(lost),
        "by_kind_outcome_rule": [
            {"kind": k, "outcome": o, "rule": ru, "tasks": n} for (k, o, ru), n in groups.most_common()
        ],
        "legitimate_lost": [
            {
                "task": r["task"],
                "kind": r["kind"],
                "outcome": r["outcome"],
                "rule": r["rule"],
                "stopped_after": r["stopped_after"],
                "reflected_after": r["reflections"],
                "answer_at": r["answer_at"],
            }
            for r in lost
            if r["kind"] not in looping
        ][:40],
        "by_kind": per_kind,
    }


def _oracle_job(task: Task) -> dict[str, Any]:
    """A looping task's loop-free scenario, unguarded under LangChain4j's default cap: its tokens and whether it
    delivered the task's answers (it must: the oracle finishes every task)."""
    from pyguard.jvm import scripted_model
    from pyguard.live.guard import run_unguarded

    r = run_unguarded(
        "aiservices",
        scripted_model(task.oracle),
        task.task,
        task_type=task.kind.value,
        run_id=f"{task.id}-oracle",
        max_tool_calling_round_trips=DEFAULT_ROUND_TRIPS,
    )
    return {
        "task": task.id,
        "kind": task.kind.value,
        "family": task.family,
        "total_tokens": int(r.total_tokens or 0),
        "model_calls": r.model_calls,
        "success": is_success(task, r.outcome.value, answers_of(r)),
    }


def _floor(default_rows: list[dict[str, Any]], oracle_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Tokens of an oracle that finishes every legitimate task (its full run under LangChain4j's default cap) and
    answers each looping task where its loop would start: what finishing every task costs at least. In total, per
    kind and per family."""
    oracle = {r["task"]: r for r in oracle_rows}
    rows = [
        {
            "kind": r["kind"],
            "family": r["family"],
            "tokens": oracle[r["task"]]["total_tokens"] if r["task"] in oracle else r["total_tokens"],
        }
        for r in default_rows
    ]
    return {
        "total": int(sum(r["tokens"] for r in rows)),
        "by_kind": {
            k: int(sum(r["tokens"] for r in rows if r["kind"] == k)) for k in sorted({r["kind"] for r in rows})
        },
        "by_family": {
            f: int(sum(r["tokens"] for r in rows if r["family"] == f))
            for f in FAMILIES
            if any(r["family"] == f for r in rows)
        },
        "oracle_runs": len(oracle_rows),
        "oracle_runs_succeeded": sum(1 for r in oracle_rows if r["success"]),
    }


def _by_family(policies: dict[str, dict[str, Any]], floor: dict[str, Any]) -> dict[str, Any]:
    """Per family: success and tokens of the dynamic policy, the best static cap of that family and LangChain4j's
    default, and the dynamic policy's tokens against the family's oracle floor."""
    out: dict[str, Any] = {}
    statics = [p for n, p in policies.items() if n.startswith("static-")]
    for fam, fam_floor in floor["by_family"].items():

        def pick(p: dict[str, Any], fam: str = fam) -> dict[str, Any]:
            return {"success": p["success_by_family"].get(fam, 0.0), "tokens": p["tokens_by_family"].get(fam, 0)}

        best = max(
            statics, key=lambda p, fam=fam: (p["success_by_family"].get(fam, 0.0), -p["tokens_by_family"].get(fam, 0))
        )
        dyn = pick(policies["dynamic"])
        out[fam] = {
            "dynamic": dyn,
            "dynamic_no_recovery": pick(policies["dynamic-no-recovery"]),
            "best_static": {"name": best["name"], **pick(best)},
            "langchain4j_default": pick(policies["langchain4j-default"]),
            "oracle_floor_tokens": fam_floor,
            "dynamic_vs_oracle_floor": round(dyn["tokens"] / max(1, fam_floor), 4),
        }
    return out


def draw_averaged(
    always: list[dict[str, Any]], never: list[dict[str, Any]], p: float, floor: dict[str, Any]
) -> dict[str, Any]:
    """The dynamic policy's expected success and tokens over the agent's draw (see the module docstring): per task
    ``p * always + (1 - p) * never``; in total, against the oracle floor, and per family."""
    looping = {k.value for k in LOOPING}
    fams: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for a, n in zip(always, never, strict=True):
        f = fams[a["family"]]
        f[0] += p * a["success"] + (1 - p) * n["success"]
        f[1] += p * a["total_tokens"] + (1 - p) * n["total_tokens"]
        f[2] += 1
    success = sum(f[0] for f in fams.values()) / max(1, len(always))
    tokens = sum(f[1] for f in fams.values())
    legit = [(a, n) for a, n in zip(always, never, strict=True) if a["kind"] not in looping]
    return {
        "recover_probability": p,
        "success_rate": round(success, 4),
        "total_tokens": int(round(tokens)),
        "vs_oracle_floor": round(tokens / max(1, floor["total"]), 4),
        "legitimate_success_rate": round(
            sum(p * a["success"] + (1 - p) * n["success"] for a, n in legit) / max(1, len(legit)), 4
        ),
        "always_recovers_success_rate": round(float(np.mean([a["success"] for a in always])), 4),
        "tasks_with_several_reflections": sum(
            1 for a, n in zip(always, never, strict=True) if max(len(a["reflections"]), len(n["reflections"])) > 1
        ),
        "by_family": {
            fam: {
                "success": round(f[0] / f[2], 4),
                "tokens": int(round(f[1])),
                "vs_oracle_floor": round(f[1] / max(1, floor["by_family"].get(fam, 0)), 4),
            }
            for fam, f in fams.items()
        },
    }


def _targets(policies: dict[str, dict[str, Any]], floor: int) -> dict[str, Any]:
    dyn = policies["dynamic"]
    statics = [p for n, p in policies.items() if n.startswith("static-")]
    best = max(statics, key=lambda p: (p["success_rate"], -p["total_tokens"]))
    ratio10 = dyn["total_tokens"] / max(1, policies["static-10"]["total_tokens"])
    ratio_default = dyn["total_tokens"] / max(1, policies["langchain4j-default"]["total_tokens"])
    return {
        "best_static": best["name"],
        "best_static_success_rate": best["success_rate"],
        "dynamic_success_rate": dyn["success_rate"],
        "success_at_least_best_static": dyn["success_rate"] >= best["success_rate"],
        "tokens_vs_static_10": round(ratio10, 4),
        "tokens_at_most_60pct_of_static_10": ratio10 <= 0.6,
        "tokens_vs_langchain4j_default": round(ratio_default, 4),
        "success_vs_langchain4j_default": round(
            dyn["success_rate"] - policies["langchain4j-default"]["success_rate"], 4
        ),
        "oracle_floor_tokens": floor,
        "oracle_floor_vs_static_10": round(floor / max(1, policies["static-10"]["total_tokens"]), 4),
        "dynamic_vs_oracle_floor": round(dyn["total_tokens"] / max(1, floor), 4),
        "dynamic_success_at_least_0_88": dyn["success_rate"] >= 0.88,
        "dynamic_within_1_10_of_oracle_floor": dyn["total_tokens"] <= 1.10 * floor,
    }


def run(
    quick: bool = False,
    *,
    n_tasks: int | None = None,
    seed: int | None = None,
    plot_path: str | Path | None = None,
    config: str | None = None,
) -> dict:
    from pyguard.jvm import start_jvm

    spec_kwargs: dict[str, Any] = {"n_tasks": n_tasks or (QUICK_TASKS if quick else FULL_TASKS)}
    if seed is not None:
        spec_kwargs["seed"] = seed
    spec = WorkloadSpec(**spec_kwargs)
    tasks = generate(spec)
    never = no_recovery(tasks)
    start_jvm()
    policies: dict[str, dict[str, Any]] = {}
    dynamic_rows: dict[str, list[dict[str, Any]]] = {}
    wall: dict[str, float] = {}
    for name in POLICY_NAMES:
        t0 = time.perf_counter()
        rows = run_policy(name, never if name == "dynamic-no-recovery" else tasks, config=config)
        wall[name] = round(time.perf_counter() - t0, 2)
        policies[name] = _summary(name, rows)
        if name.startswith("dynamic"):
            dynamic_rows[name] = rows
        if name == "langchain4j-default":
            default_rows = rows
    t0 = time.perf_counter()
    always = run_policy("dynamic", with_recovery(tasks, 1.0), config=config)
    wall["dynamic-always-recovers"] = round(time.perf_counter() - t0, 2)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        oracle_rows = list(pool.map(_oracle_job, [t for t in tasks if t.oracle is not None]))
    wall["oracle"] = round(time.perf_counter() - t0, 2)
    floor = _floor(default_rows, oracle_rows)
    averaged = draw_averaged(always, dynamic_rows["dynamic-no-recovery"], spec.recover_probability, floor)
    result = {
        "policies": list(policies.values()),
        "workload": describe(spec, tasks),
        "seeds": {"workload": spec.seed, "task_seeds": "numpy SeedSequence(workload).spawn(n_tasks + 1)[1:]"},
        "n_tasks": len(tasks),
        "config": config,
        "agent_style": "aiservices",
        "static_cap_semantics": (
            "static-N = AiServices maxToolCallingRoundTrips(N): success only if the answer comes by "
            "model call N; a capped run makes N+1 model calls (the last response is discarded)"
        ),
        "losses": {name: _losses(rows) for name, rows in dynamic_rows.items()},
        "targets": {
            **_targets(policies, floor["total"]),
            "dynamic_draw_averaged_success_rate": averaged["success_rate"],
            "dynamic_draw_averaged_vs_oracle_floor": averaged["vs_oracle_floor"],
        },
        "dynamic_draw_averaged": averaged,
        "oracle_floor": floor,
        "by_family": _by_family(policies, floor),
        "waiting": _waiting(spec.seed, WAITING_TASKS // 3 if quick else WAITING_TASKS, config),
        "wall_s": wall,
        "threads": THREADS,
    }
    if plot_path is None and not quick:
        plot_path = RESULTS_DIR / "frontier.png"
    if plot_path is not None:
        result["plot"] = str(plot(result, plot_path))
    return result


def _waiting(seed: int, n_tasks: int, config: str | None = None) -> dict[str, Any]:
    """Issues 22 and 30's scripted families (:mod:`workload_waiting`, :mod:`workload_paging`), run apart from the
    default mix: identical status reads until done (a sleep between them, "pending", or both) and a large JSON result
    paged to its last page, all legitimate: a task the dynamic policy loses that LangChain4j's default finishes is a
    legitimate loss, an answer without the key a premature answer (targets: 0); and an A/B oscillation, looping:
    caught when the guard's first reflection or stop comes within two cycles (four calls) of the loop's start."""
    tasks = generate(WorkloadSpec(n_tasks=n_tasks, seed=seed, mix=dict(WAITING_MIX)))
    rows = {name: run_policy(name, tasks, config=config) for name in ("dynamic", "langchain4j-default")}
    out: dict[str, Any] = {"tasks": len(tasks), "by_kind": {}}
    for kind in sorted({t.kind.value for t in tasks}):
        out["by_kind"][kind] = {
            name: {
                "tasks": sum(1 for r in rs if r["kind"] == kind),
                "succeeded": sum(1 for r in rs if r["kind"] == kind and r["success"]),
                "stopped": sum(1 for r in rs if r["kind"] == kind and r["stopped_after"] is not None),
                "rules": dict(Counter(r["rule"] for r in rs if r["kind"] == kind and r["rule"])),
            }
            for name, rs in rows.items()
        }
    dynamic, default = rows["dynamic"], rows["langchain4j-default"]
    legit = [(t, d, u) for t, d, u in zip(tasks, dynamic, default, strict=True) if not t.looping]
    out["legitimate_losses"] = sum(1 for _, d, u in legit if u["success"] and not d["success"])
    out["premature_answers"] = sum(
        1 for _, d, _u in legit if d["outcome"] == "succeeded" and not d["answer_holds_keys"]
    )
    looping = [(t, d) for t, d in zip(tasks, dynamic, strict=True) if t.looping]
    out["loops"] = len(looping)
    out["loops_caught_within_two_cycles"] = sum(1 for t, d in looping if _caught(t, d, 4))
    return out


def _caught(task: Task, row: dict[str, Any], calls: int) -> bool:
    """The guard's first reflection or stop came within ``calls`` model calls of the loop's start."""
    flags = [*row["reflections"], *([row["stopped_after"]] if row["stopped_after"] is not None else [])]
    start = task.loop_from_call or 0
    return bool(flags) and min(flags) < start + calls


def plot(result: dict, path: str | Path) -> Path:
    """Success rate against total tokens, one labelled point per policy (matplotlib, Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    from matplotlib.ticker import FuncFormatter, LogLocator

    fig, ax = plt.subplots(figsize=(8, 5.5))
    for p in result["policies"]:
        dyn = p["name"].startswith("dynamic")
        ax.scatter(
            p["total_tokens"],
            p["success_rate"],
            s=90 if dyn else 45,
            marker="*" if dyn else "o",
            color="tab:red" if dyn else "tab:blue",
            zorder=3,
        )
        left = p["name"] == "dynamic-no-recovery"  # it sits next to static-15/25: label it on the left
        ax.annotate(
            p["name"],
            (p["total_tokens"], p["success_rate"]),
            textcoords="offset points",
            xytext=(-6, 6) if left else (6, 4),
            ha="right" if left else "left",
            fontsize=8,
        )
    statics = sorted(
        (p for p in result["policies"] if not p["name"].startswith("dynamic")), key=lambda p: p["total_tokens"]
    )
    ax.plot(
        [p["total_tokens"] for p in statics],
        [p["success_rate"] for p in statics],
        color="tab:blue",
        alpha=0.4,
        zorder=2,
    )
    floor = result.get("targets", {}).get("oracle_floor_tokens")
    if floor:
        ax.axvline(floor, color="grey", linestyle="--", linewidth=1)
        ax.annotate(
            "oracle floor: every legitimate task finished,\nevery loop answered at its start",
            (floor, 0.02),
            xycoords=("data", "axes fraction"),
            textcoords="offset points",
            xytext=(4, 0),
            fontsize=7,
            color="grey",
        )
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1e6:g}M" if v >= 1e6 else f"{v / 1e3:g}k"))
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("total tokens over the workload (log scale)")
    ax.set_ylabel("task success rate (correct answer delivered)")
    ax.set_title(
        f"frontier: {result['n_tasks']} tasks, LangChain4j AiServices, static caps vs pyguard's dynamic policy",
        fontsize=9,
    )
    ax.grid(True, which="major", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def render(result: dict, console) -> None:
    from rich.table import Table

    t = Table(title=f"frontier: {result['n_tasks']} tasks ({'quick' if result.get('quick') else 'full'})")
    for c in ("policy", "success", "total tokens", "mean calls", "p95 calls", "outcomes"):
        t.add_column(c, justify="left" if c in ("policy", "outcomes") else "right")
    for p in result["policies"]:
        t.add_row(
            p["name"],
            f"{p['success_rate']:.3f}",
            f"{p['total_tokens']:,}",
            f"{p['mean_model_calls']:.2f}",
            f"{p['p95_model_calls']:.0f}",
            ", ".join(f"{k} {v}" for k, v in p["outcomes"].items()),
        )
    console.print(t)
    shown = [
        p
        for p in result["policies"]
        if p["name"] in ("static-10", "static-25", "langchain4j-default", "dynamic", "dynamic-no-recovery")
    ]
    k = Table(title="success rate by task kind (tasks); the JSON has every policy, and tokens")
    k.add_column("kind")
    for p in shown:
        k.add_column(p["name"], justify="right")
    for kind, n in result["workload"]["counts"].items():
        if n:
            k.add_row(f"{kind} ({n})", *(f"{p['success_by_kind'].get(kind, 0):.2f}" for p in shown))
    console.print(k)
    waiting = result.get("waiting")
    if waiting:
        w = Table(
            title=f"scripted families (legitimate losses: {waiting['legitimate_losses']}, premature answers: "
            f"{waiting.get('premature_answers')}; A/B loops caught within two cycles: "
            f"{waiting.get('loops_caught_within_two_cycles')} of {waiting.get('loops')})"
        )
        for c in ("kind", "dynamic: succeeded / stopped", "langchain4j-default: succeeded"):
            w.add_column(c, justify="left" if c == "kind" else "right")
        for kind, e in waiting["by_kind"].items():
            d, u = e["dynamic"], e["langchain4j-default"]
            w.add_row(kind, f"{d['succeeded']}/{d['tasks']} / {d['stopped']}", f"{u['succeeded']}/{u['tasks']}")
        console.print(w)
    f = Table(title="by family: success / tokens (dynamic vs its oracle floor)")
    for c in ("family", "dynamic", "no-recovery", "best static", "langchain4j-default", "oracle floor", "dyn/floor"):
        f.add_column(c, justify="left" if c == "family" else "right")
    for fam, e in result.get("by_family", {}).items():
        cell = lambda x: f"{x['success']:.2f} / {x['tokens']:,}"  # noqa: E731
        f.add_row(
            f"{fam} ({', '.join(result['workload']['families'][fam])})",
            cell(e["dynamic"]),
            cell(e["dynamic_no_recovery"]),
            f"{e['best_static']['name']}: {cell(e['best_static'])}",
            cell(e["langchain4j_default"]),
            f"{e['oracle_floor_tokens']:,}",
            f"{e['dynamic_vs_oracle_floor']:.2f}",
        )
    console.print(f)
    console.print(f"targets: {result['targets']}")
    avg = result.get("dynamic_draw_averaged")
    if avg:
        console.print(
            f"dynamic over the agent's draw (p={avg['recover_probability']}): success {avg['success_rate']:.3f} "
            f"(legitimate {avg['legitimate_success_rate']:.3f}), tokens {avg['total_tokens']:,} = "
            f"{avg['vs_oracle_floor']:.3f}x the oracle floor; "
            + ", ".join(f"{k} {v['success']:.2f} / {v['vs_oracle_floor']:.2f}x" for k, v in avg["by_family"].items())
        )
    for name, loss in result["losses"].items():
        console.print(
            f"{name}: lost {loss['lost']}; "
            + "; ".join(
                f"{g['kind']}/{g['outcome']}/{g['rule']}: {g['tasks']}" for g in loss["by_kind_outcome_rule"][:8]
            )
        )
        for kind, e in loss["by_kind"].items():
            console.print(f"  {kind}: " + ", ".join(f"{k} {v}" for k, v in e.items()))
    if result.get("plot"):
        console.print(f"plot: {result['plot']}")
