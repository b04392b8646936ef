"""Many runs on many threads in one JVM never mix events, counters or stops."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from jvm_support import stop_at

from pyguard.jvm import run_agent, scripted_model


def test_parallel_runs_keep_their_own_events_and_counts(jvm):
    shared_model = scripted_model("logistics_incident", seed=0)  # one model instance serving every run
    n = 48

    def one(i: int):
        style = ("aiservices", "agentic", "executor")[i % 3]
        stop = 2 + i % 5  # each run stops at its own iteration
        return (
            i,
            stop,
            run_agent(style, shared_model, f"task {i}", callback=stop_at(stop, rule=f"r{i}"), run_id=f"run-{i}"),
        )

    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(one, range(n)))
    for i, stop, r in results:
        assert r.run_id == f"run-{i}" and r.status == "stopped" and r.rule == f"r{i}"
        assert [e.index for e in r.events] == list(range(1, stop + 1))
        assert {e.run_id for e in r.events} == {f"run-{i}"}
        assert r.stats.model_calls == r.stats.events == stop
        assert r.stats.tool_executions == stop - 1
    assert int(shared_model.calls()) == sum(stop for _, stop, _ in results)
