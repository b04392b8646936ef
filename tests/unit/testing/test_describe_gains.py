"""The trace summary puts each call's gain beside that call: the gain of the results it asked for (measured by the
engine when they arrive, with the next call), so an identical repeat shows no gain on its own line."""

from __future__ import annotations

from pyguard.base.events import IterationEvent, Observation, RunEnd, RunRecord, RunStart, ToolCall
from pyguard.engine import Policy
from pyguard.result import RunResult
from pyguard.testing.assertions import describe_run

RESULT = "Order 12345: IN_TRANSIT, carrier FedEx, last scan Memphis hub, tracking 771234567890."


def event(i: int, *, call: bool, results: int) -> IterationEvent:
    calls = (ToolCall(id=f"c{i}", name="get_shipment_status", arguments='{"orderId":"12345"}'),) if call else ()
    seen = tuple(
        Observation(tool_call_id=f"c{i - 1}", tool_name="get_shipment_status", text=RESULT) for _ in range(results)
    )
    return IterationEvent(
        run_id="r", index=i, tool_calls=calls, observations=seen, text=None if call else "done", total_tokens=10
    )


def test_each_line_shows_the_gain_of_its_own_calls_results():
    events = [event(1, call=True, results=0), event(2, call=True, results=1), event(3, call=False, results=1)]
    session = Policy().new_run("r")
    for e in events:
        session.observe(e)
    record = RunRecord(start=RunStart(run_id="r"), events=events, end=RunEnd(run_id="r", outcome="succeeded"))
    lines = describe_run(RunResult(record=record, gains=tuple(session.gains))).splitlines()
    first = next(line for line in lines if line.startswith("  #1"))
    second = next(line for line in lines if line.startswith("  #2"))
    third = next(line for line in lines if line.startswith("  #3"))
    assert first.startswith("  #1 gain=1.00: get_shipment_status")  # its result was all new
    assert second.startswith("  #2 gain=0.00: get_shipment_status")  # the identical repeat brought nothing
    assert third.startswith("  #3: answered")  # an answer asks for no result
