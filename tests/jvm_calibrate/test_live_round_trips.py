"""``pyguard calibrate --live`` and the agent's own ``maxToolCallingRoundTrips`` (issue 37, point 6): a user's
AiServices agent whose own cap (5 round trips: 6 model calls) is below the calibration's cap (12) is named in a
warning; with ``factory.round_trips_property`` the JVM starts with the cap set and the runs reach the calibration cap.

The factory is compiled here with javac beside the example project's agent; the CLI runs in a subprocess (the user's
classes and the system property must be there when the JVM starts)."""

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
FACTORY = """
package calib;

import com.example.logistics.LogisticsAgent;
import com.example.logistics.LogisticsTools;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.service.AiServices;

public final class PropertyFactory {
    private PropertyFactory() {}

    public static LogisticsAgent create(ChatModel model) {
        return AiServices.builder(LogisticsAgent.class).chatModel(model).tools(new LogisticsTools())
                .maxToolCallingRoundTrips(Integer.getInteger("calib.roundTrips", 5)).build();
    }
}
"""


@pytest.fixture(scope="module")
def classes(tmp_path_factory) -> Path:
    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("javac is not on PATH")
    root = tmp_path_factory.mktemp("agent")
    src = root / "src" / "calib" / "PropertyFactory.java"
    src.parent.mkdir(parents=True)
    src.write_text(FACTORY)
    out = root / "classes"
    sources = [*sorted(str(p) for p in (EXAMPLE / "src" / "main" / "java").rglob("*.java")), str(src)]
    cp = ":".join(str(j) for j in bridge_jars())
    done = subprocess.run(
        [javac, "-parameters", "-d", str(out), "-cp", cp, *sources], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return out


def _run(tmp_path: Path, classes: Path, name: str, **factory: str) -> tuple[subprocess.CompletedProcess, Path]:
    tasks = tmp_path / f"{name}.json"
    tasks.write_text(
        json.dumps(
            {
                "repeats": 2,
                "cap": 12,
                "classpath": [str(classes)],
                "tasks": [
                    {
                        "id": "status-loop",
                        "task_type": "delayed_order",
                        "task": "Where is order 12345?",
                        "factory": {"class": "calib.PropertyFactory", **factory},
                        "scenario": str(EXAMPLE / "tests" / "scenarios" / "status_loop.json"),
                    }
                ],
            }
        )
    )
    traces = tmp_path / f"{name}-traces"
    args = ["calibrate", "--live", str(tasks), "--traces", str(traces), "--failure-cost", "5000", "--json"]
    code = "from pyguard.cli import main; main()"
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)
    return done, traces


@pytest.mark.jvm
def test_the_agents_own_cap_is_named_then_raised_by_its_property(tmp_path: Path, classes: Path) -> None:
    done, traces = _run(tmp_path, classes, "own")
    assert done.returncode == 0, done.stderr
    assert all(len(r.events) == 6 for r in load_runs(traces))  # LangChain4j: 5 round trips, 6 model calls
    data = json.loads(done.stdout)
    assert data["live"]["agent_caps"] == [{"task_type": "delayed_order", "round_trips": 5, "model_calls": 6, "runs": 2}]
    warning = next(w for w in data["warnings"] if "maxToolCallingRoundTrips(5)" in w)
    assert "at 6 model calls, below the calibration's cap of 12 model calls" in warning
    assert "round_trips_property" in warning
    assert "calibrating: 2/2 runs" in done.stderr  # progress lines: stderr is a pipe here

    raised, traces = _run(tmp_path, classes, "raised", round_trips_property="calib.roundTrips")
    assert raised.returncode == 0, raised.stderr
    runs = load_runs(traces)
    assert all(len(r.events) == 12 and r.end.outcome == "expired" for r in runs)  # the calibration's cap now
    assert "agent_caps" not in json.loads(raised.stdout)["live"]
    assert runs[0].end.evidence["calibration"]["factory"].endswith(" -Dcalib.roundTrips")
