"""The bridge's Python lane (``dev.pyguard.bridge.PythonLane``) with real Python callbacks through JPype: a callback
that raises or is interrupted leaves it free, and a guarded run inside a callback (same thread) keeps its place."""

from __future__ import annotations

import pytest
from jvm_support import stop_at

from pyguard.base.events import Outcome
from pyguard.jvm import run_agent, scripted_model


@pytest.fixture
def lane(J):
    """A lane of width 1 as the JVM's shared one for the test (patience 2 s: a lost place shows as a bypass)."""
    lane_class = J("PythonLane")
    before = lane_class.shared()
    lane = lane_class(1, 2000)
    lane_class.setShared(lane)
    try:
        yield lane
    finally:
        lane_class.setShared(before)


def test_a_raising_callback_leaves_the_lane_free(lane):
    def broken(event):
        raise ValueError("policy broke")

    r = run_agent("executor", scripted_model("convergent", seed=0), "task", callback=broken, max_model_calls=3)
    assert r.outcome == "guard_error" and r.stats.callback_failures == 3
    assert int(lane.inside()) == 0 and int(lane.entered()) == 3
    ok = run_agent("executor", scripted_model("convergent", seed=0), "task", callback=stop_at(2))
    assert ok.outcome == "stalled" and int(lane.entered()) == 5 and int(lane.bypassed()) == 0


def test_an_interrupted_callback_leaves_the_lane_free(lane):
    def interrupted(event):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_agent("executor", scripted_model("convergent", seed=0), "task", callback=interrupted)
    assert int(lane.inside()) == 0 and int(lane.entered()) == 1 and int(lane.bypassed()) == 0


def test_a_guarded_run_inside_a_callback_keeps_its_place(lane):
    inner_results = []

    def outer(event):
        if event.index == 1:  # a sub-agent run, guarded, on this thread, while the outer callback is in the lane
            inner_results.append(
                run_agent("executor", scripted_model("convergent", seed=0), "inner", callback=stop_at(2), run_id="in")
            )
        return None

    r = run_agent("executor", scripted_model("convergent", seed=0), "outer", callback=outer, run_id="out")
    assert r.outcome != Outcome.GUARD_ERROR and r.stats.callback_failures == 0
    (inner,) = inner_results
    assert inner.outcome == "stalled" and [e.index for e in inner.events] == [1, 2]
    assert int(lane.bypassed()) == 0, "the inner run's callbacks must not wait for the outer one's place"
    assert int(lane.entered()) == r.stats.events and int(lane.inside()) == 0


def test_the_deadline_mode_goes_through_the_lane_on_its_pool_thread(lane):
    r = run_agent(
        "executor", scripted_model("convergent", seed=0), "task", callback=stop_at(3), callback_timeout_ms=60_000
    )
    assert r.outcome == "stalled" and r.stats.callback_failures == 0 and [e.index for e in r.events] == [1, 2, 3]
    assert int(lane.entered()) == 3 and int(lane.bypassed()) == 0 and int(lane.inside()) == 0
