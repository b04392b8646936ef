"""A released callback adapter (the run has ended) lets go of its policy and refuses later events, loudly."""

from __future__ import annotations

import gc
import json
import weakref

import pytest

from pyguard.jvm.callback import CallbackAdapter


class _Policy:
    def __call__(self, event):
        return None


def test_release_drops_the_policy_keeps_the_record_and_refuses_later_events() -> None:
    policy = _Policy()
    adapter = CallbackAdapter(policy)
    assert json.loads(adapter.on_iteration(json.dumps({"run_id": "r", "index": 1}))) == {"action": "continue"}
    gone = weakref.ref(policy)
    adapter.release()
    adapter.release()  # idempotent
    del policy
    gc.collect()
    assert gone() is None, "the adapter still holds the run's policy after release()"
    assert [e.index for e in adapter.events] == [1] and adapter.decisions == [None]
    with pytest.raises(RuntimeError, match="released when the run ended"):
        adapter.on_iteration(json.dumps({"run_id": "r", "index": 2}))
    assert adapter.errors and "released when the run ended" in adapter.errors[-1]
    with pytest.raises(RuntimeError, match="released"):
        adapter.java()  # no new Java proxy for a finished run


def test_results_are_judged_by_the_results_function_and_refused_when_malformed():
    from pyguard.base.decisions import Action, Decision
    from pyguard.base.events import Outcome
    from pyguard.jvm.callback import CallbackAdapter

    seen = []

    def judge(index, observations):
        seen.append((index, [o.text for o in observations]))
        return Decision(action=Action.STOP, outcome=Outcome.STALLED, rule="r", reason="why")

    adapter = CallbackAdapter(lambda e: None, results_fn=judge)
    reply = adapter.on_results('{"run_id": "r1", "index": 2, "observations": [{"kind": "tool", "text": "same"}]}')
    assert seen == [(2, ["same"])] and '"action": "stop"' in reply and '"outcome": "stalled"' in reply
    with pytest.raises(ValueError):
        adapter.on_results('{"run_id": "r1", "index": 0, "observations": []}')
    assert adapter.errors and "index" in adapter.errors[-1]
    assert CallbackAdapter(lambda e: None).on_results('{"run_id": "r1", "index": 1, "observations": []}') is None
    adapter.release()
    assert adapter.on_results('{"run_id": "r1", "index": 3, "observations": []}') is None
