"""How a Java agent's run ended, as neutral data: the one place that reads a Java result or a Java exception.

Java says how the agent's loop ended with one enum (``AgentRunResult.Ending``: answered, stopped, failed, exhausted)
and, for a stop, the :class:`GuardStopException` that carries the stop's outcome. This module turns either into a
:class:`pyguard.base.ending.RunEnding`, which holds no Java object; :func:`pyguard.base.ending.finish_arguments` reads it as
the causes whose one outcome :func:`pyguard.base.ending.settle` decides (through the engine's ``RunSession.finish``). So the Guard never touches a Java class, and an ending is read the same
way whether the run was pyguard's own agent (a ``BridgeResult``) or the user's (an exception out of ``agent.chat``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyguard.base.ending import Ending, RunEnding, TokenTotals, tree_totals
from pyguard.base.events import Outcome, token_count
from pyguard.jvm._java import jclass

if TYPE_CHECKING:  # pragma: no cover
    from pyguard.jvm.agents import BridgeResult, WrapUpRecord

__all__: list[str] = []


def ending_of_result(res: BridgeResult) -> RunEnding:
    """The ending of a pyguard-built agent's run (:class:`pyguard.jvm.BridgeResult`)."""
    stats = res.stats
    failures = None
    if stats is not None and stats.callback_failures:
        failures = (
            f"{stats.model_calls} model calls, {stats.callback_failures} guard callback failure(s), the last:"
            f" {stats.last_callback_error}"
        )
    return RunEnding(
        ending=Ending(res.status),
        answer=res.answer,
        stop_outcome=res.outcome if res.status == Ending.STOPPED else None,
        reason=res.reason if res.status != Ending.FAILED else None,
        fail_safe=res.fail_safe,
        error=(res.error or res.reason or "the run failed") if res.status == Ending.FAILED else None,
        last_text=stats.last_text if stats is not None else None,
        guard_failures=failures,
    )


def ending_of_exception(exc: BaseException, last_text: str | None = None) -> RunEnding:
    """The ending of a run whose agent raised ``exc`` (a Java exception arrives as a Python one through JPype):
    STOPPED when a ``GuardStopException`` is in its cause chain, else FAILED."""
    if interrupted(exc):
        return RunEnding(
            ending=Ending.STOPPED, stop_outcome=Outcome.CANCELLED, reason="interrupted (Ctrl-C)", last_text=last_text
        )
    stop = _guard_stop_in(exc)
    if stop is None and _agent_cap_in(exc):  # LangChain4j's own round-trip cap: the loop ran out, not a failure
        return RunEnding(ending=Ending.EXHAUSTED, reason=_java_message(exc), last_text=last_text)
    if stop is None:
        return RunEnding(ending=Ending.FAILED, error=f"{type(exc).__name__}: {exc}", last_text=last_text)
    try:
        outcome = Outcome(str(stop.outcome()))
    except ValueError:  # a stop whose outcome pyguard does not know: the guard's side is broken
        outcome = Outcome.GUARD_ERROR
    return RunEnding(
        ending=Ending.STOPPED,
        stop_outcome=outcome,
        reason=str(stop.reason()),
        fail_safe=bool(stop.failSafe()),
        last_text=last_text,
    )


def ending_of_value(value: Any) -> RunEnding:
    """The ending of a run whose agent returned ``value`` (its answer; None when it returned nothing)."""
    return RunEnding(ending=Ending.ANSWERED, answer=None if value is None else str(value))


def _guard_stop_in(exc: BaseException) -> Any:
    """The ``GuardStopException`` in ``exc``'s cause chain, or None (None too for a Python exception)."""
    if not hasattr(exc, "getClass"):
        return None
    try:
        return jclass("dev.pyguard.bridge.GuardStopException").findIn(exc)
    except Exception:  # pragma: no cover - defensive: classification must not hide the run's end
        return None


def _agent_cap_in(exc: BaseException) -> bool:
    """True when ``exc`` is LangChain4j's round-trip cap ending an AiServices call ("exceeded N tool calling round
    trips (maxToolCallingRoundTrips)"), in its cause chain."""
    if not hasattr(exc, "getClass"):
        return False
    try:
        return bool(jclass("dev.pyguard.bridge.AgentGuardedChatModel").agentCapEnded(exc))
    except Exception:  # pragma: no cover - defensive: classification must not hide the run's end
        return False


def _java_message(exc: BaseException) -> str:
    message = exc.getMessage() if hasattr(exc, "getMessage") else None
    return f"LangChain4j's own cap: {message if message is not None else exc}"


def guard_stop_class() -> Any:
    """Java's ``dev.pyguard.bridge.GuardStopException`` (a ``RuntimeException``), as JPype's class: what an agent's
    call raises when the guard stops it under ``on_stop="raise"`` (attach, ``GuardedRun.call``, ``Guard.agent``);
    ``except`` it from Python. Needs the JVM started (:func:`pyguard.jvm.start_jvm`)."""
    return jclass("dev.pyguard.bridge.GuardStopException")


def guard_stop_of(exc: BaseException | None, guarded: Any = None) -> Any:
    """The ``GuardStopException`` to raise for a run the guard stopped: the one in ``exc``'s cause chain (what the
    agent raised), else the one the run's guarded model (:class:`pyguard.jvm.GuardedModel`) stopped with; None."""
    stop = _guard_stop_in(exc) if exc is not None else None
    if stop is None and guarded is not None:
        java = guarded.java
        stop = (java.actuator() if hasattr(java, "actuator") else java).stopException()  # streaming: its actuator's
    return stop


def raise_if_stopped(run: Any, raised: BaseException | None = None) -> None:
    """Under ``on_stop="raise"``, once ``run`` (a :class:`pyguard.live.run.GuardedRun`) has ended: raise Java's
    ``GuardStopException`` of its stop (the one in ``raised``'s cause chain, what the agent threw, else the one its
    guarded model stopped with); nothing otherwise. The one rule of :meth:`pyguard.live.run.GuardedRun.call` and
    :meth:`pyguard.live.agent_guard.GuardedAgent.chat`, as an attached agent's ``chat()`` raises the exception itself."""
    guarded = getattr(run, "_guarded", None)
    if run.on_stop != "raise" or (raised is None and guarded is None):
        return
    stop = guard_stop_of(raised, guarded)
    if stop is not None:
        raise stop


def java_outcome(result: Any) -> Any:
    """A Java ``GuardOutcome`` (how the turn ended, for the Java code that holds the agent) from a
    :class:`pyguard.result.RunResult`."""
    rule = result.evidence.get("rule")
    tokens = result.total_tokens
    return jclass("dev.pyguard.bridge.GuardOutcome")(
        result.run_id,
        result.outcome.value,
        None if rule is None else str(rule),
        result.reason or "",
        result.answer_source,
        int(result.model_calls),
        None if tokens is None else jclass("java.lang.Long")(int(tokens)),
    )


def interrupted(exc: BaseException) -> bool:
    """True when ``exc`` comes of a Ctrl-C: a ``KeyboardInterrupt``, a Java ``InterruptedException`` (what JPype makes
    of one on a Java thread), or a Python ``KeyboardInterrupt`` that crossed into Java (a callback on the agent's
    thread) and came back as a Java exception, anywhere in its cause chain."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    if not hasattr(exc, "getClass"):
        return False
    seen = 0
    cause: Any = exc
    while cause is not None and seen < 32:
        name = str(cause.getClass().getName())
        if name == "java.lang.InterruptedException":
            return True
        if name == "org.jpype.PyExceptionProxy":
            try:
                jclass("dev.pyguard.bridge.AgentGuardedChatModel").rethrow(cause)
            except KeyboardInterrupt:
                return True
            except BaseException:  # noqa: BLE001 - another Python exception: not an interrupt
                pass
        nxt = cause.getCause()
        cause = None if nxt is None or nxt.equals(cause) else nxt
        seen += 1
    return False


def ending_of_wrap_up(wrap: WrapUpRecord, ending: RunEnding) -> RunEnding:
    """The ending as a wrap-up makes it: the stop it answered, with its answer (the model's, or the run's last text it
    fell back to); ``ending`` as it was when the wrap-up gave the agent no answer at all."""
    if wrap.text is None:
        return ending
    try:
        outcome = Outcome(wrap.outcome)
    except ValueError:
        outcome = Outcome.GUARD_ERROR
    return RunEnding(
        ending=Ending.STOPPED,
        stop_outcome=outcome,
        reason=wrap.reason,
        fail_safe=wrap.fail_safe,
        last_text=wrap.text,
        guard_failures=ending.guard_failures,
    )


def wrap_up_totals(wrap: WrapUpRecord) -> TokenTotals | None:
    """The wrap-up call's tokens as its provider reported them (None: no usage reported)."""
    total = token_count(wrap.total_tokens, wrap.input_tokens, wrap.output_tokens)
    if total is None:
        return None
    complete = wrap.total_tokens is not None or (wrap.input_tokens is not None and wrap.output_tokens is not None)
    return TokenTotals(wrap.input_tokens, wrap.output_tokens, total, not complete)


def billed_tokens(
    tokens: TokenTotals, wrap: WrapUpRecord | None, evidence: dict[str, Any]
) -> tuple[TokenTotals, TokenTotals | None]:
    """What a run billed: its calls' ``tokens`` and the wrap-up's (partial when the wrap-up answered without usage),
    and the wrap-up's share; its record goes into ``evidence["wrap_up"]``."""
    if wrap is None:
        return tokens, None
    share = wrap_up_totals(wrap)
    if share is not None:
        tokens = tree_totals([tokens, share])
    elif wrap.status in ("answered", "no_text") and tokens.total is not None:
        tokens = tokens._replace(partial=True)
    evidence["wrap_up"] = {
        "status": wrap.status,
        "error_kind": wrap.error_kind,
        "error": wrap.error,
        "rule": wrap.rule,
        "salvaged": wrap.salvaged,
        "tokens": None if share is None else share.total,
    }
    return tokens, share
