"""Ctrl-C: a real subprocess gets SIGINT mid-run (on the READY line it prints, no sleeps) and must cancel the run,
close its trace with a footer, say so, and exit 130."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pyguard.base.events import Outcome
from pyguard.loading import load_runs

TARGET = Path(__file__).with_name("interrupt_target.py")
pytestmark = pytest.mark.jvm


def _interrupt_on_ready(args: list[str], timeout: float = 600) -> tuple[int, str, str]:
    proc = subprocess.Popen(
        [sys.executable, str(TARGET), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        lines = []
        for line in proc.stdout:  # blocks until the target prints; no timing assumption
            lines.append(line)
            if line.strip() == "READY":
                proc.send_signal(signal.SIGINT)
                break
        out, err = proc.communicate(timeout=timeout)  # a hang guard: the run ends once the Ctrl-C lands
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, "".join(lines) + out, err


def test_ctrl_c_during_guard_run_cancels_the_run_and_closes_its_trace(tmp_path):
    code, out, err = _interrupt_on_ready(["guard", str(tmp_path)])
    assert code == 130, (out, err)
    assert "INTERRUPTED" in out, (out, err)
    [record] = load_runs(tmp_path)
    assert record.run_id == "interrupted-run"
    assert record.end is not None, "the trace must end with a footer"
    assert record.end.outcome is Outcome.CANCELLED
    assert "Ctrl-C" in record.end.reason or "cancel" in record.end.reason


def test_ctrl_c_in_the_cli_exits_130_with_a_message(tmp_path):
    code, out, err = _interrupt_on_ready(["demo", str(tmp_path), "--trace-dir", str(tmp_path)])
    assert code == 130, (out, err)
    assert "interrupted (Ctrl-C)" in err, err
    assert "Traceback" not in err and "Aborted!" not in err, err
    records = load_runs(tmp_path)
    assert records and all(r.end is not None for r in records)
    assert Outcome.CANCELLED in {r.end.outcome for r in records}


TASKS = """
repeats = 3
cap = 40

[[tasks]]
id = "incident"
task_type = "shipment_status"
task = "Where is order 12345? Tell me its shipment status."
scenario = "logistics_incident"
expect = "in transit"
"""


def test_ctrl_c_in_live_calibration_keeps_the_runs_in_flight_and_says_how_to_resume(tmp_path):
    tasks = tmp_path / "tasks.toml"
    tasks.write_text(TASKS)
    out = tmp_path / "calib"
    code, stdout, err = _interrupt_on_ready(
        ["calibrate", str(tmp_path), str(tasks), "--failure-cost", "20000", "--out", str(out), "--threads", "1"]
    )
    assert code == 130, (stdout, err)
    assert "interrupted" in err and "run the same command again to resume" in err, err
    assert "Traceback" not in err and "Fatal" not in err and "JVMNotRunning" not in err, err
    runs = load_runs(out / "traces")
    assert [r.run_id for r in runs] == ["incident#1"]  # the run in flight finished and was written; no other began
    assert runs[0].end is not None
