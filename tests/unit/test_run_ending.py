"""One run lifecycle (issues 13, 24): how an agent ended (pyguard.jvm.ending) maps to the run's causes in one place
(pyguard.base.ending.finish_arguments), one precedence settles them (pyguard.base.ending.settle, the engine's too), and the
footer of a run the engine did not finish is built in one place (pyguard.base.ending.end_from_events), the same for an
unguarded run and for a guarded one whose engine gave up."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyguard.base.ending import Causes, Ending, RunEnding, end_from_events, finish_arguments
from pyguard.base.events import IterationEvent, Outcome, ToolCall
from pyguard.jvm.agents import AgentStyle, BridgeResult, BridgeRunStats
from pyguard.jvm.ending import ending_of_exception, ending_of_result, ending_of_value


def stats(**kw) -> BridgeRunStats:
    base = dict(model_calls=3, events=3, events_delivered=3, tool_calls=2, tool_executions=2, last_text="so far: X")
    return BridgeRunStats(**{**base, **kw})


def bridge(status: str, **kw) -> BridgeResult:
    return BridgeResult(style=AgentStyle.EXECUTOR, run_id="r", status=status, stats=stats(), **kw)


def test_the_java_ending_values_are_the_python_ones():
    java = Path(__file__).resolve().parents[2] / "java/src/main/java/dev/pyguard/bridge/AgentRunResult.java"
    text = java.read_text()
    body = text[text.index("public enum Ending {") : text.index("public String value()")]
    names = [line.strip().rstrip(",;") for line in body.splitlines()[1:] if line.strip().isupper()]
    assert [n.lower() for n in names] == [e.value for e in Ending]


@pytest.mark.parametrize(
    "res, expected",
    [
        (bridge("answered", answer="42"), {"answer": "42"}),
        (
            bridge("exhausted", reason="exceeded 5 tool calling round trips"),
            {
                "expired": "the agent's own cap ended the run without an answer (exceeded 5 tool calling round trips)",
                "answer": "so far: X",
            },
        ),
        (
            bridge("exhausted"),
            {"expired": "the agent's own cap ended the run without an answer (executor)", "answer": "so far: X"},
        ),
        (
            bridge("failed", error="java.lang.RuntimeException: boom"),
            {"error": "java.lang.RuntimeException: boom", "answer": "so far: X"},
        ),
        (bridge("stopped", outcome="cancelled", reason="bye"), {"cancelled": True, "answer": "so far: X"}),
        (
            bridge("stopped", outcome="guard_error", reason="callbacks failed", fail_safe=True),
            {"guard_error": "callbacks failed", "answer": "so far: X"},
        ),
        (
            bridge("stopped", outcome="expired", reason="cap", fail_safe=True),
            {"expired": "cap (Java fail-safe)", "answer": "so far: X"},
        ),
    ],
)
def test_each_ending_maps_to_one_set_of_finish_arguments(res, expected):
    assert finish_arguments(ending_of_result(res), "executor") == Causes(**expected)


def test_a_failure_has_no_stop_outcome_and_callback_failures_are_kept():
    res = BridgeResult(
        style=AgentStyle.AISERVICES,
        run_id="r",
        status="failed",
        outcome="stalled",  # whatever Java said: only a stop has a stop outcome
        error="boom",
        stats=stats(callback_failures=2, last_callback_error="late"),
    )
    ending = ending_of_result(res)
    assert ending.ending is Ending.FAILED and ending.stop_outcome is None and ending.error == "boom"
    assert ending.guard_failures == "3 model calls, 2 guard callback failure(s), the last: late"


def test_python_exceptions_and_values():
    ending = ending_of_exception(ValueError("bad"), last_text="partial")
    assert ending == RunEnding(ending=Ending.FAILED, error="ValueError: bad", last_text="partial")
    assert ending_of_value(None) == RunEnding(ending=Ending.ANSWERED)
    assert ending_of_value(42).answer == "42"


def ev(i: int, final: bool = False, tokens: int | None = 10) -> IterationEvent:
    calls = () if final else (ToolCall(id=f"c{i}", name="t", arguments="{}"),)
    return IterationEvent(run_id="r", index=i, total_tokens=tokens, tool_calls=calls, text="done" if final else None)


@pytest.mark.parametrize(
    "kwargs, outcome, reason",
    [
        ({"answer": "done"}, Outcome.SUCCEEDED, "the model answered"),
        ({}, Outcome.FAILED, "the run ended without an answer"),
        ({"failed": "the run failed: boom"}, Outcome.FAILED, "the run failed: boom"),
        ({"expired": "own cap", "answer": "x"}, Outcome.EXPIRED, "own cap"),
        ({"cancelled": True}, Outcome.CANCELLED, "cancelled"),
        ({"answer": "done", "verified": False}, Outcome.FAILED, "the verifier rejected the answer"),
        (
            {"answer": "done", "engine_gave_up": "late"},
            Outcome.GUARD_ERROR,
            "the model answered, unguarded after the guard failed: late",
        ),
        ({"engine_gave_up": "late"}, Outcome.GUARD_ERROR, "the guard failed: late"),
        ({"failed": "the run failed: boom", "engine_gave_up": "late"}, Outcome.FAILED, "the run failed: boom (late)"),
    ],
)
def test_the_footer_without_the_engine(kwargs, outcome, reason):
    events = [ev(1), ev(2, tokens=None), ev(3, final=True)]
    end = end_from_events("r", events, Causes(**kwargs), wall_ms=5.0)
    assert (end.outcome, end.reason) == (outcome, reason)
    assert (end.iterations, end.tool_calls, end.total_tokens, end.tokens_partial) == (3, 2, 20, True)
    assert end.wall_ms == 5.0 and end.censored is False


def test_the_guard_calls_no_java_class_itself():
    source = (Path(__file__).resolve().parents[2] / "pyguard/live/guard.py").read_text()
    for java in ("jclass", "import jpype", "dev.pyguard.bridge", "findIn", ".delegate()", ".sensor()"):
        assert java not in source, java


_CAUSES = {
    "guard_error": "callbacks failed",
    "cancelled": True,
    "expired": "own cap",
    "error": "boom",
    "answer": "done",
}


@pytest.mark.parametrize("verified", [None, True, False])
@pytest.mark.parametrize("mask", range(1 << len(_CAUSES)))
def test_the_engine_and_the_footer_without_it_settle_every_mix_of_causes_alike(mask, verified):
    """Issue 24: the engine checked guard_error before cancelled, end_from_events the reverse (while its docstring
    said it followed the engine). Both now call pyguard.base.ending.settle: for every mix of causes they agree. Changed:
    end_from_events(cancelled=True, guard_error=...) is guard_error now (no caller passes both)."""
    from pyguard.engine import Policy, PolicyConfig

    kwargs = {k: v for i, (k, v) in enumerate(_CAUSES.items()) if mask >> i & 1}
    engine = Policy(PolicyConfig(), clock=lambda: 0.0).new_run(run_id="r").finish(verified=verified, **kwargs)
    alone = end_from_events("r", [], Causes(verified=verified, **kwargs))
    assert (alone.outcome, alone.reason) == (engine.outcome, engine.reason)


def test_a_guard_error_outranks_a_cancellation():
    end = end_from_events("r", [ev(1)], Causes(cancelled=True, guard_error="callbacks failed"))
    assert (end.outcome, end.reason) == (Outcome.GUARD_ERROR, "the guard failed: callbacks failed")
