"""Ctrl-C for guarded runs: run an agent so that an interrupt cancels the run instead of killing it half-written.

How a Ctrl-C reaches Python while a JVM runs in the process: the kernel hands a process-directed SIGINT to any thread
that does not block it (the JVM's threads included), and runs the process's one handler there. With JPype's
``interrupt=False`` (:func:`pyguard.jvm.start_jvm`) that handler is the JVM's, which JPype routes (``sun.misc.Signal``)
to a Java thread that sets Python's interrupt flag (``PyErr_SetInterruptEx``); with Python's own handler (a program
that called ``signal.signal``) the flag is set on whichever thread the kernel picked. Either way only the flag is set:
Python runs the handler (``KeyboardInterrupt``) on the main thread between bytecodes, and a main thread blocked in a
wait is woken only when the signal itself landed on the main thread. So the main thread never blocks for long: it waits
in slices of :data:`POLL_S` and sees the flag within one slice, whichever thread got the signal.

A call into Java cannot be interrupted from Python, so on the main thread the agent runs on a helper thread while the
main thread waits. The helper thread starts the agent only once the main thread is inside the guarded section: a
Ctrl-C at any moment of the agent's run cancels it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from pyguard.jvm._java import detach_thread

__all__: list[str] = []

POLL_S = 0.05
"""How long the waiting main thread may go without looking at Python's interrupt flag, in seconds: the most a Ctrl-C
waits to be seen once its flag is set. Not a timeout: the wait goes on until the run ends or is interrupted."""


GIVE_UP_S = 1.0
"""How long a Ctrl-C waits for the cancelled agent to stop before the run is ended ``cancelled`` without it (its
footer written) and ``KeyboardInterrupt`` goes on: the bound on a Ctrl-C landing, even when the agent is inside a
model call that takes long (a slow provider, the wrap-up). The agent's thread is left to finish on its own; nothing
it does later is recorded."""


def _wait(done: threading.Event, limit_s: float | None = None) -> None:
    """``done.wait()`` in slices, so that an interrupt flag set from another thread is seen (see the module doc); at
    most ``limit_s`` seconds when given."""
    waited = 0.0
    while not done.wait(POLL_S):
        waited += POLL_S
        if limit_s is not None and waited >= limit_s:
            return


def run_interruptibly(
    fn: Callable[[], Any],
    *,
    name: str,
    on_interrupt: Callable[[], None],
    on_give_up: Callable[[], Any],
) -> Any:
    """``fn()``; on the main thread, run on a helper thread named ``name`` while the main thread waits.

    On Ctrl-C (``KeyboardInterrupt``): ``on_interrupt()`` (cancel the run: its agent stops at its next model call or
    tool execution), wait for ``fn`` to end, then ``on_give_up()`` (end the run ``cancelled``, footer written) and
    re-raise. A Ctrl-C before ``fn`` began: ``fn`` never runs; ``on_give_up()`` and re-raise. ``fn`` is waited for at
    most :data:`GIVE_UP_S` (an agent stuck inside a model call, the wrap-up's included), and a second Ctrl-C stops
    waiting at once. Off the main thread ``fn``
    simply runs (signals only reach the main thread). The helper thread detaches from the JVM when it ends, so a run
    leaves no Java thread behind."""
    if threading.current_thread() is not threading.main_thread():
        return fn()
    box: dict[str, Any] = {}
    guarded = threading.Event()  # set by the main thread once inside the guarded section below
    done = threading.Event()

    def work() -> None:
        guarded.wait()
        try:
            if not box.get("skip"):
                box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = exc
        finally:
            detach_thread()  # else every run would leave an attached Java thread behind
            done.set()

    helper = threading.Thread(target=work, name=name, daemon=True)
    try:
        helper.start()
        guarded.set()
        _wait(done)
    except KeyboardInterrupt:
        if not guarded.is_set():  # before fn could begin: it never will
            box["skip"] = True
            guarded.set()
        else:
            on_interrupt()
            try:
                _wait(done, GIVE_UP_S)
            except KeyboardInterrupt:
                pass
        on_give_up()
        raise
    if "error" in box:
        raise box["error"]
    return box.get("value")
