"""The trade-off between false stops and savings on recorded runs of real agents, per source.

    python benchmarks/real_data/tradeoff.py --data DIR [--out benchmarks/results] [--json]

Runs the ``real_replay`` suite once per policy file in ``benchmarks/real_data/policies/`` (ordered from the most
cautious to the most eager; ``2-default.toml`` is the default policy) and prints, per source and as the mean over
sources: successful runs stopped early, failed-run tool calls saved and capped runs stopped before their cap. With
``--out`` it also draws ``real_tradeoff.png``: one curve per source, false stops against savings, the default
marked. The figures are the suite's own (``benchmarks/suites/_real_metrics.py``), nothing is recomputed here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parents[1]))  # this checkout's pyguard, not another installed one (as run.py does)

from suites import real_replay  # noqa: E402

POLICIES = sorted((HERE / "policies").glob("*.toml"))


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def measure(data: str) -> list[dict]:
    """One real_replay result per policy file: ``{"policy", "sources": {name: figures}, "mean": figures}``."""
    points = []
    for policy in POLICIES:
        result = real_replay.run(False, data=data, config=str(policy))
        sources = {name: src["policies"]["pyguard"] for name, src in result["sources"].items()}
        points.append(
            {
                "policy": policy.stem,
                "sources": sources,
                "mean": result["mean"]["pyguard"],
                "worst": result["worst_false_stops"]["pyguard"],
            }
        )
    return points


def plot(points: list[dict], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 5))
    names = sorted({n for p in points for n in p["sources"]})
    for name in names + ["mean over sources"]:
        xs, ys = [], []
        for p in points:
            fig_ = p["mean"] if name == "mean over sources" else p["sources"].get(name)
            if fig_ is None or fig_.get("false_stop_rate") is None or fig_.get("failed_calls_saved") is None:
                continue
            xs.append(100 * fig_["false_stop_rate"])
            ys.append(100 * fig_["failed_calls_saved"])
        style = {"color": "black", "linewidth": 2.5} if name == "mean over sources" else {}
        ax.plot(xs, ys, marker="o", label=name, **style)
        default = next((k for k, p in enumerate(points) if p["policy"] == "2-default"), None)
        if default is not None and default < len(xs):
            ax.scatter([xs[default]], [ys[default]], s=140, facecolors="none", edgecolors="red", zorder=5)
    ax.axvline(1.0, color="grey", linestyle="--", linewidth=1)
    ax.axhline(5.0, color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel("successful runs stopped early (%)  — bound: 1% mean, 2% per source")
    ax.set_ylabel("failed runs' tool calls saved (%)  — goal: 5%")
    ax.set_title(
        "pyguard on recorded runs of real agents: one point per policy, cautious to eager\n"
        "(" + ", ".join(p["policy"] for p in points) + "; circled in red: the default)",
        fontsize=8,
    )
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(alpha=0.3)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "real_tradeoff.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="the folder benchmarks/real_data/prepare.py wrote")
    ap.add_argument("--out", type=Path, default=None, help="write real_tradeoff.png there")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    points = measure(args.data)
    if args.json:
        print(json.dumps(points, indent=2))
    else:
        names = sorted({n for p in points for n in p["sources"]})
        print("policy                 " + "  ".join(f"{n[:14]:>24}" for n in names) + "                    mean")
        print("(false stops / saved / capped stopped)")
        for p in points:
            cells = []
            for n in names + ["mean"]:
                f = p["mean"] if n == "mean" else p["sources"].get(n, {})
                cells.append(
                    f"{_pct(f.get('false_stop_rate'))} / {_pct(f.get('failed_calls_saved'))} / "
                    f"{_pct(f.get('capped_stopped'))}"
                )
            print(f"{p['policy']:22s} " + "  ".join(f"{c:>24}" for c in cells))
    if args.out is not None:
        print(f"plot: {plot(points, args.out)}", file=sys.stderr)


if __name__ == "__main__":
    main()
