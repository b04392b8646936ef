"""A finished run's Python state is freed at once (issue 16): JPype keeps the Python proxy of a Java callback alive
for as long as the Java object holding it lives, so without releasing the run's callback its session, events and
``GuardedRun`` stayed alive until the JVM's next collection, or for ever through a cycle Python -> Java -> Python.
And a run's set-up is one call into Java for the guarded model and one for the agent."""

from __future__ import annotations

import gc
import json
import time
import weakref

import pytest

from pyguard.base.ending import Ending
from pyguard.base.errors import RunError
from pyguard.engine import Policy, PolicyConfig
from pyguard.jvm import build_agent, guard_model, run_built, scripted_model
from pyguard.live.guard import Guard, GuardedRun


def test_run_built_frees_the_runs_python_state_while_java_still_holds_the_guarded_model(jvm):
    policy = Policy(PolicyConfig(), clock=time.monotonic)
    session = policy.new_run("freed", None)
    guarded = guard_model(scripted_model("convergent"), session.observe, run_id="freed")
    java = guarded.java  # the Java guarded model (and through it the callback proxy) stays reachable
    res = run_built(build_agent("aiservices", guarded), "Where is order 34567?", guarded)
    assert res.status is Ending.ANSWERED and len(res.events) == 4
    dead_adapter = weakref.ref(guarded.callback)
    dead_session = weakref.ref(session)
    del guarded, session, res
    gc.collect()
    assert dead_adapter() is None, "the callback adapter outlived its run"
    assert dead_session() is None, "the engine session outlived its run"
    assert str(java.runId()) == "freed"


def test_a_guard_run_is_freed_once_its_result_is_dropped(jvm):
    guard = Guard()
    model = scripted_model("logistics_incident")
    for style in ("executor", "aiservices"):
        result = guard.run(style, model, "Where is order 12345?")
        assert result.outcome is not None
        del result
    gc.collect()
    alive = [o for o in gc.get_objects() if isinstance(o, GuardedRun) and o.guard is guard]
    assert alive == [], f"{len(alive)} finished GuardedRun(s) still alive (a cycle through the Java callback)"


def test_a_model_call_after_the_runs_end_is_a_counted_callback_failure(jvm):
    guarded = guard_model(scripted_model("convergent"), lambda e: None, run_id="after", max_model_calls=20)
    agent = build_agent("aiservices", guarded)
    first = run_built(agent, "Where is order 34567?", guarded)
    assert first.status is Ending.ANSWERED and first.stats is not None and first.stats.callback_failures == 0
    again = json.loads(str(agent.runJson("Where is order 34567?")))
    stats = again["stats"]
    assert stats["callback_failures"] == stats["events"] - first.stats.events > 0
    assert "released when the run ended" in stats["last_callback_error"]


def test_reusing_a_released_guarded_model_from_python_is_refused_before_it_runs_unguarded(jvm):
    guarded = guard_model(scripted_model("convergent"), lambda e: None, run_id="once")
    agent = build_agent("aiservices", guarded)
    run_built(agent, "Where is order 34567?", guarded)
    with pytest.raises(RunError, match=r"run_built: the guarded model of run 'once' was released.*guard_model"):
        run_built(agent, "Where is order 34567?", guarded)
    with pytest.raises(RunError, match=r"build_agent: .*'once'"):
        build_agent("executor", guarded)
    assert guarded.stats().events == 4  # nothing ran after the release


def test_the_default_tools_are_the_scripted_models_own_and_fresh(J):
    ToolSet = J("ToolSet")
    model = scripted_model("convergent")  # the logistics tools: a @Tool object, made afresh per run
    guarded = guard_model(model, None, run_id="tools", observe_only=True)
    a, b = ToolSet.ownedBy(model), ToolSet.ownedBy(guarded.java)
    assert list(a.names()) == list(b.names()) == list(model.newTools().names()) and len(list(a.names())) > 0
    assert a.objects().size() == 1 and not a.objects().get(0).equals(b.objects().get(0))  # no state shared by runs
    assert ToolSet.ownedBy(J("BridgeProbe")).isEmpty()  # a model with no tools of its own brings none
