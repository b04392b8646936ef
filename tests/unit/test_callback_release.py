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
