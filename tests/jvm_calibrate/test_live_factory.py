"""``pyguard calibrate --live`` on a user's own agent: the example project's LogisticsAgentFactory (compiled here with
javac against pyguard's jars) served by the local OpenAI-compatible server; bad factory names give clear errors.

Each case runs the CLI in a subprocess: the user's classes must be on the classpath the JVM starts with."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pyguard.jvm import bridge_jars
from pyguard.loading import load_runs

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "logistics-agent"
FACTORY = "com.example.logistics.LogisticsAgentFactory"


@pytest.fixture(scope="module")
def classes(tmp_path_factory) -> Path:
    """The example agent's classes, compiled with javac (no Maven): the user's build output."""
    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("javac is not on PATH")
    out = tmp_path_factory.mktemp("agent") / "classes"
    sources = sorted(str(p) for p in (EXAMPLE / "src" / "main" / "java").rglob("*.java"))
    cp = ":".join(str(j) for j in bridge_jars())
    done = subprocess.run(
        [javac, "-parameters", "-d", str(out), "-cp", cp, *sources], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return out


def _tasks(tmp_path: Path, classes: Path, **factory) -> Path:
    spec = {"class": FACTORY, **factory}
    data = {
        "repeats": 2,
        "cap": 12,
        "classpath": [str(classes)],
        "tasks": [
            {
                "id": "reroute",
                "task_type": "delayed_order",
                "task": "Order 12345 is late. Why, and what can we do about it?",
                "factory": spec,
                "scenario": str(EXAMPLE / "tests" / "scenarios" / "reroute.json"),
                "expect": "BlueLine",
            },
            {
                "id": "status-loop",
                "task_type": "delayed_order",
                "task": "Where is order 12345?",
                "factory": spec,
                "scenario": str(EXAMPLE / "tests" / "scenarios" / "status_loop.json"),
            },
        ],
    }
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(data))
    return path


def _calibrate(tasks: Path, traces: Path) -> subprocess.CompletedProcess:
    args = ["calibrate", "--live", str(tasks), "--traces", str(traces), "--failure-cost", "5000", "--json"]
    code = "from pyguard.cli import main; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)


def test_calibrate_live_runs_the_users_own_agent(tmp_path, classes):
    done = _calibrate(_tasks(tmp_path, classes), tmp_path / "traces")
    assert done.returncode == 0, done.stderr
    records = {r.run_id: r for r in load_runs(tmp_path / "traces")}
    assert sorted(records) == ["reroute#1", "reroute#2", "status-loop#1", "status-loop#2"]
    reroute, loop = records["reroute#1"], records["status-loop#1"]
    # The user's agent ran: its factory built it, its real @Tool methods answered the scripted calls over HTTP.
    assert reroute.start.agent_style == f"factory:{FACTORY}.create"
    assert reroute.end.outcome == "succeeded" and "BlueLine" in reroute.end.answer
    assert len(reroute.events) == 4 and reroute.end.total_tokens > 0
    assert "NorthFreight" in reroute.events[1].observations[0].text  # LogisticsTools.getShipmentStatus's own data
    assert reroute.end.evidence["calibration"]["factory"] == f"{FACTORY}.create:chat"
    # The looping task reaches the calibration cap: censored, not failed.
    assert loop.end.outcome == "expired" and loop.end.censored and len(loop.events) == 12
    assert json.loads(done.stdout)["live"]["complete"] is True


@pytest.mark.parametrize(
    ("factory", "expected"),
    [
        (
            {"class": "com.example.logistics.NoSuchFactory"},
            "factory class 'com.example.logistics.NoSuchFactory' is not on the classpath",
        ),
        ({"method": "build"}, "factory method com.example.logistics.LogisticsAgentFactory.build does not exist"),
        ({"method": "openAiModel"}, "openAiModel has the wrong signature"),
        ({"call": "ask"}, "has no public method ask(String)"),
    ],
)
def test_a_bad_factory_is_refused_before_any_run_with_what_to_do(tmp_path, classes, factory, expected):
    done = _calibrate(_tasks(tmp_path, classes, **factory), tmp_path / "traces")
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr and "task 'reroute'" in done.stderr
    assert not (tmp_path / "traces").exists() or not any((tmp_path / "traces").iterdir())
