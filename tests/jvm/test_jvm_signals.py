"""A process holding pyguard's JVM ends on SIGTERM (and on a SIGINT Python leaves to its default) as a Python program
does: killed by the signal, no JVM crash log. JPype passes both signals on to Python from a Java thread, where
CPython crashed comparing Python's default handler (SIGSEGV, ``hs_err_pid*.log``). A program's own handler still runs.

Each case is a real subprocess: it starts the JVM, makes a guarded run, prints READY and idles; the test sends the
signal on READY (no sleeps) and waits for the process to end (the bound only stops a hung build)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import pyguard

pytestmark = pytest.mark.jvm

TARGET = """
import signal, sys, threading
{before}
from pyguard.live.guard import Guard
from pyguard.jvm import start_jvm

start_jvm()
result = Guard(callback_timeout_ms=0).run_scenario("convergent", "do the task", seed=1)
print("READY", result.outcome.value, flush=True)
idle = threading.Event()
while not idle.wait(0.05):  # in slices: a handler set by the program runs between them, on the main thread
    pass
"""


def _signal_on_ready(tmp_path: Path, sig: signal.Signals, before: str = "") -> tuple[int, str, list[str]]:
    code = textwrap.dedent(TARGET).format(before=before)
    here = str(Path(pyguard.__file__).resolve().parent.parent)  # the pyguard under test, from the folder it runs in
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        for line in proc.stdout:  # blocks until the target prints
            if line.startswith("READY"):
                proc.send_signal(sig)
                break
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err, sorted(p.name for p in tmp_path.glob("hs_err_pid*.log"))


@pytest.mark.parametrize(
    ("sig", "before"),
    [(signal.SIGTERM, ""), (signal.SIGINT, "signal.signal(signal.SIGINT, signal.SIG_DFL)")],
    ids=["sigterm", "sigint-default"],
)
def test_a_signal_python_leaves_to_its_default_ends_the_process_without_a_jvm_crash(tmp_path, sig, before):
    code, err, crash_logs = _signal_on_ready(tmp_path, sig, before)
    assert crash_logs == [], err[-2000:]
    assert code == -sig, (code, err[-2000:])  # ended by the signal itself, as a Python program without a JVM


def test_a_programs_own_sigterm_handler_still_runs(tmp_path):
    before = "signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(7))"
    code, err, crash_logs = _signal_on_ready(tmp_path, signal.SIGTERM, before)
    assert (code, crash_logs) == (7, []), err[-2000:]
