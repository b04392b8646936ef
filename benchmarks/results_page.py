"""Build benchmarks/RESULTS.md, the page of current results, from the kept runs of the benchmark suites.

    python benchmarks/results_page.py           # write benchmarks/RESULTS.md
    python benchmarks/results_page.py --check   # exit 1 when the page is not what the kept runs give (stale)

The page is generated: never edit RESULTS.md by hand. Per entry it shows the command, the environment it ran in,
one table and one paragraph. Where each part lives:

- ``benchmarks/results/<entry>.json``: one kept run of a suite, its ``--json`` output exactly as printed:
  ``python benchmarks/run.py SUITE [--data DIR] --json > benchmarks/results/<entry>.json``. The entry is the suite's
  name (``frontier.json``), or ``<suite>-<variant>.json`` for a second configuration of one suite (``tune-real.json``
  is ``tune --data``). ``run.py`` stamps the command, the commit, the date, the machine and its load into it.
- ``benchmarks/results/<entry>.md``: the entry's paragraph, a few sentences saying what the table shows and what
  it means. Figures in it are placeholders filled from the JSON, ``{mean[pyguard][false_stop_rate]:.2%}``
  (Python's ``str.format_map`` over the JSON object; ``{{`` for a literal brace), so the words never drift from
  the numbers. Say what is true now: the history of a figure belongs to git and CHANGELOG.md.
- the table: the entry's function in ``ENTRIES`` below, from the JSON alone.

A new kept run replaces the old JSON; rebuild the page and commit both. ``tests/benchmarks/test_results_page.py``
runs ``--check``, so CI fails when a JSON or a paragraph changed and the page was not rebuilt.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
PAGE = HERE / "RESULTS.md"

Table = tuple[list[str], list[list[str]]]
T = TypeVar("T")
WIDTH = 120


def _fill(text: str) -> str:
    """Each blank-line-separated paragraph of ``text`` re-wrapped to the page's width (a filled-in placeholder
    changes a line's length); long words, links and code spans are never split."""
    paragraphs = [" ".join(p.split()) for p in text.strip().split("\n\n")]
    return "\n\n".join(textwrap.fill(p, WIDTH, break_long_words=False, break_on_hyphens=False) for p in paragraphs if p)


def _pct(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{100 * value:.{digits}f}%"


def _num(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _header(text: str) -> list[str]:
    """A table's column names, written on one line: ``"source | runs | ..."``."""
    return [c.strip() for c in text.split(" | ")]


def _interval(figure: dict) -> str:
    """A figure with its interval, as ``tune`` reports them: ``{"value", "low", "high"}``."""
    low, high = figure.get("low"), figure.get("high")
    ci = "" if low is None or high is None else f" [{_pct(low, 2)}, {_pct(high, 2)}]"
    return _pct(figure["value"], 2) + ci


# -- one function per entry: the JSON in, the table (header, rows) out ------------------------------------------

POLICIES = ("pyguard", "repeat", "openhands")


def _wilson(figure: dict, value: str, interval: str, digits: int = 1) -> str:
    """A real-replay figure with its 95% Wilson interval when the run kept one: ``3.1% (1.4–6.5%)``."""
    ci = figure.get(interval)
    return _pct(figure[value], digits) + ("" if not ci else f" ({100 * ci[0]:.{digits}f}–{_pct(ci[1], digits)})")


def _real_cell(f: dict) -> str:
    """false stops / failed-run calls saved / capped runs stopped, each with its interval."""
    return (
        f"{_wilson(f, 'false_stop_rate', 'false_stop_interval')} [{f['false_stops']}] / "
        f"{_wilson(f, 'failed_calls_saved', 'failed_calls_saved_interval')} / "
        f"{_wilson(f, 'capped_stopped', 'capped_stopped_interval', 0)}"
    )


def _real_counts(s: dict) -> str:
    """ok / failed / capped runs, a count under 30 (a small-sample figure) marked with an asterisk."""
    small = set(s.get("small", []))
    marked = [
        f"{n}{'*' if kind in small else ''}"
        for kind, n in zip(
            ("successful", "failed", "capped"), (s["successes"], s["failures"], s["capped"]), strict=True
        )
    ]
    return " / ".join(marked)


def real_replay(r: dict) -> Table:
    header = _header(
        "source (runs: ok / failed / capped; * under 30) | pyguard, default policy | stop at the first exact repeat "
        "| OpenHands-style stuck detector"
    )
    rows = [
        [f"{name} ({s['runs']:,}: {_real_counts(s)})"] + [_real_cell(s["policies"][p]) for p in POLICIES]
        for name, s in r["sources"].items()
    ]
    mean = [
        f"{_pct(r['mean'][p]['false_stop_rate'], 2)} (worst {_pct(r['worst_false_stops'][p]['false_stop_rate'])}) / "
        f"{_pct(r['mean'][p]['failed_calls_saved'])} / {_pct(r['mean'][p]['capped_stopped'], 0)}"
        for p in POLICIES
    ]
    rows.append(["**mean over sources**", *mean])
    return header, rows


def real_replay_loso(r: dict) -> Table:
    loso = r["loso"]
    header = _header(
        "source | shipped default | chosen on all sources (in-sample) | chosen without it (LOSO) "
        "| stopped failed runs reflected on first; calls saved if stopped at the reflection"
    )

    def cell(f: dict, named: bool = True) -> str:
        name = f"`{f['candidate']}`: " if named else ""
        return name + _real_cell(f)

    rows = []
    for name, row in loso["sources"].items():
        refl = r["sources"][name]["reflection"]
        rows.append(
            [
                name,
                cell(row["default"], named=False),
                cell(row["in_sample"]),
                cell(row["loso"]),
                f"{refl['failed_stopped_after_reflection']} of {refl['failed_stopped']}; "
                f"{refl['calls_saved_by_those_stops']:,} → {refl['calls_saved_if_stopped_at_reflection']:,} calls",
            ]
        )
    summary = loso["summary"]

    def mean(column: str) -> str:
        m, w = summary[column]["mean"], summary[column]["worst_false_stops"]
        return (
            f"{_pct(m['false_stop_rate'], 2)} (worst {w['source']} {_pct(w['false_stop_rate'])}) / "
            f"{_pct(m['failed_calls_saved'])} / {_pct(m['capped_stopped'], 0)}"
        )

    rows.append(["**mean over sources**", mean("default"), mean("in_sample"), mean("loso"), ""])
    return header, rows


def tune_real(r: dict) -> Table:
    header = _header(
        "source | runs (tasks) | held-out false stops | held-out failed-run calls saved | default policy: false stops "
        "| default: calls saved"
    )
    rows = []
    for name, s in r["real"]["sources"].items():
        if "error" in s:
            rows.append([name, f"{s['runs']:,}", s["error"], "", "", ""])
            continue
        held, default = s["held_out"], s["default"]
        untuned = "no task type tuned (too few runs or no success per type): the starting policy"
        rows.append(
            [
                name + (" (artifact)" if s["artifact"] else ""),
                f"{s['runs']:,} ({s['tasks']:,})",
                untuned if held is None else f"{held['false_stops']} = {_interval(held['false_stop_rate'])}",
                "" if held is None else _interval(held["failed_calls_saved"]),
                f"{default['false_stops']} = {_pct(default['false_stop_rate']['value'], 2)}",
                _pct(default["failed_calls_saved"]["value"], 2),
            ]
        )
    return header, rows


def frontier(r: dict) -> Table:
    floor = r["oracle_floor"]["total"]
    rows = [
        [
            f"**{p['name']}**" if p["name"] == "dynamic" else p["name"],
            f"{p['success_rate']:.3f}",
            f"{p['total_tokens']:,}",
            f"{p['total_tokens'] / floor:.3f}×",
            f"{p['mean_model_calls']:.2f}",
            f"{p['p95_model_calls']:.0f}",
            ", ".join(f"{k} {v}" for k, v in p["outcomes"].items()),
        ]
        for p in r["policies"]
    ]
    draw = r["dynamic_draw_averaged"]
    rows.append(
        [
            "dynamic, over the agent's draw",
            f"{draw['success_rate']:.3f}",
            f"{draw['total_tokens']:,}",
            f"{draw['vs_oracle_floor']:.3f}×",
            "",
            "",
            f"legitimate tasks {draw['legitimate_success_rate']:.3f}",
        ]
    )
    rows.append(["oracle floor", "", f"{floor:,}", "1.000×", "", "", ""])
    return ["policy", "success rate", "total tokens", "× oracle floor", "mean model calls", "p95", "outcomes"], rows


def detection(r: dict) -> Table:
    cols = ("runs", "precision", "recall", "mean_delay", "false_stop_rate", "false_flag_rate", "loops_stopped")
    groups = {"all (headline)": r, **{f"kind: {k}": v for k, v in r["by_kind"].items()}}
    groups.update({f"variation: {k}": v for k, v in r["by_variation"].items()})
    rows = [[name, *("-" if m.get(c) is None else str(m[c]) for c in cols)] for name, m in groups.items()]
    return ["group", *(c.replace("_", " ") for c in cols)], rows


def tune(r: dict) -> Table:
    rec, timing = r["recovery"], r["timing"]
    rows = [
        [
            f"known best recovered ({rec['seeds']} seeds, {rec['train_runs']:,} training runs each, bound "
            f"{rec['bound']})",
            f"{sum(row['recovered'] for row in rec['rows'])} / {rec['seeds']}",
        ],
        [
            f"the best policy on {rec['test_runs']:,} fresh runs: false stops / failed-run calls saved",
            f"{_pct(rec['best_test_false_stop_rate'], 2)} / {_pct(rec['best_test_calls_saved'])}",
        ],
        [
            f"`tune` on {timing['runs']:,} runs ({timing['iterations']:,} iterations, {timing['space']} space, "
            f"{timing['folds']} folds, {timing['workers']} workers)",
            f"{timing['seconds']:.1f} s, {timing['engine_passes']} engine passes",
        ],
        [
            "held out: false stops / failed-run calls saved (the default policy's)",
            f"{_pct(timing['held_out_false_stop_rate'], 2)} / {_pct(timing['held_out_calls_saved'])} "
            f"({_pct(timing['default_calls_saved'])})",
        ],
        ["runs where the simulation and `replay_run` disagree", str(timing["verification_mismatches"])],
    ]
    return ["what", "figure"], rows


def nested(r: dict) -> Table:
    rows = []
    for row in r["rows"]:
        u, g, t = row["unguarded"], row["guarded"], row["tree_budget"]
        rows.append(
            [
                str(row["max_agents_invocations"]),
                f"{u['model_calls']} / {u['tokens']:,} ({u['outcome']})",
                f"{g['model_calls']} / {g['tokens']:,} ({g['outcome']}, {g['invocations']} invocations)",
                f"{t['model_calls']} / {t['tokens']:,} ({t['outcome']}, {t['invocations']} invocations)",
            ]
        )
    limit = r["rows"][0]["tree_budget"]["model_calls_limit"] if r["rows"] else "-"
    header = _header(
        "supervisor's `maxAgentsInvocations` | unguarded: model calls / tokens | guarded: model calls / tokens "
        f"| guarded + tree budget of {limit} calls"
    )
    return header, rows


def check_gate(r: dict) -> Table:
    header = _header(
        "runs per set | false alarms (same behaviour twice) | power: the shifted stall rate fails the gate "
        "| power of the stall-rate check alone"
    )

    def rate(value: float, ci: list[float]) -> str:
        return f"{value:.3f} [{ci[0]:.3f}-{ci[1]:.3f}]"

    rows = [
        [
            str(s["runs"]),
            rate(s["false_alarm_rate"], s["false_alarm_ci"]),
            rate(s["power"], s["power_ci"]),
            f"{s['power_stall_check']:.3f}",
        ]
        for s in r["sizes"]
    ]
    return header, rows


def calibrate_scale(r: dict) -> Table:
    rows = [
        ["extract the runs into arrays (one pass over the records)", f"{r['extract_s']:.2f} s"],
        [
            "estimate c(n), w(n), E[cost](N), N* and its bootstrap interval, the token budget",
            f"{r['estimate_s']:.2f} s",
        ],
        ["**total**", f"**{r['total_s']:.2f} s**"],
    ]
    return ["step", "time"], rows


def scale(r: dict) -> Table:
    rows = [
        [
            s["task"],
            {"parquet": "Parquet", "jsonl": "JSON Lines"}.get(s["format"], s["format"]),
            f"{s['runs']:,}",
            _num(s["wall_s"], 2),
            _num(s["runs_per_s"]),
            _num(s["peak_rss_mb"]),
            "-" if s["task"] != "replay" else _num(s["workers_peak_rss_mb"]),
        ]
        for s in r["steps"]
    ]
    return ["task", "format", "runs", "wall s", "runs/s", "peak MB", "workers' peak MB"], rows


def overhead(r: dict) -> Table:
    styles = r["styles"]
    modes = list(next(iter(styles.values())))
    rows = [[mode.replace("_", " "), *(f"{styles[s][mode]:.1f} µs" for s in styles)] for mode in modes]
    rows.append(
        [
            "the bridge alone: a bare proxy / the callback adapter (calling thread)",
            f"{r['bridge_us_per_event_raw']:.2f} / {r['bridge_us_per_event_adapter']:.2f} µs",
            *([""] * (len(styles) - 1)),
        ]
    )
    return ["per model call", *styles], rows


def concurrency(r: dict) -> Table:
    header = _header(
        "threads | iterations/s guarded | after `gc.freeze()` | lane | unguarded | p50 guard time (frozen) "
        "| p99 guard time (frozen) | leaked runs"
    )
    rows = [
        [
            str(lv["n"]),
            f"{lv['iterations_per_s']:,.0f}",
            f"{lv['frozen']['iterations_per_s']:,.0f}",
            f"{lv['lane']['iterations_per_s']:,.0f}",
            f"{lv['unguarded_iterations_per_s']:,.0f}",
            f"{lv['p50_guard_us']:,.0f} / {lv['frozen']['p50_guard_us']:,.0f} µs",
            f"{lv['p99_guard_us'] / 1e3:.2f} / {lv['frozen']['p99_guard_us'] / 1e3:.2f} ms",
            str(lv["leaks"] + lv["lane"]["leaks"] + lv["frozen"]["leaks"]),
        ]
        for lv in r["threads"]
    ]
    return header, rows


def engine_scaling(r: dict) -> Table:
    rows = [
        [
            row["observation"],
            f"{row['iterations']:,}",
            f"{row['us_per_decision_at_n']:,.1f}",
            f"{row['us_per_decision_mean']:,.1f}",
            f"{row['cpu_us_per_decision_at_n']:,.1f}",
        ]
        for row in r["rows"]
    ]
    header = ["tool result", "iterations N", "µs per decision at N", "µs per decision, mean", "CPU µs at N"]
    return header, rows


# -- one README row per entry: (what, figure) -------------------------------------------------------------------


def real_replay_row(r: dict, moment: str = "") -> tuple[str, str]:
    runs = sum(s["runs"] for s in r["sources"].values())
    m, w = r["mean"]["pyguard"], r["worst_false_stops"]["pyguard"]
    return (
        f"{moment}recorded runs of {len(r['sources'])} real agents ({runs:,} runs): successful runs stopped early, mean / "
        "worst source (goals ≤ 1% / ≤ 2%); failed runs' tool calls saved (goal ≥ 3.5%); capped runs stopped before "
        "their cap (goal ≥ 55%)",
        f"{_pct(m['false_stop_rate'], 2)} / {_pct(w['false_stop_rate'])}; {_pct(m['failed_calls_saved'])}; "
        f"{_pct(m['capped_stopped'], 0)}",
    )


def real_replay_loso_row(r: dict) -> tuple[str, str]:
    summary = r["loso"]["summary"]["loso"]
    m, w = summary["mean"], summary["worst_false_stops"]
    return (
        f"the default chosen leave-one-source-out on {len(r['loso']['sources'])} recorded agents (measured on the one "
        "left out): successful runs stopped, mean / worst source; failed runs' tool calls saved; capped runs stopped",
        f"{_pct(m['false_stop_rate'], 2)} / {_pct(w['false_stop_rate'])}; {_pct(m['failed_calls_saved'])}; "
        f"{_pct(m['capped_stopped'], 0)}",
    )


def tune_real_row(r: dict) -> tuple[str, str]:
    real = r["real"]
    return (
        f"`pyguard tune` on the recorded sources (bound {real['bound']:.0%} per task type, 5-fold cross-validation "
        "by task): held-out false stops, mean / worst source; held-out failed-run calls saved (the default's)",
        f"{_pct(real['mean_held_out_false_stop_rate'], 2)} / {_pct(real['worst_held_out_false_stop_rate'], 2)}; "
        f"{_pct(real['mean_held_out_calls_saved'], 2)} ({_pct(real['mean_default_calls_saved'], 2)})",
    )


def frontier_row(r: dict) -> tuple[str, str]:
    by = {p["name"]: p for p in r["policies"]}
    dyn, best, lc4j = by["dynamic"], by[r["targets"]["best_static"]], by["langchain4j-default"]
    draw = r["dynamic_draw_averaged"]
    return (
        f"{r['n_tasks']:,} scripted tasks through AiServices: success rate / tokens, dynamic policy (over the "
        f"agent's draw: × the oracle floor; targets ≥ 0.88, ≤ 1.10×); the best static cap ({best['name']}); "
        "LangChain4j's default",
        f"{dyn['success_rate']:.3f} / {dyn['total_tokens'] / 1e6:.1f} M ({draw['success_rate']:.3f}, "
        f"{draw['vs_oracle_floor']:.3f}×); {best['success_rate']:.3f} / {best['total_tokens'] / 1e6:.1f} M; "
        f"{lc4j['success_rate']:.3f} / {lc4j['total_tokens'] / 1e6:.0f} M",
    )


def detection_row(r: dict) -> tuple[str, str]:
    return (
        f"stall detection on {r['runs']:,} labelled runs: precision / recall (target {r['targets']['recall']}) / "
        f"mean delay / false stops",
        f"{r['precision']} / {r['recall']:.2f} / {r['mean_delay']:.2f} calls / {r['false_stop_rate']}",
    )


def tune_row(r: dict) -> tuple[str, str]:
    rec, timing = r["recovery"], r["timing"]
    return (
        f"`pyguard tune`: a known best policy recovered ({rec['seeds']} seeds); time to tune {timing['runs']:,} runs "
        f"({timing['folds']}-fold, {timing['workers']} processes)",
        f"{sum(row['recovered'] for row in rec['rows'])} / {rec['seeds']}; {timing['seconds']:.0f} s",
    )


def nested_row(r: dict) -> tuple[str, str]:
    cells = [
        f"{row['unguarded']['model_calls']} → {row['guarded']['model_calls']} calls "
        f"({row['unguarded']['tokens']:,} → {row['guarded']['tokens']:,} tokens)"
        for row in r["rows"]
    ]
    limits = " / ".join(str(row["max_agents_invocations"]) for row in r["rows"])
    return (
        f"a LangChain4j supervisor re-invoking a stuck sub-agent (`maxAgentsInvocations` {limits}): the whole "
        "tree, unguarded → guarded",
        " / ".join(cells),
    )


def check_gate_row(r: dict) -> tuple[str, str]:
    cells = [f"{s['runs']}: {s['false_alarm_rate']:.3f} / {s['power']:.2f}" for s in r["sizes"]]
    return (
        "`pyguard check` against a baseline, runs per type: false alarms / the shifted stall rate caught",
        "; ".join(cells),
    )


def calibrate_scale_row(r: dict) -> tuple[str, str]:
    return (
        f"calibrating from {r['runs']:,} recorded runs ({r['task_types']} task types, {r['bootstrap']:,} bootstrap "
        "resamples)",
        f"{r['total_s']:.1f} s",
    )


def scale_row(r: dict) -> tuple[str, str]:
    biggest = max(s["runs"] for s in r["steps"])
    big = [f"{s['task']} {s['wall_s']:,.1f} s" for s in r["steps"] if s["runs"] == biggest]
    ratio = " / ".join(f"{k} {v}×" for k, v in r["parquet_vs_jsonl_runs_per_s"].items())
    return (
        f"{biggest:,} runs in Parquet (DuckDB for check and calibrate); runs/s of Parquet over JSON Lines on "
        f"{r['data']['jsonl_runs']:,} runs",
        f"{', '.join(big)}; {ratio}",
    )


def overhead_row(r: dict) -> tuple[str, str]:
    return (
        "what the bridge adds per model call (AiServices, the event to Python and a `continue` back, no engine)",
        f"+{r['overhead_us_per_call']:.1f} µs ({r['per_call_us_guarded']:.1f} vs {r['per_call_us_unguarded']:.1f} µs)",
    )


def concurrency_row(r: dict) -> tuple[str, str]:
    by = {lv["n"]: lv for lv in r["threads"]}
    one, top = by[min(by)], by[max(by)]
    rates = " / ".join(f"{lv['iterations_per_s']:,.0f}" for lv in by.values())
    return (
        f"the whole guard per model call on 1 thread (p50; target ≤ 50 µs); iterations/s on "
        f"{' / '.join(map(str, by))} threads in one JVM; p99 guard time at {max(by)} (target ≤ 10 ms)",
        f"{one['p50_guard_us']:.0f} µs; {rates}; {top['p99_guard_us'] / 1e3:.0f} ms",
    )


def concurrency_latency(r: dict) -> Table:
    header = _header(
        "model latency | agents | collector | model calls | guard p50 | guard p99 | full GCs (pause) "
        "| per call p50 / p99, guarded | unguarded | p99 target 5 ms"
    )
    rows = []
    for lv in r["levels"]:
        lo, hi = lv["latency_ms"]
        b = lv["unguarded"]
        for name, label in zip(("guarded", "frozen"), _collector_labels(r), strict=True):
            g = lv[name]
            rows.append(
                [
                    f"{lo} ms" if lo == hi else f"{lo}-{hi} ms",
                    str(lv["agents"]),
                    label,
                    f"{g['model_calls']:,}",
                    f"{g['guard_us']['p50'] / 1e3:.2f} ms",
                    f"{g['guard_us']['p99'] / 1e3:.2f} ms",
                    f"{g['gc_full_collections']} ({g['gc_full_pause_ms']:,.0f} ms)",
                    f"{g['per_call_ms']['p50']:.0f} / {g['per_call_ms']['p99']:.0f} ms",
                    f"{b['per_call_ms']['p50']:.0f} / {b['per_call_ms']['p99']:.0f} ms",
                    "met" if g["met"] else "missed",
                ]
            )
    return header, rows


def _collector_labels(r: dict) -> tuple[str, str]:
    """The two guarded phases: the process's collector as the JVM's start left it (start-up frozen by default since
    2026-12-02: ``startup_frozen`` objects), then everything alive after the warm-up frozen too."""
    if r.get("startup_frozen"):
        return "default: start-up frozen", "all frozen after warm-up"
    return "default", "start-up frozen"


def concurrency_latency_row(r: dict) -> tuple[str, str]:
    lv = r["levels"][0]
    lo, hi = lv["latency_ms"]
    return (
        f"the guard's added latency per model call, {lv['agents']} agents on a {lo}-{hi} ms model (p50 / p99; "
        f"target p99 ≤ 5 ms), {' / '.join(_collector_labels(r))}",
        f"{lv['guarded']['guard_us']['p50'] / 1e3:.2f} / {lv['guarded']['guard_us']['p99'] / 1e3:.1f} ms; "
        f"{lv['frozen']['guard_us']['p50'] / 1e3:.2f} / {lv['frozen']['guard_us']['p99'] / 1e3:.1f} ms",
    )


def engine_scaling_row(r: dict) -> tuple[str, str]:
    at = {(row["observation"], row["iterations"]): row["us_per_decision_at_n"] for row in r["rows"]}
    sizes = list(dict.fromkeys(row["observation"] for row in r["rows"]))
    cells = [f"{size}: {at[(size, 100)]:,.0f} / {at[(size, 1000)]:,.0f} µs" for size in sizes]
    return (
        "one engine decision at iteration 100 / 1000 (targets ≤ 25 µs at 1 KB, ≤ 0.5 ms at 100 KB); recorded runs "
        "replayed per second on one core",
        f"{'; '.join(cells)}; {r['replay_one_core']['runs_per_s']:,} runs/s",
    )


def replay_speed(r: dict) -> Table:
    header = _header(
        "source | runs | model calls | before: calls/s (per CPU s) | after: calls/s (per CPU s) | after / before "
        "(CPU) | same stops"
    )
    rows = []

    def speed(side: dict) -> str:
        return f"{side['calls_per_s']:,.0f} ({side['calls_per_cpu_s']:,.0f})"

    for name, s in r["sources"].items():
        b, a = s["before"], s["after"]
        rows.append(
            [
                name,
                f"{a['runs']:,}",
                f"{a['calls']:,}",
                speed(b),
                speed(a),
                f"{s['ratio']:.2f}x ({s['cpu_ratio']:.2f}x)",
                "yes" if s["same_stops"] else "no",
            ]
        )
    b, a = r["before"], r["after"]
    rows.append(["all", "", f"{a['calls']:,}", speed(b), speed(a), f"{r['ratio']:.2f}x ({r['cpu_ratio']:.2f}x)", ""])
    return header, rows


def replay_speed_row(r: dict) -> tuple[str, str]:
    return (
        f"`replay` of the recorded sources on one core, loading included: model calls per second, this tree against"
        f" {r.get('before_commit') or 'the earlier one'} in the same run (target 10x)",
        f"{r['after']['calls_per_s']:,.0f} against {r['before']['calls_per_s']:,.0f} per wall second"
        f" ({r['ratio']:.2f}x), {r['after']['calls_per_cpu_s']:,.0f} against"
        f" {r['before']['calls_per_cpu_s']:,.0f} per CPU second ({r['cpu_ratio']:.2f}x)",
    )


@dataclass(frozen=True)
class Entry:
    name: str
    """The JSON and paragraph files' stem in benchmarks/results/."""
    title: str
    table: Callable[[dict], Table]
    row: Callable[[dict], tuple[str, str]]
    """README's Measured row: what, and the figure."""


ENTRIES = (
    Entry("real_replay", "the policy on public recordings of real agents", real_replay, real_replay_row),
    Entry(
        "real_replay-loso",
        "the default chosen leave-one-source-out, and what a reflection buys",
        real_replay_loso,
        real_replay_loso_row,
    ),
    Entry("tune-real", "`pyguard tune` on the recorded sources, held out", tune_real, tune_real_row),
    Entry("frontier", "the dynamic guard against every static cap, on a scripted workload", frontier, frontier_row),
    Entry("detection", "the stall detector on labelled sequences", detection, detection_row),
    Entry("tune", "`pyguard tune` recovering a known best policy; tuning 10,000 runs", tune, tune_row),
    Entry("nested", "a supervisor looping over a stuck sub-agent", nested, nested_row),
    Entry("check_gate", "false alarms and power of `pyguard check`'s baseline comparison", check_gate, check_gate_row),
    Entry("calibrate_scale", "calibrating from 100,000 recorded runs", calibrate_scale, calibrate_scale_row),
    Entry("scale", "replay, check and calibrate from Parquet against JSON Lines", scale, scale_row),
    Entry("overhead", "what the guard adds per model call", overhead, overhead_row),
    Entry("concurrency", "guarded agents on many threads in one JVM", concurrency, concurrency_row),
    Entry(
        "concurrency_latency",
        "the guard's added latency per model call, 64 agents on a slow model",
        concurrency_latency,
        concurrency_latency_row,
    ),
    Entry("engine_scaling", "the cost of one decision as a run grows", engine_scaling, engine_scaling_row),
    Entry(
        "replay_speed", "`replay` on the recorded sources, before and after, one core", replay_speed, replay_speed_row
    ),
)

HEADER = """# Benchmark results

This page is generated by `python benchmarks/results_page.py` from the kept run of each suite
(`benchmarks/results/<entry>.json`, the suite's `--json` output) and its paragraph (`benchmarks/results/<entry>.md`);
do not edit it by hand. Each section gives the command, the environment it ran in, one table and one paragraph.
Absolute times vary between machines and with the machine's load (given in each environment line); compare ratios
and counts. Every suite also has a `--quick` mode, which the tests run to check that it works and that its JSON is
well formed, never its figures. How the figures changed over time: `git log -p benchmarks/results/` and
[CHANGELOG.md](../CHANGELOG.md).
"""


class PageError(Exception):
    """A kept run or a paragraph the page cannot be built from; the message names the file."""


def _table(header: list[str], rows: list[list[str]]) -> str:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header), *(line(r) for r in rows)])


def environment(r: dict) -> str:
    m = r.get("machine", {})
    load, load_end = m.get("load_average"), m.get("load_average_end")
    parts = [r.get("date", "date not recorded")]
    if r.get("commit"):
        parts.append(f"commit {r['commit']}")
    if r.get("run_seconds") is not None:
        parts.append(f"{r['run_seconds']:,.0f} s")
    parts.append(f"CPython {m.get('python', '?')} on {m.get('platform', '?')}, {m.get('cpus', '?')} CPUs")
    if load:
        parts.append(
            f"load average {load[0]:.1f} at the start" + (f", {load_end[0]:.1f} at the end" if load_end else "")
        )
    return "; ".join(parts)


def _paragraph(entry: Entry, result: dict, results: Path) -> str:
    path = results / f"{entry.name}.md"
    if not path.is_file():
        raise PageError(f"{path} is missing: write the paragraph of entry {entry.name!r} there")
    template = path.read_text(encoding="utf-8").strip()
    try:
        return _fill(template.format_map(result))
    except (KeyError, IndexError, ValueError, TypeError) as exc:
        raise PageError(
            f"{path}: cannot fill a placeholder from {entry.name}.json ({type(exc).__name__}: {exc})"
        ) from None


def section(entry: Entry, result: dict, results: Path) -> str:
    header, rows = _run_field(entry, result, entry.table)
    return "\n\n".join(
        [
            f"## {entry.name} — {entry.title}",
            f"`{result.get('command', 'command not recorded')}`",
            _fill(f"Environment: {environment(result)}."),
            _table(header, rows),
            _paragraph(entry, result, results),
        ]
    )


def kept_runs(results: Path = RESULTS) -> list[tuple[Entry, dict]]:
    """Each entry with a kept run in ``results``, in page order."""
    known = {e.name for e in ENTRIES}
    strays = sorted(p.name for p in results.glob("*.json") if p.stem not in known)
    if strays:
        raise PageError(
            f"{results}: {', '.join(strays)}: not the kept run of any entry; add the entry to ENTRIES or remove it"
        )
    kept = []
    for entry in ENTRIES:
        path = results / f"{entry.name}.json"
        if not path.is_file():
            continue
        try:
            result = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise PageError(f"{path} is not the JSON of a suite run ({exc})") from None
        if result.get("quick"):
            raise PageError(f"{path} is a --quick run; keep a full run")
        kept.append((entry, result))
    return kept


def page(kept: list[tuple[Entry, dict]], results: Path = RESULTS) -> str:
    """RESULTS.md: the header, the contents, one section per kept run."""
    contents = []
    for entry, _ in kept:
        anchor = f"{entry.name}--{entry.title}".lower()
        anchor = "".join(c for c in anchor if c.isalnum() or c in " -_").replace(" ", "-")
        contents.append(f"- [{entry.name}](#{anchor}): {entry.title}")
    sections = [section(entry, result, results) for entry, result in kept]
    return "\n\n".join([HEADER.strip(), "\n".join(contents), *sections]) + "\n"


def _run_field(entry: Entry, result: dict, build: Callable[[dict], T]) -> T:
    """``build(result)``, or a PageError naming the kept run and the function that could not read it."""
    try:
        return build(result)
    except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise PageError(
            f"{entry.name}.json lacks a field that {build.__name__}() in benchmarks/results_page.py reads "
            f"({type(exc).__name__}: {exc}); re-run the suite, or update {build.__name__}() to the suite's JSON"
        ) from None


def measured(kept: list[tuple[Entry, dict]]) -> str:
    """README's Measured table: one row per kept run, its figure and the command that produced it."""
    rows = []
    for entry, result in kept:
        what, figure = _run_field(entry, result, entry.row)
        load = result.get("machine", {}).get("load_average")
        when = result.get("date", "date not recorded") + (f", load {load[0]:.1f}" if load else "")
        rows.append([what, figure, f"`{result.get('command', 'command not recorded')}` ({when})"])
    return _table(["what", "figure", "command (when, the machine's load average)"], rows)


README = HERE.parent / "README.md"
BEGIN = "<!-- measured: written by python benchmarks/results_page.py from benchmarks/results/; do not edit -->"
END = "<!-- /measured -->"


def with_measured(readme: str, table: str) -> str:
    """``readme`` with the text between the Measured markers replaced by ``table``."""
    if readme.count(BEGIN) != 1 or readme.count(END) != 1 or readme.index(BEGIN) > readme.index(END):
        raise PageError(f"README.md needs one {BEGIN} line and one {END} line after it, around the Measured table")
    head, rest = readme.split(BEGIN)
    _, tail = rest.split(END)
    return f"{head}{BEGIN}\n{table}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/results_page.py", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a file is stale, writing nothing")
    parser.add_argument("--results", type=Path, default=RESULTS, help="the kept runs (default: benchmarks/results)")
    parser.add_argument("--page", type=Path, default=PAGE, help="the page (default: benchmarks/RESULTS.md)")
    parser.add_argument("--readme", type=Path, default=README, help="the README whose Measured table is written")
    args = parser.parse_args(argv)
    try:
        kept = kept_runs(args.results)
        wanted = {args.page: page(kept, args.results)}
        readme = args.readme.read_text(encoding="utf-8") if args.readme.is_file() else ""
        wanted[args.readme] = with_measured(readme, measured(kept))
    except PageError as exc:
        print(f"results_page: {exc}", file=sys.stderr)
        return 2
    stale = [path for path, text in wanted.items() if not path.is_file() or path.read_text(encoding="utf-8") != text]
    if args.check:
        for path in stale:
            print(f"results_page: {path} is stale: run python benchmarks/results_page.py", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(wanted[path], encoding="utf-8")
        print(f"results_page: wrote {path} ({wanted[path].count(chr(10))} lines)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
