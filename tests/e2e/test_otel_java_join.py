"""pyguard's spans join the Java application's trace, with a Guard whose callback has a deadline: the Java sensor reads
the span active on the agent's thread (in ``onRequest``), although the guard callback runs on ``pyguard-callback-N``.
In decisions-only mode, only the guard's interventions are emitted, under the application's span.

The JVM needs the OpenTelemetry API on its classpath, so the run is a subprocess with its own JVM (a JVM's classpath
is fixed at start); the jars are the ones Maven copies to ``java/target/otel-test-jars`` (``make setup``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk")

ROOT = Path(__file__).resolve().parents[2]
_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
"""The subprocess imports this checkout's pyguard (a script's own folder, not the working directory, is on its path)."""
JARS = sorted((ROOT / "java" / "target" / "otel-test-jars").glob("opentelemetry-*.jar"))
TARGET = Path(__file__).with_name("otel_join_target.py")


def _run_target(mode: str) -> dict:
    """otel_join_target.py ``mode`` in a process of its own (its JVM has the OpenTelemetry API): its JSON line."""
    proc = subprocess.run(
        [sys.executable, str(TARGET), mode, *map(str, JARS)],
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard only: a JVM starts in it, on a machine that may be loaded
        cwd=ROOT,
        env=_ENV,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(
    not JARS,
    reason="no OpenTelemetry API jars in java/target/otel-test-jars: run `make setup` (mvn package copies them)",
)
def test_the_run_joins_the_java_apps_trace_with_a_deadline_guard():
    out = _run_target("agent")
    assert out["outcome"] == "succeeded" and out["callback_timeout_ms"] > 0  # a deadline: the callback on a pool thread
    assert out["contexts"] and set(out["contexts"]) == {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
    assert out["parent"] == "00f067aa0ba902b7"
    assert out["traces"] == [
        "4bf92f3577b34da6a3ce929d0e0e4736"
    ]  # every span, the run's and its calls', in the app's trace
    assert out["ops"].count("chat") == len(out["contexts"]) and "execute_tool" in out["ops"]
    # decisions-only (the app emits its own GenAI spans): the guard's interventions alone, under the app's span
    assert out["decisions_outcome"] == "stalled"
    assert out["decisions_ops"] == ["run_guardrail", "run_guardrail"]
    assert out["decisions_types"] == ["warn", "deny"] and out["decisions_parents"] == ["00f067aa0ba902b7"]


@pytest.mark.skipif(not JARS, reason="no OpenTelemetry API jars in java/target/otel-test-jars: run `make setup`")
def test_a_java_span_current_on_the_callers_thread_is_the_runs_parent():
    # issue 32: guard.run / run_scenario called from the main thread run the agent on a thread pyguard starts, where
    # the caller's Java span is not current: the run got a new trace. The span is read on the caller's thread now.
    out = _run_target("caller")
    assert out["outcomes"] == ["succeeded", "succeeded", "succeeded"]
    assert out["sensor_contexts"] == ["None"]  # the agent's thread had no Java span: the sensor saw none
    assert out["parents"][:2] == ["10f067aa0ba902b8", "10f067aa0ba902b8"]
    assert out["traces"][:2] == ["5bf92f3577b34da6a3ce929d0e0e4737"] * 2
    assert out["parents"][2] is None and out["traces"][2] != out["traces"][0]  # no span current: a trace of its own
