"""`pyguard report`: the page's data against the traces it was made from (read here as plain JSON lines, not through
pyguard's loader), content capture, self-containment, and a recording replayed through the policy."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from pyguard.cli import main
from pyguard.report import DATA_ID

pytest.importorskip("matplotlib")

DATA = Path(__file__).resolve().parents[2] / "data"
DEMO = DATA / "report"
MIXED = DATA / "mixed_runs.jsonl"
CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


def _trace_lines(folder: Path) -> list[dict]:
    return [json.loads(line) for f in sorted(folder.glob("*.jsonl")) for line in f.read_text().splitlines() if line]


def _report(tmp_path: Path, runs: Path, *args: str, env: dict | None = None) -> str:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", str(runs), "-o", str(out), *args], env=env or {CAPTURE_ENV: ""})
    assert result.exit_code == 0, result.output
    assert f"report written to {out}" in result.output
    return out.read_text(encoding="utf-8")


def page_data(html: str) -> dict:
    """The JSON the page embeds."""
    found = re.search(rf'<script type="application/json" id="{DATA_ID}">(.*?)</script>', html, re.S)
    assert found, "the page embeds its data"
    return json.loads(found.group(1).replace("<\\/", "</"))


def test_each_call_and_each_guard_decision_is_the_traces(tmp_path: Path) -> None:
    lines = _trace_lines(DEMO)
    data = page_data(_report(tmp_path, DEMO))
    runs = {r["run_id"]: r for r in data["runs"]}
    assert set(runs) == {d["run_id"] for d in lines if d["type"] == "run_start"}
    for run_id, run in runs.items():
        events = [d for d in lines if d["type"] == "iteration" and d["run_id"] == run_id]
        decisions = {d["iteration"]: d for d in lines if d["type"] == "decision" and d["run_id"] == run_id}
        end = next(d for d in lines if d["type"] == "run_end" and d["run_id"] == run_id)
        assert run["source"] == "recorded" and run["outcome"] == end["outcome"]
        assert [c["tokens"] for c in run["calls"]] == [e["total_tokens"] for e in events]
        assert [c["tools"] for c in run["calls"]] == [[t["name"] for t in e["tool_calls"]] for e in events]
        assert [c["budget"] for c in run["calls"]] == [decisions[e["index"]]["budget"] for e in events]
        assert [c["action"] for c in run["calls"]] == [decisions[e["index"]]["action"] for e in events]
        assert [c["gain"] for c in run["calls"]] == pytest.approx(end["evidence"]["gains"])  # the engine's series
        acted = [(d["iteration"], d["action"], d["rule"]) for d in decisions.values() if d["action"] != "continue"]
        assert [(m["iteration"], m["action"], m["rule"]) for m in run["marks"]] == acted
        assert run["tokens"] == sum(e["total_tokens"] for e in events)  # the calls', the wrap-up apart
        assert run["wrap_up_tokens"] == end.get("wrap_up_tokens")
        policy = next(d for d in lines if d["type"] == "run_start" and d["run_id"] == run_id)["policy"]
        assert run["thresholds"] == {
            "earn_threshold": policy["earn_threshold"],
            "low_gain_threshold": policy["stall"]["low_gain_threshold"],
        }
    stalled = next(r for r in runs.values() if r["outcome"] == "stalled")
    assert [m["action"] for m in stalled["marks"]] == ["reflect", "stop"] and stalled["wrap_up_tokens"] == 890


def test_without_content_capture_no_user_model_or_tool_text_is_on_the_page(tmp_path: Path) -> None:
    html = _report(tmp_path, DEMO)
    for text in ("Where is order 12345", "Memphis", "I already have the status", "orderId", "Guard notice"):
        assert text not in html, text
    assert "content capture off" in html
    with_content = _report(tmp_path, DEMO, env={CAPTURE_ENV: "SPAN_ONLY"})
    for text in ("Where is order 12345", "Memphis", "orderId", "Guard notice"):
        assert text in with_content, text
    assert "Memphis" not in _report(tmp_path, DEMO, "--no-content", env={CAPTURE_ENV: "true"})


def test_the_page_is_one_file_that_fetches_nothing(tmp_path: Path) -> None:
    html = _report(tmp_path, DEMO)
    assert html.count("<svg") == 3  # the outcome mix and two timelines, inline
    # only references inside the page: SVG's clip paths and markers (url(#id), xlink:href="#id")
    assert not re.search(r"""(src|href)\s*=\s*["'](?!#)|url\((?!#)|@import|<link|<img|<iframe""", html, re.I)
    assert "default-src 'none'" in html
    assert "<script" not in html.replace(f'<script type="application/json" id="{DATA_ID}">', "")


def test_a_recording_is_replayed_and_the_outcome_mix_counts_every_run(tmp_path: Path) -> None:
    raw = [json.loads(line) for line in MIXED.read_text().splitlines() if line]
    data = page_data(_report(tmp_path, MIXED, "--max-runs", "5"))
    assert data["runs_total"] == len(raw) and len(data["runs"]) == 5
    per_type = Counter(r["task_type"] for r in raw)
    assert {t: sum(c.values()) for t, c in data["outcome_mix"].items()} == dict(per_type)
    first = data["runs"][0]
    assert first["source"] == "replayed" and first["run_id"] == raw[0]["id"]
    assistant = [m for m in raw[0]["messages"] if m["role"] == "assistant"]
    assert [c["tokens"] for c in first["calls"]] == [m.get("usage", {}).get("total_tokens") for m in assistant]
    assert all(c["gain"] is not None and c["budget"] is not None for c in first["calls"][: first["replay_stop_at"]])


def test_check_and_calibrate_figures_when_asked(tmp_path: Path) -> None:
    html = _report(tmp_path, MIXED, "--max-runs", "0", "--check", "--failure-cost", "5000")
    data = page_data(html)
    assert data["check"]["runs"] == data["runs_total"] == 84
    assert set(data["check"]["groups"]) >= set(data["outcome_mix"])
    types = {t["task_type"] for t in data["calibrate"]["task_types"]} | {
        s["task_type"] for s in data["calibrate"]["skipped"]
    }
    assert types == set(data["outcome_mix"])
    assert 'id="check"' in html and 'id="calibrate"' in html


def test_bad_options_say_what_to_do(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["report", str(DEMO), "-o", str(tmp_path / "r.html"), "--price-per-1k-tokens", "1"]
    )
    assert result.exit_code == 2 and "--failure-cost" in result.output
    missing = CliRunner().invoke(main, ["report", str(tmp_path / "nope"), "-o", str(tmp_path / "r.html")])
    assert missing.exit_code == 2 and "does not exist" in missing.output


def test_runs_from_standard_input_keep_their_recorded_decisions(tmp_path: Path) -> None:
    trace = DEMO / "c05498a0fdd6.jsonl"
    out = tmp_path / "stdin.html"
    result = CliRunner().invoke(main, ["report", "-", "-o", str(out)], input=trace.read_text(), env={CAPTURE_ENV: ""})
    assert result.exit_code == 0, result.output
    (run,) = page_data(out.read_text())["runs"]
    assert run["source"] == "recorded" and [m["rule"] for m in run["marks"]] == ["repeat_no_gain", "fruitless_retry"]
