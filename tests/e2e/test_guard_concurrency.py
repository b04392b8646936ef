"""Many guarded runs on parallel threads in one JVM: every run's trace complete and its own."""

from __future__ import annotations

from pyguard.base.events import Outcome
from pyguard.jvm import load_scenario
from pyguard.live.guard import Guard
from pyguard.trace import read_trace

SCENARIOS = ["logistics_incident", "convergent", "polling", "pagination", "oscillating", "divergent"]


def test_64_parallel_runs_keep_their_own_events_budgets_and_traces(jvm, tmp_path):
    guard = Guard(trace_dir=tmp_path)
    jobs = []
    for i in range(64):
        name = SCENARIOS[i % len(SCENARIOS)]
        jobs.append(lambda g, name=name, i=i: g.run_scenario(name, "task", seed=i, run_id=f"run-{i:02d}-{name}"))
    results = guard.run_many(jobs, threads=64)

    assert [r.run_id for r in results] == [f"run-{i:02d}-{SCENARIOS[i % len(SCENARIOS)]}" for i in range(64)]
    for r in results:
        events = r.record.events
        assert {e.run_id for e in events} == {r.run_id}
        assert [e.index for e in events] == list(range(1, len(events) + 1))
        assert len(r.decisions) == len(events)
        assert r.outcome in set(Outcome)
        # the trace on disk is this run, whole
        [run] = read_trace(r.trace_path).runs
        assert run.complete and run.record.run_id == r.run_id
        assert run.record.events == events
        assert run.record.end.outcome is r.outcome

    # Each scenario behaves as it does alone: the same seed gives the same run on a quiet thread.
    alone = Guard().run_scenario(load_scenario("logistics_incident"), "task", seed=0, run_id="alone")
    assert alone.model_calls == results[0].model_calls
    assert alone.outcome is results[0].outcome
