"""The Python side of the Java ``GuardCallback``: event JSON in, decision JSON out.

One :class:`CallbackAdapter` per run wraps any ``Callable[[IterationEvent], Decision | None]``. Java calls it once
per model call with the event as one JSON string; it parses it with ``IterationEvent.model_validate_json``, calls
the policy, and answers with the decision as a short JSON string (``None`` means continue).

With ``results_fn`` (a ``Callable[[int, list[Observation]], Decision | None]``), Java also calls it with the tool
results of model call ``i`` as soon as the guarded model holds the request of call ``i + 1`` (which carries them),
before that call is sent (Java's ``ResultsCallback.onResults``): the guard judges the evidence when it exists, and a stop
replaces call ``i + 1`` instead of following it. Without it the results are judged with call ``i + 1``'s event.

A Python exception inside (a parse error, the policy raising, a wrong return type) never vanishes: it is kept in
:attr:`CallbackAdapter.errors` and re-raised into Java, where the sensor counts it as a callback failure, the run
goes on, and the Java fail-safe cap still bounds the run.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pyguard.base.decisions import Action, Decision
from pyguard.base.events import IterationEvent, Observation
from pyguard.jvm._java import jclass
from pyguard.jvm.bootstrap import check_jvm

__all__: list[str] = []

GuardPolicyFn = Callable[[IterationEvent], "Decision | None"]
ResultsFn = Callable[[int, list[Observation]], "Decision | None"]
"""Judges the tool results of model call ``index`` before the next call is sent."""


class _Results(BaseModel):
    """What Java sends with ``onResults``: the run, the model call whose tool results these are, the results."""

    model_config = ConfigDict(extra="forbid")
    run_id: str
    index: int = Field(ge=1)
    observations: list[Observation]


_CONTINUE = '{"action":"continue"}'
_RELEASED = (
    "this run's guard was released when the run ended (CallbackAdapter.release): a guarded model serves one run;"
    " guard the model again for a new run"
)
_CANCEL_REPLY = '{"action":"stop","outcome":"cancelled","reason":"interrupted (Ctrl-C)","rule":"cancel"}'


def decision_to_json(decision: Decision | None, turn_start: int | None = None) -> str:
    """The short reply Java reads: action, and reason/rule/reflection/outcome when set; ``turn_start`` (model calls
    before the user turn) with the first decision of a later turn, so that the Java fail-safe counts per turn."""
    if decision is None:
        return _CONTINUE
    if not isinstance(decision, Decision):
        raise TypeError(
            f"a guard callback must return pyguard.base.decisions.Decision or None, not {type(decision).__name__}"
        )
    if decision.action is Action.CONTINUE and turn_start is None:
        return _CONTINUE
    out: dict[str, Any] = {"action": decision.action.value}
    if turn_start is not None:
        out["turn_start"] = turn_start
    if decision.reason:
        out["reason"] = decision.reason
    if decision.rule:
        out["rule"] = decision.rule
    if decision.reflection is not None:
        out["reflection"] = decision.reflection
    if decision.outcome is not None:
        out["outcome"] = decision.outcome.value
    return json.dumps(out, ensure_ascii=False)


class CallbackAdapter:
    """Turns a Python policy function into the Java ``GuardCallback`` of one run.

    Attributes (read after or during the run): ``events`` (every parsed event, in order) and ``decisions`` (what the
    policy returned), both kept only when ``keep_events``; ``errors`` (``"Type: message"`` of each Python failure).
    """

    def __init__(self, fn: GuardPolicyFn, *, keep_events: bool = True, results_fn: ResultsFn | None = None) -> None:
        if not callable(fn):
            raise TypeError(f"the guard callback must be callable, got {type(fn).__name__}")
        if results_fn is not None and not callable(results_fn):
            raise TypeError(f"results_fn must be callable or None, got {type(results_fn).__name__}")
        self.fn: GuardPolicyFn | None = fn
        self.results_fn: ResultsFn | None = results_fn
        """Judges each model call's tool results before the next call (None: they are judged with its event)."""
        """The policy; None once the run is over (:meth:`release`)."""
        self.keep_events = keep_events
        self.events: list[IterationEvent] = []
        self.decisions: list[Decision | None] = []
        self.errors: list[str] = []
        self.interrupted = False
        """True when Ctrl-C arrived inside the callback: the run was stopped as cancelled; re-raise it after."""
        self._lock = threading.Lock()
        self._java: Any = None
        self._turn = 1

    def on_iteration(self, event_json: str) -> str:
        """The pure-Python half (testable without a JVM)."""
        try:
            fn = self.fn
            if fn is None:
                raise RuntimeError(_RELEASED)
            event = IterationEvent.model_validate_json(event_json)
            if self.keep_events:
                with self._lock:
                    self.events.append(event)
            decision = fn(event)
            turn_start = None
            if isinstance(decision, Decision) and decision.turn is not None and decision.turn != self._turn:
                self._turn = decision.turn
                if decision.turn > 1 and decision.iteration is not None:
                    turn_start = decision.iteration - 1  # the turn's first call is this decision's iteration
            reply = decision_to_json(decision, turn_start)
            if self.keep_events:
                with self._lock:
                    self.decisions.append(decision)
            return reply
        except BaseException as e:
            with self._lock:
                self.errors.append(f"{type(e).__name__}: {e}")
            raise

    def on_results(self, results_json: str) -> str | None:
        """The pure-Python half of ``onResults``: None when this run judges results only with the next event."""
        try:
            fn = self.results_fn
            if fn is None or self.fn is None:  # no judge, or released (the call's own event is the counted failure)
                return None
            results = _Results.model_validate_json(results_json)
            decision = fn(results.index, results.observations)
            reply = decision_to_json(decision)
            if self.keep_events and decision is not None:
                with self._lock:
                    self.decisions.append(decision)
            return reply
        except BaseException as e:
            with self._lock:
                self.errors.append(f"{type(e).__name__}: {e}")
            raise

    def java(self) -> Any:
        """The JPype proxy implementing ``dev.pyguard.bridge.GuardCallback`` (needs the JVM started)."""
        if self._java is None:
            if self.released:
                raise RuntimeError(_RELEASED)
            self._java = _proxy_class(results=self.results_fn is not None)(self)
        return self._java

    @property
    def released(self) -> bool:
        """True once :meth:`release` was called: this adapter serves no further event."""
        return self.fn is None

    def release(self) -> None:
        """The run has ended: let go of the policy and cut the Java side's way to this adapter.

        JPype keeps the Python proxy of a Java callback alive until the JVM collects the Java object that holds it, and
        that Java object lives as long as anything (a Python wrapper of the guarded model, say) refers to it: without
        this, a run's Python state (the engine session, the events, a ``GuardedRun`` and its trace) stays alive
        until the JVM's next collection, or for ever when it refers back to the guarded model (a cycle through Java
        neither collector can see). After it the adapter and what ``fn`` held are freed as soon as Python drops them;
        ``events``, ``decisions`` and ``errors`` stay readable. A later event raises (Java counts it as a callback
        failure; its fail-safe cap still holds). Idempotent."""
        self.fn = None
        self.results_fn = None
        proxy = self._java
        if proxy is not None:
            proxy.adapter = None


_PROXY_CLASSES: dict[bool, Any] = {}
"""The proxy class without and with Java's ``ResultsCallback`` (a run without a results judge costs no crossing)."""


def _java_error() -> Any:
    return jclass("java.lang.IllegalStateException")


def _proxy_class(*, results: bool = False) -> Any:
    if not _PROXY_CLASSES:
        from jpype import JImplements, JOverride

        check_jvm()  # JvmError saying what to call first, not JPype's bare JVMNotRunning

        @JImplements("dev.pyguard.bridge.GuardCallback")
        class _EventsProxy:
            def __init__(self, adapter: CallbackAdapter) -> None:
                self.adapter: CallbackAdapter | None = adapter

            @JOverride
            def onIteration(self, eventJson: Any) -> str:  # noqa: N802,N803 - Java names
                return _on_iteration(self, eventJson)

        @JImplements(["dev.pyguard.bridge.GuardCallback", "dev.pyguard.bridge.ResultsCallback"])
        class _ResultsProxy:
            def __init__(self, adapter: CallbackAdapter) -> None:
                self.adapter: CallbackAdapter | None = adapter

            @JOverride
            def onIteration(self, eventJson: Any) -> str:  # noqa: N802,N803 - Java names
                return _on_iteration(self, eventJson)

            @JOverride
            def onResults(self, resultsJson: Any) -> str | None:  # noqa: N802,N803 - Java names
                return _on_results(self, resultsJson)

        _PROXY_CLASSES[False] = _EventsProxy
        _PROXY_CLASSES[True] = _ResultsProxy
    return _PROXY_CLASSES[results]


def _on_iteration(proxy: Any, event_json: Any) -> str:
    adapter = proxy.adapter
    if adapter is None:
        raise _java_error()(f"python guard callback: {_RELEASED}")
    return _answer(adapter, adapter.on_iteration, event_json)


def _on_results(proxy: Any, results_json: Any) -> str | None:
    adapter = proxy.adapter
    if adapter is None:
        return None  # released: no judgment here; the call's own event is the counted failure
    return _answer(adapter, adapter.on_results, results_json)


def _answer(adapter: Any, judge: Any, payload_json: Any) -> Any:
    """``judge(str(payload_json))``, the reply Java reads; how either callback leaves Python when it fails."""
    try:
        return judge(str(payload_json))
    except KeyboardInterrupt:
        # Ctrl-C landed in the callback (it runs on the main thread when the agent does): a Python exception must not
        # unwind through Java frames. Stop this run as cancelled; the caller re-raises the interrupt once Java has
        # returned (see CallbackAdapter.interrupted).
        adapter.interrupted = True
        return _CANCEL_REPLY
    except Exception as e:
        # A Java exception carrying the Python type and message (a bare Python exception would reach Java as an
        # anonymous PyExceptionProxy), so the sensor's count and report say what went wrong.
        raise _java_error()(f"python guard callback raised {type(e).__name__}: {e}") from None
