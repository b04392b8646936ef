"""pyguard's spans join the Java application's trace, with the default Guard: the Java sensor reads the span
active on the agent's thread (in ``onRequest``), although the guard callback runs on ``pyguard-callback-N``. In
decisions-only mode, only the guard's interventions are emitted, under the application's span.

The JVM needs the OpenTelemetry API on its classpath, so the run is a subprocess with its own JVM (a JVM's classpath
is fixed at start); the jars are the ones Maven copies to ``java/target/otel-test-jars`` (``make setup``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk")

ROOT = Path(__file__).resolve().parents[2]
JARS = sorted((ROOT / "java" / "target" / "otel-test-jars").glob("opentelemetry-*.jar"))


@pytest.mark.skipif(
    not JARS,
    reason="no OpenTelemetry API jars in java/target/otel-test-jars: run `make setup` (mvn package copies them)",
)
def test_the_run_joins_the_java_apps_trace_with_the_default_guard():
    target = Path(__file__).with_name("otel_join_target.py")
    proc = subprocess.run(
        [sys.executable, str(target), *map(str, JARS)], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["outcome"] == "succeeded" and out["callback_timeout_ms"] > 0  # the default: a pool thread
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
