"""The Guard's run results without a JVM: partial usage is marked partial, strict inputs to the Guard."""

from __future__ import annotations

import pytest

from pyguard.base.ending import Causes
from pyguard.base.errors import ConfigError
from pyguard.base.events import IterationEvent, Observation, ToolCall
from pyguard.live.guard import Guard


def _event(index: int, tokens: int | None, final: bool = False) -> IterationEvent:
    calls = () if final else (ToolCall(id=f"c{index}", name="lookup", arguments=f'{{"id": {index}}}'),)
    obs = (Observation(tool_call_id=f"c{index - 1}", tool_name="lookup", text=f"result {index}"),) if index > 1 else ()
    return IterationEvent(
        run_id="r1",
        index=index,
        tool_calls=calls,
        observations=obs,
        total_tokens=tokens,
        input_tokens=None if tokens is None else tokens - 10,
        output_tokens=None if tokens is None else 10,
    )


def test_a_total_over_partly_unknown_usage_is_marked_partial():
    run = Guard().start_run(task="t", run_id="r1")
    for i, tokens in enumerate([150, 194, None, None], start=1):
        run.observe(_event(i, tokens, final=i == 4))
    result = run._finish(Causes(answer="done"))
    assert result.end.total_tokens == 344
    assert result.end.tokens_partial is True
    assert "partial" in result.summary()


def test_complete_usage_is_not_marked_partial():
    run = Guard().start_run(task="t", run_id="r1")
    for i in range(1, 4):
        run.observe(_event(i, 100, final=i == 3))
    result = run._finish(Causes(answer="done"))
    assert result.end.total_tokens == 300 and result.end.tokens_partial is False


@pytest.mark.parametrize(
    "kwargs",
    [
        {"callback_timeout_ms": -1},
        {"callback_timeout_ms": "200"},
        {"callback_timeout_ms": True},
        {"fail_safe_calls": 2**31},
        {"fail_safe_calls": "8"},
        {"trace_file_mode": 0o1777},
    ],
)
def test_guard_arguments_are_checked(kwargs):
    with pytest.raises(ConfigError):
        Guard(**kwargs)


def test_a_hard_cap_at_the_java_int_limit_still_gives_a_valid_fail_safe_cap():
    from pyguard.engine import PolicyConfig

    guard = Guard(PolicyConfig(hard_cap=2**31 - 1, base_budget=8))
    assert guard.fail_safe_calls == 2**31 - 1
