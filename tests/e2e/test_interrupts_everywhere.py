"""Issue 33.3: Ctrl-C lands and closes on every entry point: ``guard.attach`` (``chat()`` on the main thread, the
signal during a model call), ``guard.start_run`` and ``guard.run`` (the signal during a wrap-up call that never ends).
A real SIGINT to a subprocess, sent when it prints READY (no sleeps); the run ends with its footer (``cancelled``, or,
mid-wrap-up, the guard's stop that came first with the interrupt noted) and no run is left open."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pyguard.base.events import Outcome
from pyguard.loading import load_runs

TARGET = Path(__file__).with_name("interrupt_wrapup_target.py")
pytestmark = pytest.mark.jvm


def interrupt_on_ready(mode: str, trace_dir: Path) -> tuple[int, dict, str]:
    proc = subprocess.Popen(
        [sys.executable, str(TARGET), mode, str(trace_dir)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        for line in proc.stdout:  # blocks until the target prints; no timing assumption
            if line.strip() == "READY":
                proc.send_signal(signal.SIGINT)
                break
        out, err = proc.communicate(timeout=180)  # without the bound on a Ctrl-C, "run"/"start_run" never end
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    last = [line for line in out.splitlines() if line.startswith("{")]
    return proc.returncode, json.loads(last[-1]) if last else {}, err


@pytest.mark.parametrize("mode", ["attach", "start_run", "run"])
def test_ctrl_c_lands_cancels_the_run_and_leaves_none_open(tmp_path, mode):
    code, report, err = interrupt_on_ready(mode, tmp_path)
    assert code == 130 and report.get("interrupted") is True, (code, report, err[-2000:])
    assert report["active_runs"] == 0
    if mode == "attach":
        assert report["open_runs"] == [] and report["results"] == ["cancelled"], report
    [record] = load_runs(tmp_path)
    assert record.end is not None, "the trace must end with a footer"
    if mode == "attach":
        assert record.end.outcome is Outcome.CANCELLED, record.end
    else:  # interrupted mid-wrap-up: the guard's stop came first and stays the outcome; the interrupt is said
        assert record.end.outcome is Outcome.STALLED, record.end
        assert record.end.evidence["cancelled_after_stop"] == "interrupted (Ctrl-C)"
        assert record.end.evidence["wrap_up"]["status"] == "interrupted"
