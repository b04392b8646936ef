"""Issue 34: a per-tool ``continue`` limit replays as the blocked call not running: the engine reads the blocked
message where the recording has the tool's result, and the replayed run counts the call as blocked."""

from __future__ import annotations

from pyguard.base.events import IterationEvent, Observation, Outcome, RunEnd, RunRecord, RunStart, ToolCall
from pyguard.engine import CapsConfig, PolicyConfig
from pyguard.engine.config import ToolLimitConfig
from pyguard.engine.tool_limit_replay import blocked_result, replayed_events
from pyguard.replay import replay_run, replay_runs


def mailing_run(run_id: str = "mail", ids: bool = True) -> RunRecord:
    """Three send_email calls (one per model call), a lookup, then the answer; each result in the next request."""
    names = ["send_email", "send_email", "send_email", "get_shipment_status"]
    events = []
    for i, name in enumerate(names + [None], start=1):
        prev = names[i - 2] if i > 1 else None
        obs = (
            ()
            if prev is None
            else (Observation(tool_call_id=f"c{i - 1}" if ids else None, tool_name=prev, text=f"sent #{i - 1}"),)
        )
        calls = () if name is None else (ToolCall(id=f"c{i}" if ids else None, name=name, arguments=f'{{"n":{i}}}'),)
        events.append(
            IterationEvent(
                run_id=run_id, index=i, tool_calls=calls, observations=obs, text="Done." if name is None else None
            )
        )
    end = RunEnd(run_id=run_id, outcome=Outcome.SUCCEEDED, answer="Done.", iterations=5)
    return RunRecord(start=RunStart(run_id=run_id), events=events, end=end)


LIMITED = PolicyConfig(caps=CapsConfig(tool_limits={"send_email": ToolLimitConfig(limit=2)}))


def test_the_call_over_the_limit_replays_as_not_run_and_is_counted_blocked():
    record = mailing_run()
    replay = replayed_events(record.events, LIMITED.caps.tool_limits)
    assert replay.blocked == {"send_email": 1}
    texts = [[o.text for o in e.observations] for e in replay.events]
    assert texts[1:4] == [["sent #1"], ["sent #2"], [blocked_result("send_email", 2)]]
    assert texts[4] == ["sent #4"]  # the lookup's result is its own
    run = replay_run(record, LIMITED)
    assert run.tool_calls_blocked == {"send_email": 1} and run.tool_calls == 4
    assert "tool_calls_blocked" not in run.model_dump()  # the report's JSON keys stay as documented
    assert replay_runs([record], LIMITED).runs[0].tool_calls_blocked == {"send_email": 1}


def test_without_ids_the_result_is_matched_by_its_place():
    replay = replayed_events(mailing_run(ids=False).events, LIMITED.caps.tool_limits)
    assert replay.events[3].observations[0].text == blocked_result("send_email", 2)


def test_no_limit_leaves_the_events_as_they_are_and_end_or_error_are_named_as_not_modelled():
    record = mailing_run()
    assert replay_run(record, PolicyConfig()).tool_calls_blocked == {}
    ending = {"send_email": ToolLimitConfig(limit=1, exit="end")}
    replay = replayed_events(record.events, ending)
    assert replay.events is record.events and replay.blocked == {} and replay.not_modelled == ("send_email",)
