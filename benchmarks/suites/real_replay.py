"""A policy on public recordings of real agents: false stops, failed-run calls saved, capped runs stopped.

``python benchmarks/run.py real_replay --data DIR [--config POLICY.toml] [--json] [--quick]``

DIR holds one folder per source, each with a ``source.toml`` manifest (``benchmarks/real_data/prepare.py --out
DIR`` writes them from the public repositories named in ``benchmarks/real_data/sources.toml``): ``format``,
``runs`` (globs), ``labels`` (optional path), ``kind`` ("answer" or "artifact"), ``terminal_tools``,
``step_cap``. ``--quick`` (and no ``--data``) uses the small committed fixtures in ``tests/data/real``.

Every run is loaded with pyguard's importers (skipped items are counted and reported per source), replayed
through the policy (``pyguard.replay.replay_run``; the default ``PolicyConfig`` unless ``--config``), and through
the two peers, and scored exactly as the shared real-runs metrics define (see ``_real_metrics``): per source,
and as the mean over sources (each source weighs the same; a source with no capped run, or no failed run, has
no figure for that column and is left out of its mean), plus the worst source for false stops. Replays run in
worker processes (one per CPU) when there are many runs.
"""

from __future__ import annotations

import glob
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from suites._real_metrics import last_artifact_change, openhands_stop, repeat_stop, score

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "data" / "real"
POLICIES = ("pyguard", "repeat", "openhands")
FIGURES = ("false_stop_rate", "failed_calls_saved", "capped_stopped")
_CHUNK = 150  # runs per job
_FILES_PER_CHUNK = 50


def _manifests(data: Path) -> list[tuple[str, Path, dict]]:
    if not data.is_dir():
        raise SystemExit(f"--data {data}: not a directory; run benchmarks/real_data/prepare.py --out {data} first")
    found = []
    for manifest in sorted(data.glob("*/source.toml")):
        with open(manifest, "rb") as f:
            spec = tomllib.load(f)
        found.append((str(spec.get("name", manifest.parent.name)), manifest.parent, spec))
    if not found:
        raise SystemExit(
            f"--data {data}: no <source>/source.toml inside; run benchmarks/real_data/prepare.py --out {data}"
        )
    return found


def _files(folder: Path, spec: dict) -> list[str]:
    files = sorted(
        {f for pattern in spec.get("runs", ["**/*.json*"]) for f in glob.glob(str(folder / pattern), recursive=True)}
    )
    if not files:
        raise SystemExit(f"{folder}: no file matches runs = {spec.get('runs')}")
    return files


def _load(folder: Path, spec: dict, files: list[str] | None = None):  # noqa: ANN202
    from pyguard.trace import load_runs

    labels = spec.get("labels")
    return load_runs(
        files or _files(folder, spec),
        format=spec.get("format"),
        terminal_tools=spec.get("terminal_tools") or None,
        labels=str(folder / labels) if labels else None,
    )


def _replay_chunk(args: tuple[str, dict, list[str] | None, int, int, str | None]) -> list[dict]:
    """Replay runs [start, stop) of the given files of one source (read again in this process: cheaper than
    pickling runs; a source with one run per file is split by files, so each process reads only its own)."""
    folder, spec, files, start, stop, config_path = args
    from pyguard.replay import replay_run

    config = None
    if config_path:
        from pyguard.engine import PolicyConfig

        config = PolicyConfig.from_toml(config_path)
    runs = _load(Path(folder), spec, files)[start:stop]
    artifact = spec.get("kind") == "artifact"
    rows = []
    for record in runs:
        replayed = replay_run(record, config)
        end = record.end
        base = {
            "id": record.run_id,
            "n": len(record.events),
            "label": end.success_label if end is not None else None,
            "capped": bool(end is not None and end.censored),
            "calls": [len(e.tool_calls) for e in record.events],
            "last_edit": last_artifact_change(record) if artifact else 0,
        }
        rows.append(
            {
                **base,
                "pyguard": {"stop_at": replayed.stop_at, "rule": replayed.rule, "reason": replayed.reason},
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
            }
        )
    return rows


def _mean(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return statistics.fmean(kept) if kept else None


def run(quick: bool, data: str | None = None, config: str | None = None) -> dict:
    root = Path(data) if data else FIXTURES
    if not data and not quick:
        raise SystemExit("real_replay needs --data DIR (see benchmarks/README.md: how to get the data), or --quick")
    sources = _manifests(root)
    started = time.perf_counter()
    jobs, meta = [], {}
    for name, folder, spec in sources:
        files = _files(folder, spec)
        loaded = _load(folder, spec, files)
        meta[name] = {"spec": spec, "skipped": dict(loaded.skipped), "runs": len(loaded)}
        if len(files) >= len(loaded) > _CHUNK:  # one run per file: split the files
            for start in range(0, len(files), _FILES_PER_CHUNK):
                jobs.append((name, (str(folder), spec, files[start : start + _FILES_PER_CHUNK], 0, None, config)))
        else:
            for start in range(0, len(loaded), _CHUNK):
                jobs.append((name, (str(folder), spec, files, start, min(start + _CHUNK, len(loaded)), config)))
    workers = min(os.cpu_count() or 1, len(jobs))
    if workers > 1 and sum(m["runs"] for m in meta.values()) > 200:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(_replay_chunk, [j[1] for j in jobs]))
    else:
        results = [_replay_chunk(j[1]) for j in jobs]
    rows_by_source: dict[str, list[dict]] = {name: [] for name, _, _ in sources}
    for (name, _), rows in zip(jobs, results, strict=False):
        rows_by_source[name].extend(rows)
    per_source = {}
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
            "skipped": meta[name]["skipped"],
            "policies": {p: score([{**r, **r[p]} for r in rows], artifact=artifact) for p in POLICIES},
        }
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
        f"real_replay: {sum(s['runs'] for s in per_source.values())} runs from {len(per_source)} sources in"
        f" {elapsed:.1f} s ({workers} worker(s))",
        file=sys.stderr,
    )
    return {
        "data": str(root),
        "config": config,
        "sources": per_source,
        "mean": mean,
        "worst_false_stops": worst,
        "seconds": round(elapsed, 2),
    }


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


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
                f"{s['successes']} / {s['failures']} / {s['capped']}" if k == 0 else "",
                p,
                f"{_pct(fig['false_stop_rate'])} ({fig['false_stops']})",
                _pct(fig["failed_calls_saved"]),
                f"{_pct(fig['capped_stopped'])} ({fig['capped_stopped_count']})",
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
