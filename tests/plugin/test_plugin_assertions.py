"""pyguard.testing: each assertion passes on a run that satisfies it and fails with the run's trace summary."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from plugin_runs import make_result

from pyguard.base.errors import InputError
from pyguard.base.events import ToolCall
from pyguard.testing import (
    action_fingerprint,
    assert_answer_contains,
    assert_iterations_at_most,
    assert_max_repeats,
    assert_never_stalled,
    assert_outcome,
    assert_succeeded,
    assert_tokens_under,
    assert_tool_called,
    describe_run,
    repeated_actions,
)

STATUS = ("get_shipment_status", '{"orderId": "12345"}')
STATUS_SPACED = ("get_shipment_status", '{ "orderId":"12345" }')
ROUTE = ("find_alternative_route", '{"orderId":"12345"}')


def converging():
    return make_result([[STATUS], [ROUTE], "Rerouted via BlueLine"], gains=[1.0, 0.8, 0.5])


def looping():
    return make_result(
        [[STATUS], [STATUS_SPACED], [STATUS], [STATUS]],
        outcome="stalled",
        reason="the same action 4 times without new information",
        gains=[1.0, 0.0, 0.0, 0.0],
        reflect_after=(2,),
    )


def test_a_converging_run_passes_every_assertion():
    r = converging()
    assert_succeeded(r, within=3)
    assert_outcome(r, "succeeded")
    assert_never_stalled(r)
    assert_max_repeats(r, 1)
    assert_tokens_under(r, 301)
    assert_iterations_at_most(r, 3)
    assert_tool_called(r, "find_alternative_route", times=1)
    assert_answer_contains(r, "blueline")


def test_succeeded_within_fails_naming_the_count_and_showing_the_trace():
    with pytest.raises(AssertionError) as info:
        assert_succeeded(converging(), within=2)
    message = str(info.value)
    assert message.splitlines()[0] == "expected the run to succeed within 2 iterations, it took 3"
    assert "outcome=succeeded" in message
    assert "gains: 1.00 0.80 0.50" in message
    assert "#2 gain=0.50: find_alternative_route" in message  # the gain of its own results, measured at call 3


def test_succeeded_fails_on_a_stalled_run_with_repeats_gains_and_reflection_in_the_message():
    with pytest.raises(AssertionError) as info:
        assert_succeeded(looping())
    message = str(info.value)
    assert "its outcome is 'stalled'" in message
    assert "reason='the same action 4 times without new information'" in message
    assert 'repeated fingerprints: get_shipment_status({"orderId":"12345"}) x4' in message
    assert "gains: 1.00 0.00 0.00 0.00" in message
    assert re.search(r"#2 gain=0\.00: get_shipment_status.*-> reflect \[repeat_no_gain\]", message)


def test_outcome_accepts_the_enum_or_its_value_and_rejects_unknown_names():
    r = looping()
    assert_outcome(r, "STALLED")
    with pytest.raises(AssertionError, match="expected outcome 'expired', got 'stalled'"):
        assert_outcome(r, "expired")
    with pytest.raises(InputError, match="unknown outcome 'stuck': use one of succeeded, failed, expired"):
        assert_outcome(r, "stuck")


def test_never_stalled_counts_a_reflection_unless_allowed():
    r = make_result([[STATUS], [STATUS], [ROUTE], "done"], reflect_after=(2,), gains=[1, 0, 1, 1])
    with pytest.raises(AssertionError, match=r"reflection after iterations \[2\] \(rules: repeat_no_gain\)"):
        assert_never_stalled(r)
    assert_never_stalled(r, allow_reflections=True)
    with pytest.raises(AssertionError, match="stopped as stalled"):
        assert_never_stalled(looping(), allow_reflections=True)


def test_max_repeats_treats_reformatted_arguments_as_the_same_action():
    r = looping()
    assert_max_repeats(r, 4)
    with pytest.raises(AssertionError) as info:
        assert_max_repeats(r, 3)
    assert 'no action repeated more than 3 times, but: get_shipment_status({"orderId":"12345"}) x4' in str(info.value)


def test_tokens_under_fails_at_the_limit_and_when_usage_is_unknown():
    r = converging()  # 3 calls x 100 tokens
    with pytest.raises(AssertionError, match="expected fewer than 300 tokens, the run used 300"):
        assert_tokens_under(r, 300)
    unknown = make_result([[STATUS], "ok"], tokens_per_call=None)
    with pytest.raises(AssertionError, match="token usage is unknown"):
        assert_tokens_under(unknown, 10_000)


def test_tool_called_and_answer_contains_failures():
    r = converging()
    with pytest.raises(AssertionError, match="'get_carrier_incidents' to be called at least 1 times, it was called 0"):
        assert_tool_called(r, "get_carrier_incidents")
    with pytest.raises(AssertionError, match="'get_shipment_status' to be called 2 times, it was called 1"):
        assert_tool_called(r, "get_shipment_status", times=2)
    with pytest.raises(AssertionError, match="expected the answer to contain 'Turin'"):
        assert_answer_contains(r, "Turin")


def test_bad_arguments_are_input_errors_naming_the_value():
    with pytest.raises(InputError, match=r"within=-1 must be a non-negative integer"):
        assert_succeeded(converging(), within=-1)
    with pytest.raises(InputError, match=r"k=2.5 must be a non-negative integer"):
        assert_max_repeats(converging(), 2.5)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="expected a pyguard RunResult or RunRecord, got dict"):
        assert_succeeded({"outcome": "succeeded"})  # type: ignore[arg-type]


def test_assertions_accept_a_finished_record():
    assert_succeeded(converging().record, within=3)


def test_a_long_run_is_summarised_with_its_middle_elided():
    r = make_result([[("t", json.dumps({"i": i}))] for i in range(40)] + ["end"], gains=[0.5] * 41)
    text = describe_run(r)
    assert "... 25 iterations not shown ..." in text
    assert "#1 gain=0.50" in text and "#41: answered 'end'" in text
    assert len(text.splitlines()) < 30


@given(
    st.dictionaries(st.text(min_size=1, max_size=5), st.one_of(st.integers(), st.text(max_size=5)), max_size=4),
    st.booleans(),
)
def test_fingerprint_ignores_key_order_and_whitespace(args, reverse):
    compact = json.dumps(args, separators=(",", ":"))
    spaced = json.dumps(dict(sorted(args.items(), reverse=reverse)), indent=2)
    assert action_fingerprint(ToolCall(name="t", arguments=compact)) == action_fingerprint(
        ToolCall(name="t", arguments=spaced)
    )


def test_fingerprint_keeps_malformed_arguments_as_text():
    assert action_fingerprint(ToolCall(name="t", arguments=' {"a":  ')) == 't(raw:{"a":)'
    assert repeated_actions(converging()) == []


def test_max_repeats_can_fold_trivial_rewrites():
    r = make_result(
        [[("get_shipment_status", '{"orderId": "SO-12345"}')], [("get_shipment_status", '{"order_id": 12345}')], "x"]
    )
    assert_max_repeats(r, 1)
    with pytest.raises(AssertionError, match="more than 1 times") as failed:
        assert_max_repeats(r, 1, normalised=True)
    # the summary under the headline counts repeats the way the assertion did, not "none"
    assert "repeated fingerprints (normalised): getshipmentstatus" in str(failed.value)
    assert "repeated fingerprints: none" not in str(failed.value)
