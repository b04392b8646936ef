"""run_interruptibly: a Ctrl-C lands whichever thread the kernel gave the signal to, at any moment of the run.

``_thread.interrupt_main()`` sets Python's interrupt flag from the calling thread without waking the main thread: what
the JVM's signal handler does (through JPype) when the kernel hands SIGINT to a JVM thread, and what Python's own
handler does when it runs on a thread other than the main one. The agent stand-in waits for the cancellation it
expects, so each test synchronises on the code's own calls (on_interrupt, on_give_up) and on the agent's end, not on
time; the 60 s bound only keeps a broken build from hanging the suite."""

from __future__ import annotations

import _thread
import threading

import pytest

from pyguard.live.interrupts import run_interruptibly

NEVER = 60.0  # a failure bound, not a wait: every test returns as soon as the code under test acts


def _run(fn):
    calls: list[str] = []
    cancelled = threading.Event()

    def on_interrupt() -> None:
        calls.append("interrupt")
        cancelled.set()

    with pytest.raises(KeyboardInterrupt):
        run_interruptibly(
            fn(cancelled), name="t", on_interrupt=on_interrupt, on_give_up=lambda: calls.append("give up")
        )
    return calls


def test_an_interrupt_flagged_from_another_thread_cancels_the_run_while_it_goes_on():
    seen, ended = [], threading.Event()

    def agent(cancelled):
        def run():
            _thread.interrupt_main()  # the flag only: the main thread's wait is not woken by it
            seen.append(cancelled.wait(NEVER))  # the run goes on until cancelled
            ended.set()
            return "answer"

        return run

    assert _run(agent) == ["interrupt", "give up"]
    # the Ctrl-C's bound (GIVE_UP_S) may end the wait for the agent before its thread ran again (a loaded machine)
    assert ended.wait(NEVER)
    assert seen == [True], "the run must be cancelled while it is running, not after it ended on its own"


def test_an_interrupt_at_the_first_instant_of_the_run_is_inside_the_guarded_section():
    seen, ended = [], threading.Event()

    def agent(cancelled):
        def run():
            seen.append(threading.current_thread().name)
            _thread.interrupt_main()
            cancelled.wait(NEVER)
            seen.append(cancelled.is_set())
            ended.set()

        return run

    assert _run(agent) == ["interrupt", "give up"]
    assert ended.wait(NEVER)  # as above: the agent's thread may not have run again yet
    assert seen == ["t", True]


def test_off_the_main_thread_fn_simply_runs():
    out = []
    t = threading.Thread(
        target=lambda: out.append(
            run_interruptibly(lambda: 7, name="x", on_interrupt=lambda: None, on_give_up=lambda: None)
        )
    )
    t.start()
    t.join()
    assert out == [7]


def test_an_error_of_fn_reaches_the_caller():
    def boom():
        raise ValueError("bad agent")

    with pytest.raises(ValueError, match="bad agent"):
        run_interruptibly(boom, name="t", on_interrupt=lambda: None, on_give_up=lambda: None)
