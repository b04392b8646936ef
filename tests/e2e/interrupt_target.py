"""A guarded run to interrupt (run as a subprocess by test_interrupts.py; not a test module itself).

Usage: python interrupt_target.py MODE TRACE_DIR
MODE "guard": a user program calling guard.run; "demo": ``pyguard demo``. The engine's decision about model call 2
prints READY and waits until the run is cancelled, so the SIGINT the test sends on READY lands mid-run. Nothing here
depends on time: the guard has no callback deadline (``callback_timeout_ms=0``), so the run waits for the Ctrl-C however
long the signal takes to be seen (on a loaded machine too)."""

from __future__ import annotations

import sys
import threading

from pyguard.live.guard import Guard, GuardedRun

cancelled = threading.Event()
_cancel = GuardedRun.cancel


def _cancel_and_note(self, reason="cancelled from Python"):  # noqa: ANN001
    _cancel(self, reason)
    cancelled.set()


GuardedRun.cancel = _cancel_and_note


class _WaitAtTwo:
    def __init__(self, inner) -> None:  # noqa: ANN001
        self.inner = inner

    def observe(self, event):  # noqa: ANN001, ANN201
        if event.index == 2:
            print("READY", flush=True)
            cancelled.wait()
        return self.inner.observe(event)

    def __getattr__(self, name):  # noqa: ANN001, ANN204
        return getattr(self.inner, name)


_init = Guard.__init__


def _patched_init(self, *args, **kwargs):  # noqa: ANN001
    _init(self, *args, **kwargs)
    self.callback_timeout_ms = 0  # no deadline: the wait for Ctrl-C below must not race a clock
    real = self.policy.new_run
    self.policy.new_run = lambda run_id, task_type=None: _WaitAtTwo(real(run_id, task_type))


Guard.__init__ = _patched_init

mode, trace_dir = sys.argv[1], sys.argv[2]
if mode == "guard":
    from pyguard.jvm import scripted_model, start_jvm

    start_jvm()
    guard = Guard(trace_dir=trace_dir)
    try:
        result = guard.run(
            "aiservices",
            scripted_model("logistics_incident", seed=1),
            "Where is order 12345?",
            run_id="interrupted-run",
        )
    except KeyboardInterrupt:
        print("INTERRUPTED", flush=True)
        sys.exit(130)
    print(f"NOT INTERRUPTED {result.outcome.value}", flush=True)
    sys.exit(3)
elif mode == "calibrate":
    # ``pyguard calibrate --live``: the first run prints READY and waits for Ctrl-C, then carries on (a run in flight
    # finishes and is written); the runs not started are not run.
    import signal

    import pyguard.live.calibration as live
    from pyguard.cli import main
    from pyguard.jvm import start_jvm

    start_jvm()  # first: the handler below must be the one in place when the signal comes
    interrupted = threading.Event()

    def on_sigint(signum, frame):  # noqa: ANN001
        interrupted.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)
    real = live.jvm_runner
    first = threading.Lock()

    def runner(run):  # noqa: ANN001
        if first.acquire(blocking=False):
            print("READY", flush=True)
            interrupted.wait()
        return real(run)

    live.jvm_runner = runner
    main(["calibrate", "--live", *sys.argv[3:]])
else:
    from pyguard.cli import main

    main(["demo", *sys.argv[3:]])
