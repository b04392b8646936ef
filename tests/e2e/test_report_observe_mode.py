"""`pyguard report` of a run its guard only observed (``mode = "observe"``): the page says what the guard would have
done, not that it reflected or stopped, since the run went on to its own end; in reflect mode the reflections were
sent and the stop was not made. Traces written by a real AiServices run (the scripted logistics incident)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from pyguard.cli import main
from pyguard.jvm import load_scenario, scripted_model
from pyguard.live.guard import Guard

pytest.importorskip("matplotlib")


def _stubborn_run(mode: str, traces: Path):
    scenario = dict(load_scenario("logistics_incident"))
    scenario["on_reflection"] = {**scenario["on_reflection"], "recover_probability": 0.0}
    guard = Guard(mode=mode, trace_dir=traces)
    return guard.run(
        "aiservices", scripted_model(scenario, seed=3), "Where is order 12345?", max_tool_calling_round_trips=12
    )


def _marks(tmp_path: Path, traces: Path) -> list[str]:
    out = tmp_path / "report.html"
    done = CliRunner().invoke(main, ["report", str(traces), "-o", str(out)])
    assert done.exit_code == 0, done.output
    return [
        re.sub(r"<[^>]+>", "", m) for m in re.findall(r'<div class="mark [^"]*"[^>]*><b>(.*?)</b>', out.read_text())
    ]


@pytest.mark.jvm
def test_an_observed_run_reads_as_what_the_guard_would_have_done(jvm, tmp_path):
    result = _stubborn_run("observe", tmp_path / "traces")
    stop = result.record.end.evidence["observed_stop"]["iteration"]
    assert result.iterations > stop  # the run went on past the stop the guard decided
    marks = _marks(tmp_path, tmp_path / "traces")
    assert marks and all("would have" in m and "observe mode" in m for m in marks), marks
    assert not any(re.search(r": (reflected|stopped)\b", m) for m in marks), marks


@pytest.mark.jvm
def test_a_reflect_mode_run_reflected_but_did_not_stop(jvm, tmp_path):
    _stubborn_run("reflect", tmp_path / "traces")
    marks = _marks(tmp_path, tmp_path / "traces")
    assert any(": reflected" in m for m in marks), marks
    stops = [m for m in marks if "stop" in m]
    assert stops and all("would have stopped" in m and "reflect mode" in m for m in stops), marks


@pytest.mark.jvm
def test_an_enforced_run_still_reads_as_stopped(jvm, tmp_path):
    _stubborn_run("enforce", tmp_path / "traces")
    marks = _marks(tmp_path, tmp_path / "traces")
    assert any(": stopped (stalled)" in m for m in marks) and not any("would have" in m for m in marks), marks


@pytest.mark.jvm
def test_an_observed_runs_summary_says_nothing_was_sent_or_stopped(jvm, tmp_path):
    result = _stubborn_run("observe", tmp_path / "traces")
    assert result.mode == "observe"
    text = result.summary()
    assert "reflections the guard would have sent (observe mode) after iterations: [2]" in text, text
    stop = result.record.end.evidence["observed_stop"]
    assert f"would have stopped after call {stop['iteration']} (stalled, rule {stop['rule']})" in text, text
    enforced = _stubborn_run("enforce", tmp_path / "enforced")
    assert enforced.mode == "enforce" and "  reflections after iterations: [2]" in enforced.summary()
    assert "would have" not in enforced.summary()


@pytest.mark.jvm
@pytest.mark.parametrize(("mode", "reflect", "stop"), [("observe", "allow", "allow"), ("reflect", "modify", "modify")])
def test_guardrail_spans_say_what_was_enforced_in_each_mode(jvm, mode, reflect, stop):
    """``gen_ai.guardrail.action.type`` is what the caller enforced: in observe mode nothing (``allow``), in reflect
    mode a reflection, also where a stop was decided (``modify``); the verdict stays the guard's (warn, deny)."""
    pytest.importorskip("opentelemetry.sdk")
    from pyguard.otel import GuardTelemetry
    from pyguard.otel import semconv as sc

    telemetry, exporter = GuardTelemetry.in_memory()
    scenario = dict(load_scenario("logistics_incident"))
    scenario["on_reflection"] = {**scenario["on_reflection"], "recover_probability": 0.0}
    guard = Guard(mode=mode, telemetry=telemetry)
    guard.run("aiservices", scripted_model(scenario, seed=3), "Where is order 12345?", max_tool_calling_round_trips=12)
    spans = [s.attributes for s in exporter.get_finished_spans()]
    rails = [a for a in spans if a.get(sc.OPERATION_NAME) == sc.OP_RUN_GUARDRAIL]
    telemetry.shutdown()
    seen = {(a[sc.GUARDRAIL_VERDICT_TYPE], a[sc.GUARDRAIL_ACTION_TYPE]) for a in rails}
    assert seen == {("warn", reflect), ("deny", stop)}, seen
