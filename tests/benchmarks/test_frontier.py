"""The frontier benchmark: its workload generator (no JVM), LangChain4j's round-trip cap semantics and the quick
suite's JSON (JVM). No timing assertions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
for p in (str(BENCH), str(BENCH.parent)):
    if p not in sys.path:
        sys.path.insert(0, p)

import workload as wl  # noqa: E402


# ---- workload (no JVM) --------------------------------------------------------------------------------------------


def test_workload_is_seeded_and_follows_its_mix():
    spec = wl.WorkloadSpec(n_tasks=200, seed=7)
    a, b = wl.generate(spec), wl.generate(spec)
    assert [t.model_dump() for t in a] == [t.model_dump() for t in b]
    other = wl.generate(wl.WorkloadSpec(n_tasks=200, seed=8))
    assert [t.scenario for t in a] != [t.scenario for t in other]
    counts = wl.describe(spec, a)["counts"]
    assert sum(counts.values()) == 200
    for kind, share in spec.mix.items():
        assert counts[kind.value] == round(share * 200)
    assert len({t.expected for t in a}) == 200


def test_every_task_knows_its_answer_and_only_loops_recover_with_it():
    for t in wl.generate(wl.WorkloadSpec(n_tasks=120, seed=3)):
        sc = t.scenario
        tool_text = json.dumps(sc["tools"])
        assert t.expected not in tool_text, "a tool result must not hand out the answer key"
        recovery = sc["on_reflection"]["answer"]
        if t.looping:
            assert t.expected in recovery and t.answer_at is None and t.loop_from_call >= 1
            assert 0 <= sc["loop_from"] < len(sc["turns"])
        else:
            assert t.expected not in recovery and t.answer_at >= 2 and t.loop_from_call is None
            assert t.expected in json.dumps(sc["turns"])


def test_converging_tasks_have_a_long_tail():
    tasks = wl.generate(wl.WorkloadSpec(n_tasks=1000))
    calls = wl.describe(wl.WorkloadSpec(n_tasks=1000), tasks)["legitimate_answer_call"]
    assert 4 <= calls["median"] <= 7
    assert calls["max"] > 20 and calls["share_over_20"] > 0.01


def test_no_recovery_keeps_the_tasks_and_zeroes_recovery():
    tasks = wl.generate(wl.WorkloadSpec(n_tasks=30))
    never = wl.no_recovery(tasks)
    assert [t.id for t in never] == [t.id for t in tasks]
    assert all(t.scenario["on_reflection"]["recover_probability"] == 0.0 for t in never)
    assert all(t.scenario["on_reflection"]["recover_probability"] == 0.6 for t in tasks)
    assert [t.scenario["turns"] for t in never] == [t.scenario["turns"] for t in tasks]


def test_success_needs_the_key_and_a_succeeded_outcome():
    t = wl.generate(wl.WorkloadSpec(n_tasks=5))[0]
    assert wl.is_success(t, "succeeded", f"the answer is {t.expected}.")
    assert not wl.is_success(t, "succeeded", "a premature answer")
    assert not wl.is_success(t, "stalled", f"salvaged {t.expected}")
    assert not wl.is_success(t, "succeeded", None)


def test_bad_mix_is_a_config_error():
    from pyguard.errors import ConfigError

    with pytest.raises(ConfigError, match="sum"):
        wl.WorkloadSpec(mix={wl.TaskKind.CONVERGE: 0.5})


# ---- JVM ----------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def jvm():
    from pyguard.jvm import start_jvm

    return start_jvm()


def _steps(k: int) -> dict:
    tools = [{"name": "lookup", "description": "d", "parameters": {"q": "string"}, "results": ["result {call} of lookup"]}]
    turns = ([{"tool_calls": [{"name": "lookup", "arguments": {"q": "x{turn}"}}], "repeat": k}] if k else []) + [{"answer": "done"}]
    return {"name": f"steps{k}", "seed": 1, "tools": tools, "turns": turns}


@pytest.mark.jvm
@pytest.mark.parametrize("cap", [1, 3, 5])
def test_static_cap_means_answer_by_model_call_n(jvm, cap):
    """maxToolCallingRoundTrips(N): a task answering at model call N succeeds; one answering at N+1 does not, although
    LangChain4j made that call (its answer is discarded): a capped run costs N+1 model calls."""
    from pyguard.guard import run_unguarded
    from pyguard.jvm import scripted_model

    fits = run_unguarded("aiservices", scripted_model(_steps(cap - 1)), "t", max_tool_calling_round_trips=cap)
    assert fits.outcome.value == "succeeded" and fits.model_calls == cap and fits.answer == "done"
    over = run_unguarded("aiservices", scripted_model(_steps(cap)), "t", max_tool_calling_round_trips=cap)
    assert over.model_calls == cap + 1 and over.tool_calls == cap
    assert over.outcome.value == "expired"  # even though call N+1 answered: LangChain4j discarded it
    looping = run_unguarded("aiservices", scripted_model(_steps(cap + 10)), "t", max_tool_calling_round_trips=cap)
    assert looping.model_calls == cap + 1
    assert looping.outcome.value == "expired"


@pytest.mark.jvm
def test_quick_suite_runs_and_its_json_is_well_formed(jvm, tmp_path):
    from suites import frontier

    result = frontier.run(quick=True)
    n = frontier.QUICK_TASKS
    text = json.dumps(result)
    back = json.loads(text)
    names = [p["name"] for p in back["policies"]]
    assert names == list(frontier.POLICY_NAMES)
    assert back["n_tasks"] == n
    for p in back["policies"]:
        assert 0.0 <= p["success_rate"] <= 1.0
        assert sum(p["outcomes"].values()) == n
        assert p["total_tokens"] > 0
        assert p["mean_model_calls"] >= 1 and p["p95_model_calls"] >= 1
        assert set(p["outcomes"]) <= {"succeeded", "failed", "expired", "stalled", "escalated", "cancelled", "guard_error"}
        assert p["success_rate"] <= p["outcomes"].get("succeeded", 0) / n + 1e-4
    static = {p["name"]: p for p in back["policies"]}
    # a larger cap never finishes fewer tasks, and LangChain4j's default finishes every legitimate one
    rates = [static[f"static-{n}"]["success_rate"] for n in frontier.STATIC_CAPS]
    assert rates == sorted(rates)
    legit = sum(back["workload"]["counts"][k.value] for k in wl.LEGITIMATE)
    assert static["langchain4j-default"]["success_rate"] == pytest.approx(legit / n, abs=1e-4)
    assert set(back["targets"]) >= {"best_static", "tokens_vs_static_10", "success_at_least_best_static"}
    assert "plot" not in back
    png = frontier.plot(back, tmp_path / "frontier.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
