"""benchmarks/RESULTS.md is generated from the kept runs: the committed page is up to date, a changed run makes it
stale, and a run or paragraph the page cannot be built from is refused naming the file."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import results_page  # noqa: E402


def test_the_committed_page_is_what_the_kept_runs_give():
    assert results_page.main(["--check"]) == 0, "run: python benchmarks/results_page.py"


def test_the_page_holds_every_kept_run_within_600_lines():
    page = results_page.PAGE.read_text(encoding="utf-8")
    assert page.count("\n") <= 600
    kept = sorted(p.stem for p in results_page.RESULTS.glob("*.json"))
    assert kept, "no kept run in benchmarks/results"
    for name in kept:
        assert f"\n## {name} — " in page
    assert "§" not in page  # no section numbers: entries are named by their suite


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A copy of the kept runs and paragraphs, with the page built from them."""
    results = tmp_path / "results"
    shutil.copytree(results_page.RESULTS, results)
    assert results_page.main(["--results", str(results), "--page", str(tmp_path / "RESULTS.md")]) == 0
    return results


def _edit(path: Path, change) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_a_changed_run_makes_the_page_stale_until_it_is_rebuilt(copy: Path, capsys):
    page = copy.parent / "RESULTS.md"
    args = ["--results", str(copy), "--page", str(page)]
    assert results_page.main([*args, "--check"]) == 0
    kept = sorted(copy.glob("*.json"))[0]
    _edit(kept, lambda d: d.update(date="2099-01-01 00:00 UTC"))
    assert results_page.main([*args, "--check"]) == 1
    assert "stale" in capsys.readouterr().err
    assert results_page.main(args) == 0
    assert "2099-01-01 00:00 UTC" in page.read_text(encoding="utf-8")
    assert results_page.main([*args, "--check"]) == 0


def test_a_paragraph_placeholder_missing_from_the_run_is_refused_naming_the_file(copy: Path, capsys):
    name = sorted(copy.glob("*.json"))[0].stem
    (copy / f"{name}.md").write_text("The figure is {no_such_figure[value]:.1%}.\n", encoding="utf-8")
    assert results_page.main(["--results", str(copy), "--page", str(copy.parent / "RESULTS.md")]) == 2
    err = capsys.readouterr().err
    assert f"{name}.md" in err and "no_such_figure" in err


def test_a_quick_run_a_stray_file_and_a_missing_paragraph_are_refused(copy: Path, capsys):
    args = ["--results", str(copy), "--page", str(copy.parent / "RESULTS.md")]
    kept = sorted(copy.glob("*.json"))[0]
    _edit(kept, lambda d: d.update(quick=True))
    assert results_page.main(args) == 2
    assert "--quick run" in capsys.readouterr().err
    _edit(kept, lambda d: d.update(quick=False))
    (copy / "no_such_suite.json").write_text("{}", encoding="utf-8")
    assert results_page.main(args) == 2
    assert "no_such_suite.json: not the kept run of any entry" in capsys.readouterr().err
    (copy / "no_such_suite.json").unlink()
    (copy / f"{kept.stem}.md").unlink()
    assert results_page.main(args) == 2
    assert f"{kept.stem}.md is missing" in capsys.readouterr().err


def test_a_run_lacking_a_field_of_its_table_names_the_function_to_update(copy: Path, capsys):
    kept = copy / "real_replay.json"
    _edit(kept, lambda d: d.pop("sources"))
    assert results_page.main(["--results", str(copy), "--page", str(copy.parent / "RESULTS.md")]) == 2
    err = capsys.readouterr().err
    assert "real_replay.json lacks a field that real_replay() in benchmarks/results_page.py reads" in err
