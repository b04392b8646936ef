"""A policy on public recordings of real agents: false stops, failed-run calls saved, capped runs stopped.

``python benchmarks/run.py real_replay --data DIR [--config POLICY.toml] [--json] [--quick]``

DIR holds one folder per source, each with a ``source.toml`` manifest (``benchmarks/real_data/prepare.py --out
DIR`` writes them from the public repositories named in ``benchmarks/real_data/sources.toml``): ``format``,
``runs`` (globs), ``labels`` (optional path), ``kind`` ("answer" or "artifact"), ``terminal_tools``,
``step_cap``. ``--quick`` (and no ``--data``) uses the small committed fixtures in ``tests/data/real``.

Every run is loaded with pyguard's importers (skipped items are counted and reported per source), replayed
through the policy (``pyguard.replay.replay_run``; the default ``PolicyConfig`` unless ``--config``), and through
the two peers, and scored exactly as the shared real-runs metrics define (see ``_real_metrics``): per source,
each figure with its 95% Wilson interval (``small`` names the kinds of run a source has fewer than 30 of), and as
the mean over sources (each source weighs the same; a source with no capped run, or no failed run, has
no figure for that column and is left out of its mean), plus the worst source for false stops. Replays run in
worker processes (one per CPU) when there are many runs.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from suites._loso import candidates
from suites._loso import loso as leave_one_source_out
from suites._real_metrics import SMALL, last_artifact_change, openhands_stop, repeat_stop, score, small_kinds
from suites._real_sources import load_source, manifests, source_files

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "data" / "real"
POLICIES = ("pyguard", "repeat", "openhands")
FIGURES = ("false_stop_rate", "failed_calls_saved", "capped_stopped")
_CHUNK = 150  # runs per job
_FILES_PER_CHUNK = 50
POLICY_FILES = ROOT / "benchmarks" / "real_data" / "policies"
DEFAULT_CANDIDATE = "2-default"
"""The policy file that is the shipped default (an empty file: ``PolicyConfig()``)."""


def _first_reflection(reflect_at: list[int], stop_at: int | None) -> int | None:
    """The first reflection before the stop (or anywhere, when it never stops); None when there is none."""
    before = [i for i in reflect_at if stop_at is None or i < stop_at]
    return before[0] if before else None


def _replay_chunk(args: tuple[str, dict, list[str] | None, int, int | None, list[tuple[str, dict]]]) -> list[dict]:
    """Replay runs [start, stop) of the given files of one source (read again in this process: cheaper than
    pickling runs; a source with one run per file is split by files, so each process reads only its own) through
    each named policy (``PolicyConfig`` dumps; the first is ``pyguard``, the policy under test) and the peers."""
    folder, spec, files, start, stop, configs = args
    from pyguard.engine import PolicyConfig
    from pyguard.replay import replay_run

    policies = [(name, PolicyConfig.model_validate(dump)) for name, dump in configs]
    runs = load_source(Path(folder), spec, files)[start:stop]
    artifact = spec.get("kind") == "artifact"
    rows = []
    for record in runs:
        end = record.end
        row: dict = {
            "id": record.run_id,
            "n": len(record.events),
            "label": end.success_label if end is not None else None,
            "capped": bool(end is not None and end.censored),
            "calls": [len(e.tool_calls) for e in record.events],
            "last_edit": last_artifact_change(record) if artifact else 0,
            "repeat": {
                "stop_at": repeat_stop(record.events),
                "rule": "exact_repeat",
                "reason": "an exact (tool, arguments) repeat",
            },
            "openhands": {
                "stop_at": openhands_stop(record.events),
                "rule": "stuck",
                "reason": "OpenHands-style stuck pattern",
            },
            "candidates": {},
        }
        for k, (name, config) in enumerate(policies):
            replayed = replay_run(record, config)
            stops = {
                "stop_at": replayed.stop_at,
                "rule": replayed.rule,
                "reason": replayed.reason,
                "reflect_at": _first_reflection(replayed.reflect_at, replayed.stop_at),
            }
            if k == 0:
                row["pyguard"] = stops
            else:
                row["candidates"][name] = stops
        rows.append(row)
    return rows


def _mean(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return statistics.fmean(kept) if kept else None


def _reflection_share(rows: list[dict], artifact: bool) -> dict:
    """What the first signal (a reflection) buys against the second (the stop after it), for the policy under test:
    of the failed runs it stops early, how many were reflected on first; the calls saved at the stop, and what the
    same runs would save if the stop came at the first reflection; and the three figures of that variant ("every
    reflection stops": stop_at = the first reflection when there is one before the stop)."""
    bad = [r for r in rows if r["label"] is False]
    early = [r for r in bad if r["pyguard"]["stop_at"] is not None and r["pyguard"]["stop_at"] < r["n"]]
    after = [r for r in early if r["pyguard"]["reflect_at"] is not None]
    failed_calls = sum(sum(r["calls"]) for r in bad)

    def saved(r: dict, at: int) -> int:
        return sum(r["calls"][at:])

    at_stop = sum(saved(r, r["pyguard"]["stop_at"]) for r in after)
    at_reflection = sum(saved(r, r["pyguard"]["reflect_at"]) for r in after)
    variant = [
        {**r, **r["pyguard"], "stop_at": r["pyguard"]["reflect_at"] or r["pyguard"]["stop_at"], "rule": "reflection"}
        for r in rows
    ]
    figures = score(variant, artifact=artifact, examples=0)
    return {
        "failed_stopped": len(early),
        "failed_stopped_after_reflection": len(after),
        "share_after_reflection": len(after) / len(early) if early else None,
        "calls_saved_by_those_stops": at_stop,
        "calls_saved_if_stopped_at_reflection": at_reflection,
        "failed_calls": failed_calls,
        "extra_saved_share": (at_reflection - at_stop) / failed_calls if failed_calls else None,
        "stop_at_first_reflection": {k: figures[k] for k in (*FIGURES, "false_stops")},
    }


def _replay_sources(
    sources: list[tuple[str, Path, dict]], configs: list[tuple[str, dict]]
) -> tuple[dict[str, list[dict]], dict[str, dict], int]:
    """Rows of every run of every source replayed through ``configs`` (see :func:`_replay_chunk`), the loading
    figures per source, and the number of worker processes used."""
    jobs, meta = [], {}
    for name, folder, spec in sources:
        files = source_files(folder, spec)
        loaded = load_source(folder, spec, files)
        meta[name] = {"spec": spec, "skipped": dict(loaded.skipped), "runs": len(loaded)}
        if len(files) >= len(loaded) > _CHUNK:  # one run per file: split the files
            for start in range(0, len(files), _FILES_PER_CHUNK):
                jobs.append((name, (str(folder), spec, files[start : start + _FILES_PER_CHUNK], 0, None, configs)))
        else:
            for start in range(0, len(loaded), _CHUNK):
                jobs.append((name, (str(folder), spec, files, start, min(start + _CHUNK, len(loaded)), configs)))
    workers = min(os.cpu_count() or 1, len(jobs))
    if workers > 1 and sum(m["runs"] for m in meta.values()) > 200:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(_replay_chunk, [j[1] for j in jobs]))
    else:
        results = [_replay_chunk(j[1]) for j in jobs]
    rows_by_source: dict[str, list[dict]] = {name: [] for name, _, _ in sources}
    for (name, _), rows in zip(jobs, results, strict=False):
        rows_by_source[name].extend(rows)
    return rows_by_source, meta, workers


def _top_level(path: str) -> dict:
    """The top-level settings (not the tables) of the policy TOML at ``path``."""
    import tomllib

    with open(path, "rb") as f:
        return {k: v for k, v in tomllib.load(f).items() if not isinstance(v, dict)}


def run(quick: bool, data: str | None = None, config: str | None = None, loso: bool = False) -> dict:
    from pyguard.engine import PolicyConfig

    root = Path(data) if data else FIXTURES
    if not data and not quick:
        raise SystemExit("real_replay needs --data DIR (see benchmarks/README.md: how to get the data), or --quick")
    sources = manifests(root)
    started = time.perf_counter()
    configs = [("pyguard", (PolicyConfig.from_toml(config) if config else PolicyConfig()).model_dump())]
    if loso:  # the candidates with --config's top-level settings over each (a switch measured leave-one-source-out)
        configs += candidates(POLICY_FILES, space=not quick, overlay=_top_level(config) if config else None)
    rows_by_source, meta, workers = _replay_sources(sources, configs)
    per_source = {}
    table: dict[str, dict[str, dict]] = {name: {} for name, _ in configs[1:]}
    for name, rows in rows_by_source.items():
        spec = meta[name]["spec"]
        artifact = spec.get("kind") == "artifact"
        per_source[name] = {
            "origin": spec.get("origin") or f"{spec.get('repo')}@{spec.get('commit')}",
            "format": spec.get("format"),
            "kind": spec.get("kind", "answer"),
            "runs": len(rows),
            "successes": sum(r["label"] is True for r in rows),
            "failures": sum(r["label"] is False for r in rows),
            "unlabelled": sum(r["label"] is None for r in rows),
            "capped": sum(r["capped"] for r in rows),
            "small": small_kinds(rows),
            "skipped": meta[name]["skipped"],
            "policies": {p: score([{**r, **r[p]} for r in rows], artifact=artifact) for p in POLICIES},
            "reflection": _reflection_share(rows, artifact),
        }
        for cand in table:
            table[cand][name] = score([{**r, **r["candidates"][cand]} for r in rows], artifact=artifact, examples=0)
    mean = {p: {f: _mean([s["policies"][p][f] for s in per_source.values()]) for f in FIGURES} for p in POLICIES}
    worst = {}
    for p in POLICIES:
        rated = [
            (s["policies"][p]["false_stop_rate"], n)
            for n, s in per_source.items()
            if s["policies"][p]["false_stop_rate"] is not None
        ]
        rate, name = max(rated) if rated else (None, None)
        worst[p] = {"source": name, "false_stop_rate": rate}
    elapsed = time.perf_counter() - started
    print(
        f"real_replay: {sum(s['runs'] for s in per_source.values())} runs from {len(per_source)} sources"
        f" through {len(configs)} polic{'y' if len(configs) == 1 else 'ies'} in {elapsed:.1f} s"
        f" ({workers} worker(s))",
        file=sys.stderr,
    )
    result = {
        "data": str(root),
        "config": config,
        "sources": per_source,
        "mean": mean,
        "worst_false_stops": worst,
        "seconds": round(elapsed, 2),
    }
    if loso:
        result["loso"] = leave_one_source_out(table, list(per_source), default=DEFAULT_CANDIDATE)
    return result


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _ci(fig: dict, figure: str) -> str:
    """A figure with its 95% Wilson interval: ``3.1% [1.4–6.5%]``."""
    key = {"false_stop_rate": "false_stop_interval", "failed_calls_saved": "failed_calls_saved_interval"}.get(
        figure, "capped_stopped_interval"
    )
    interval = fig.get(key)
    ci = "" if not interval else f" [{interval[0] * 100:.1f}–{interval[1]:.1%}]"
    return _pct(fig[figure]) + ci


def _counts(s: dict) -> str:
    """``ok / failed / capped``, a count under 30 marked ``*`` (a small-sample figure)."""
    small = set(s.get("small", []))
    marks = {k: "*" if k in small else "" for k in ("successful", "failed", "capped")}
    return f"{s['successes']}{marks['successful']} / {s['failures']}{marks['failed']} / {s['capped']}{marks['capped']}"


def render(result: dict, console) -> None:  # noqa: ANN001
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"real_replay: {result['data']}  (policy: {result['config'] or 'default PolicyConfig'})")
    for col in (
        "source",
        "runs",
        "ok / failed / capped",
        "policy",
        "successful stopped",
        "failed calls saved",
        "capped stopped",
    ):
        table.add_column(col, justify="left" if col in ("source", "policy") else "right")
    for name, s in result["sources"].items():
        for k, p in enumerate(POLICIES):
            fig = s["policies"][p]
            table.add_row(
                name if k == 0 else "",
                str(s["runs"]) if k == 0 else "",
                _counts(s) if k == 0 else "",
                p,
                f"{_ci(fig, 'false_stop_rate')} ({fig['false_stops']})",
                _ci(fig, "failed_calls_saved"),
                f"{_ci(fig, 'capped_stopped')} ({fig['capped_stopped_count']})",
                end_section=k == len(POLICIES) - 1,
            )
    for k, p in enumerate(POLICIES):
        m = result["mean"][p]
        w = result["worst_false_stops"][p]
        table.add_row(
            "mean over sources" if k == 0 else "",
            "",
            "",
            p,
            f"{_pct(m['false_stop_rate'])} (worst {w['source']}: {_pct(w['false_stop_rate'])})",
            _pct(m["failed_calls_saved"]),
            _pct(m["capped_stopped"]),
        )
    console.print(table)
    console.print(
        f"[brackets]: 95% Wilson intervals; * fewer than {SMALL} runs of that kind in the source (a small-sample figure)"
    )
    for name, s in result["sources"].items():
        if s["skipped"]:
            console.print(f"[yellow]{escape(name)}: skipped while loading: {escape(str(s['skipped']))}[/yellow]")
        fig = s["policies"]["pyguard"]
        if fig["false_stops"]:
            console.print(
                f"[bold]{escape(name)}[/bold]: pyguard false stops by rule: {escape(str(fig['false_stop_rules']))}"
            )
            for ex in fig["false_stop_examples"]:
                edit = f", last edit {ex['last_edit']}" if ex["last_edit"] is not None else ""
                console.print(
                    escape(
                        f"  {ex['id']}: stop at {ex['stop_at']} of {ex['iterations']}{edit} — {ex['rule']}:"
                        f" {ex['reason'][:160]}"
                    )
                )
    _render_reflection(result, console)
    if "loso" in result:
        _render_loso(result["loso"], console)


def _render_reflection(result: dict, console) -> None:  # noqa: ANN001
    from rich.table import Table

    table = Table(title="what a reflection buys (policy under test): the first signal vs the stop after it")
    for col in (
        "source",
        "failed runs stopped",
        "of them reflected first",
        "calls saved by those stops",
        "if stopped at the reflection",
        "every reflection stops: false stops / saved / capped",
    ):
        table.add_column(col, justify="left" if col == "source" else "right")
    for name, s in result["sources"].items():
        r = s["reflection"]
        v = r["stop_at_first_reflection"]
        table.add_row(
            name,
            str(r["failed_stopped"]),
            f"{r['failed_stopped_after_reflection']} ({_pct(r['share_after_reflection'])})",
            str(r["calls_saved_by_those_stops"]),
            f"{r['calls_saved_if_stopped_at_reflection']} (+{_pct(r['extra_saved_share'])} of failed calls)",
            f"{_pct(v['false_stop_rate'])} / {_pct(v['failed_calls_saved'])} / {_pct(v['capped_stopped'])}",
        )
    console.print(table)


def _render_loso(loso: dict, console) -> None:  # noqa: ANN001
    from rich.markup import escape
    from rich.table import Table

    table = Table(
        title=f"leave-one-source-out: {len(loso['candidates'])} candidate policies; per-source bound {loso['bound']:g}"
    )
    for col in ("source", "column", "policy chosen", "successful stopped", "failed calls saved", "capped stopped"):
        table.add_column(col, justify="left" if col in ("source", "column", "policy chosen") else "right")
    labels = {"default": "shipped default", "in_sample": "chosen on all sources", "loso": "chosen without it"}
    for name, row in loso["sources"].items():
        for k, column in enumerate(("default", "in_sample", "loso")):
            fig = row[column]
            table.add_row(
                name if k == 0 else "",
                labels[column],
                escape(fig["candidate"]),
                _ci(fig, "false_stop_rate"),
                _ci(fig, "failed_calls_saved"),
                _ci(fig, "capped_stopped"),
                end_section=k == 2,
            )
    for k, column in enumerate(("default", "in_sample", "loso")):
        s = loso["summary"][column]
        w = s["worst_false_stops"]
        table.add_row(
            "mean over sources" if k == 0 else "",
            labels[column],
            "",
            f"{_pct(s['mean']['false_stop_rate'])} (worst {w['source']}: {_pct(w['false_stop_rate'])})",
            _pct(s["mean"]["failed_calls_saved"]),
            _pct(s["mean"]["capped_stopped"]),
        )
    console.print(table)
    console.print(escape(f"procedure: {loso['procedure']}"))
