"""Ctrl-C for guarded runs: run an agent so that an interrupt cancels the run instead of killing it half-written.

A call into Java cannot be interrupted from Python (the signal handler runs only when the main thread runs Python
code), so on the main thread the agent runs on a helper thread while the main thread waits, which Python can
interrupt. The JVM is started with JPype's ``interrupt=False`` (:func:`pyguard.jvm.start_jvm`), so SIGINT reaches
Python at all.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["run_interruptibly"]


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
    re-raise. A second Ctrl-C stops waiting for ``fn`` (an agent stuck inside a model call): ``on_give_up()`` at once.
    Off the main thread ``fn`` simply runs (signals only reach the main thread). The helper thread detaches from the
    JVM when it ends, so a run leaves no Java thread behind."""
    if threading.current_thread() is not threading.main_thread():
        return fn()
    box: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        from pyguard.jvm._java import detach_thread

        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = exc
        finally:
            detach_thread()  # else every run would leave an attached Java thread behind
            done.set()

    threading.Thread(target=work, name=name, daemon=True).start()
    try:
        done.wait()
    except KeyboardInterrupt:
        on_interrupt()
        try:
            done.wait()
        except KeyboardInterrupt:
            pass
        on_give_up()
        raise
    if "error" in box:
        raise box["error"]
    return box.get("value")
