"""The all-runs token check of ``pyguard check --baseline`` compares each run's tokens relative to its task type's
baseline median (mixing types' raw tokens would compare different mixes): its figures are ratios, and the report says
so, instead of showing "tokens 1.254" beside task types' thousands."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from pyguard.cli import main

RUNS = Path(__file__).resolve().parents[2] / "data" / "mixed_runs.jsonl"


def _check(tmp_path: Path, *extra: str) -> str:
    baseline = tmp_path / "b.json"
    made = CliRunner().invoke(main, ["check", str(RUNS), "--write-baseline", str(baseline)])
    assert made.exit_code == 0, made.output
    out = CliRunner().invoke(main, ["check", str(RUNS), "--baseline", str(baseline), *extra], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    return out.output


def test_the_all_runs_token_figure_reads_as_a_ratio(tmp_path):
    text = _check(tmp_path)
    (row,) = [line for line in text.splitlines() if line.lstrip().startswith("pass  tokens") and "all runs" in line]
    assert "1.209×" in row and "baseline 1.209×" in row, row
    assert "× its task type's baseline median" in " ".join(text.split())
    (typed,) = [
        line for line in text.splitlines() if line.lstrip().startswith("pass  tokens") and "order_support" in line
    ]
    assert "1,849" in typed and "×" not in typed.split("order_support")[1].split("baseline")[0], typed


def test_the_markdown_says_it_too(tmp_path):
    md = tmp_path / "check.md"
    _check(tmp_path, "--markdown", str(md))
    text = md.read_text()
    assert "| `baseline.tokens` | all runs | 1.209× | baseline 1.209× |" in text, text
    assert "× its task type's baseline median" in text
