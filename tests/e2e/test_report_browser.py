"""`pyguard report` as a person sees it: the page rendered by headless Chromium (Debian's ``chromium``), its screenshot
not blank and showing the plots' marks, and the rendered page's own data (the DOM the browser built) checked against
the trace: each call's tokens, gain, budget and decision, each reflection and stop with its rule."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from pyguard.cli import main

pytest.importorskip("matplotlib")

MIXED = Path(__file__).resolve().parents[1] / "data" / "mixed_runs.jsonl"
BROWSER = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
needs_browser = pytest.mark.skipif(
    BROWSER is None,
    reason="no headless Chromium on PATH (Debian: apt-get install chromium; .ci/run installs it where it can): the"
    " report's screenshot test needs a browser",
)

STOP, REFLECT, GAIN = (0xC6, 0x28, 0x28), (0xEF, 0x6C, 0x00), (0x15, 0x65, 0xC0)  # pyguard.report.plots' colours


def _chromium(tmp_path: Path, page: Path, *args: str) -> subprocess.CompletedProcess:
    assert BROWSER is not None
    cmd = [
        BROWSER,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
        *args,
        page.resolve().as_uri(),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def screenshot(tmp_path: Path, page: Path, height: int = 1400) -> np.ndarray:
    """The page as Chromium draws it, as an RGB array (0-255)."""
    from matplotlib.image import imread

    png = tmp_path / f"{page.stem}.png"
    _chromium(tmp_path, page, f"--window-size=1100,{height}", f"--screenshot={png}")
    return (imread(png)[:, :, :3] * 255).round().astype(int)


def dom(tmp_path: Path, page: Path) -> str:
    """The DOM Chromium built from the page."""
    return _chromium(tmp_path, page, "--dump-dom").stdout


def _has(pixels: np.ndarray, colour: tuple[int, int, int]) -> int:
    return int((np.abs(pixels - np.array(colour)).sum(axis=2) <= 24).sum())


def _report(tmp_path: Path, runs: Path, *args: str) -> Path:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", str(runs), "-o", str(out), *args])
    assert result.exit_code == 0, result.output
    return out


def _attrs(tag: str) -> dict[str, str]:
    return dict(re.findall(r'data-([a-z-]+)="([^"]*)"', tag))


@needs_browser
def test_the_demo_report_in_chromium_shows_the_guard_acting_as_the_trace_says(jvm, tmp_path: Path) -> None:
    from pyguard.cli.demo import run_demo

    out = run_demo(trace_dir=str(tmp_path / "traces"))
    page = _report(tmp_path, tmp_path / "traces")
    pixels = screenshot(tmp_path, page, height=1900)
    assert (pixels.min(axis=2) < 235).mean() > 0.03, "the screenshot is (nearly) blank"
    assert _has(pixels, GAIN) > 50 and _has(pixels, REFLECT) > 50 and _has(pixels, STOP) > 50
    rendered = dom(tmp_path, page)
    for side in ("guarded", "guarded_reflection_ignored"):
        trace = Path(out[side]["trace"])
        lines = [json.loads(line) for line in trace.read_text().splitlines()]
        run_id = lines[0]["run_id"]
        section = re.search(rf'<section class="run" id="run-{run_id}".*?</section>', rendered, re.S)
        assert section, f"run {run_id} is on the page"
        rows = [_attrs(t) for t in re.findall(r"<tr data-call=[^>]*>", section.group(0))]
        events = [d for d in lines if d["type"] == "iteration"]
        decisions = {d["iteration"]: d for d in lines if d["type"] == "decision"}
        end = next(d for d in lines if d["type"] == "run_end")
        assert [int(r["tokens"]) for r in rows] == [e["total_tokens"] for e in events]
        assert [int(r["budget"]) for r in rows] == [decisions[e["index"]]["budget"] for e in events]
        assert [r["action"] for r in rows] == [decisions[e["index"]]["action"] for e in events]
        assert [float(r["gain"]) for r in rows] == pytest.approx(end["evidence"]["gains"])
        marks = [_attrs(t) for t in re.findall(r'<div class="mark [a-z]+"[^>]*>', section.group(0))]
        acted = [(str(d["iteration"]), d["action"], d["rule"]) for d in decisions.values() if d["action"] != "continue"]
        assert [(m["iteration"], m["action"], m["rule"]) for m in marks] == acted
        assert out[side]["reflections_after"] == [int(m["iteration"]) for m in marks if m["action"] == "reflect"]
    assert "Memphis" not in rendered  # content capture off by default: no tool output on the page


@needs_browser
def test_a_mixed_set_of_recordings_in_chromium(tmp_path: Path) -> None:
    raw = [json.loads(line) for line in MIXED.read_text().splitlines() if line]
    page = _report(tmp_path, MIXED, "--max-runs", "3", "--check")
    pixels = screenshot(tmp_path, page)
    assert (pixels.min(axis=2) < 235).mean() > 0.03, "the screenshot is (nearly) blank"
    rendered = dom(tmp_path, page)
    table = re.search(r'<table class="mix">(.*?)</table>', rendered, re.S)
    assert table
    rows = re.findall(r"<tr><td>([^<]+)</td><td>([\d,]+)</td>", table.group(1))
    assert {name: int(n.replace(",", "")) for name, n in rows} == dict(Counter(r["task_type"] for r in raw))
    assert len(re.findall(r'<section class="run"', rendered)) == 3
