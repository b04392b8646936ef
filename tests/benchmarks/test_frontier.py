"""The frontier benchmark: its workload generator (no JVM), LangChain4j's round-trip cap semantics and the quick
suite's JSON (JVM). No timing assertions."""

from __future__ import annotations

import functools
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
        assert abs(counts[kind.value] - share * 200) < 1
    keys = [k for t in a for k in t.keys]
    assert len(set(keys)) == len(keys)


def test_families_pair_legitimate_and_looping_kinds():
    assert sorted(k for kinds in wl.FAMILIES.values() for k in kinds) == sorted(wl.TaskKind)
    for family, kinds in wl.FAMILIES.items():
        if family == "waiting":  # issues 22 and 30's scripted kinds, in their own workload; one of them a loop
            assert all(k not in wl.DEFAULT_MIX for k in kinds)
            assert [k for k in kinds if k in wl.LOOPING] == [wl.TaskKind.AB_OSCILLATION]
            assert set(wl.WAITING_MIX) == set(kinds)
            continue
        assert any(k in wl.LEGITIMATE for k in kinds) and any(k in wl.LOOPING for k in kinds), family
        assert all(wl.DEFAULT_MIX[k] > 0 for k in kinds)
    assert sum(wl.DEFAULT_MIX.get(k, 0) for k in wl.LEGITIMATE) == pytest.approx(0.70)


def _reflections(sc: dict) -> list[dict]:
    return [sc["on_reflection"]] if "on_reflection" in sc else [s["on_reflection"] for s in sc["conversation"]]


def test_every_task_knows_its_answers_and_only_loops_recover_with_them():
    for t in _tasks(800, 11):
        sc = t.scenario
        assert t.family == wl.family_of(t.kind)
        assert not any(k in json.dumps(sc["tools"]) for k in t.keys), "a tool result must not hand out an answer key"
        recoveries = [r["answer"] for r in _reflections(sc)]
        if t.looping:
            assert t.answer_at is None and t.loop_from_call >= 1 and t.oracle is not None
            assert sum(any(k in r for k in t.keys) for r in recoveries) == 1, (
                "one looping message recovers with its key"
            )
            holder = sc if "turns" in sc else next(s for s in sc["conversation"] if "loop_from" in s)
            assert 0 <= holder["loop_from"] < len(holder["turns"])
        else:
            assert not any(k in r for r in recoveries for k in t.keys) and t.answer_at >= 2 and t.loop_from_call is None
            assert t.oracle is None
            assert all(k in json.dumps(sc.get("turns", sc.get("conversation"))) for k in t.keys)
        assert len(t.user_turns) == len(t.keys) == (len(sc["conversation"]) if "conversation" in sc else 1)


def test_converging_tasks_have_a_long_tail():
    tasks = list(_tasks(800, 11))
    calls = wl.describe(wl.WorkloadSpec(n_tasks=800, seed=11), tasks)["legitimate_answer_call"]
    assert 4 <= calls["median"] <= 9
    assert calls["max"] > 40 and calls["share_over_40"] > 0.03  # long productive work past 40 calls


def test_the_draw_averaged_figures_weigh_always_and_never_by_the_recover_probability():
    from suites.frontier import draw_averaged

    def row(kind, fam, ok, tokens, reflections=()):
        return {"kind": kind, "family": fam, "success": ok, "total_tokens": tokens, "reflections": list(reflections)}

    # a loop recovered only when the agent reacts; a legitimate task lost only when it does (a false reflection)
    always = [row("oscillate", "classic", True, 300, [3]), row("rephrase_found", "rephrase", False, 200, [4])]
    never = [row("oscillate", "classic", False, 500, [3]), row("rephrase_found", "rephrase", True, 400, [4, 6])]
    floor = {"total": 600, "by_family": {"classic": 200, "rephrase": 400}}
    avg = draw_averaged(always, never, 0.6, floor)
    assert avg["success_rate"] == pytest.approx((0.6 + 0.4) / 2)
    assert avg["legitimate_success_rate"] == pytest.approx(0.4)
    assert avg["total_tokens"] == round(0.6 * 500 + 0.4 * 900)
    assert avg["vs_oracle_floor"] == pytest.approx(660 / 600, abs=1e-4)
    assert avg["by_family"]["classic"] == {"success": 0.6, "tokens": 380, "vs_oracle_floor": 1.9}
    assert avg["tasks_with_several_reflections"] == 1


def test_with_recovery_sets_every_reflection_and_checks_its_probability():
    tasks = wl.generate(wl.WorkloadSpec(n_tasks=40))
    always = wl.with_recovery(tasks, 1.0)
    assert all(r["recover_probability"] == 1.0 for t in always for r in _reflections(t.scenario))
    assert all(r["recover_probability"] == 0.6 for t in tasks for r in _reflections(t.scenario))  # untouched
    with pytest.raises(wl.ConfigError, match="1.5"):
        wl.with_recovery(tasks, 1.5)


def test_no_recovery_keeps_the_tasks_and_zeroes_recovery():
    tasks = wl.generate(wl.WorkloadSpec(n_tasks=60))
    never = wl.no_recovery(tasks)
    assert [t.id for t in never] == [t.id for t in tasks]
    assert all(r["recover_probability"] == 0.0 for t in never for r in _reflections(t.scenario))
    assert all(r["recover_probability"] == 0.6 for t in tasks for r in _reflections(t.scenario))
    assert [t.scenario.get("turns") for t in never] == [t.scenario.get("turns") for t in tasks]


# ---- the families of issue 10, checked on their scenarios (no JVM) -------------------------------------------------


@functools.lru_cache(maxsize=4)
def _tasks(n: int, seed: int) -> tuple:
    return tuple(wl.generate(wl.WorkloadSpec(n_tasks=n, seed=seed)))


def _of(kind: str, n: int = 800, seed: int = 11) -> list:
    if wl.TaskKind(kind) in wl.WAITING_MIX:
        return [t for t in wl.generate(wl.WorkloadSpec(n_tasks=10, seed=seed, mix=wl.WAITING_MIX)) if t.kind == kind]
    return [t for t in _tasks(n, seed) if t.kind.value == kind]


def _calls(t) -> list[dict]:
    return [c for turn in t.scenario["turns"] for c in turn.get("tool_calls", []) for _ in range(turn.get("repeat", 1))]


def test_conversations_have_three_to_six_messages_each_a_few_calls():
    for t in _of("conversation") + _of("conversation_loop"):
        segs = t.scenario["conversation"]
        assert 3 <= len(segs) <= 6
        for seg, key in zip(segs, t.keys, strict=False):
            calls = [x for x in seg["turns"] if "tool_calls" in x]
            assert 1 <= len(calls) <= 4 + ("loop_from" in seg)
            if "loop_from" not in seg:
                assert key in seg["turns"][-1]["answer"]
        assert sum("loop_from" in s for s in segs) == (1 if t.looping else 0)


def test_edit_rerun_makes_a_new_edit_each_time_and_the_same_failure_comes_back():
    for t in _of("edit_rerun"):
        edits = [c["arguments"]["new_str"] for c in _calls(t) if c["arguments"].get("command") == "str_replace"]
        assert 3 <= len(edits) <= 5 and len(set(edits)) == len(edits)
        bash = next(x for x in t.scenario["tools"] if x["name"] == "bash")
        fix = bash["cases"][0]["when_state"]["content"]
        assert edits[-1] == fix and fix not in edits[:-1]  # the 3rd-5th attempt is the one that passes
    for t in _of("edit_loop"):
        edits = [
            (c["arguments"]["old_str"], c["arguments"]["new_str"])
            for c in _calls(t)
            if c["arguments"].get("command") == "str_replace"
        ]
        news = [new for _, new in edits]
        assert len(set(news)) < len(news) or edits[0][0] in news, edits  # an edit re-applied, or the original restored
        assert t.scenario["on_reflection"]["try_first"], "after a reflection it tries a new edit first"


def test_rephrased_lookups_echo_the_query_and_suggest_names():
    for t in _of("rephrase_found") + _of("rephrase_loop"):
        search = next(x for x in t.scenario["tools"] if x["name"] == "search")
        misses = search["cases"][-1].get("results") or search["cases"][-1]["errors"]
        assert all(m.startswith("Could not find [{arg:query}]. Similar: [") for m in misses)
        queries = [c["arguments"]["query"] for c in _calls(t) if c["name"] == "search"]
        assert len(set(queries)) >= 2
        if t.kind.value == "rephrase_found":
            assert 3 <= len(queries) <= 6 and search["cases"][0]["when"]["query"] == queries[-1]


def test_polls_differ_only_in_volatile_fields_until_the_job_finishes():
    volatile = {"checked_at", "request_id", "elapsed_ms"}
    for t in _of("poll_volatile") + _of("poll_stuck"):
        status = next(x for x in t.scenario["tools"] if x["name"] == "get_job_status")
        seq = [json.loads(r) for r in status["cases"][0]["results"]]
        pending = [{k: v for k, v in s.items() if k not in volatile} for s in seq if s["status"] == "PENDING"]
        assert len(pending) >= 1 and all(p == pending[0] for p in pending)
        assert len({s["checked_at"] for s in seq}) == len(seq)
        if t.kind.value == "poll_volatile":
            assert seq[-1]["status"] == "SUCCEEDED" and t.answer_at == len(seq) + 2
        else:
            assert all(s["status"] == "PENDING" for s in seq)


def _new_share(prev: str, page: str) -> float:
    old = set(prev.splitlines())
    return sum(len(x) + 1 for x in page.splitlines() if x not in old) / len(page)


def test_large_pages_are_10_kb_with_a_modest_new_share():
    for t in _of("large_pages"):
        tool = t.scenario["tools"][0]
        pages = list(tool["by_argument"]["values"].values())
        assert all(9_500 <= len(p) <= 11_500 for p in pages)
        shares = [_new_share(a, b) for a, b in zip(pages, pages[1:], strict=False)]
        assert all(0.11 <= s <= 0.19 for s in shares), shares
    for t in _of("large_loop"):
        results = t.scenario["tools"][0]["results"]
        again = results[-1].replace("{call}", "9")
        assert _new_share(results[-2], again) < 0.02  # only the volatile footer changes


def test_long_work_is_44_to_60_distinct_productive_calls():
    for t in _of("long_work"):
        calls = [json.dumps(c, sort_keys=True) for c in _calls(t)]
        assert 44 <= len(calls) <= 60 and len(set(calls)) == len(calls) and t.answer_at == len(calls) + 1
    for t in _of("long_loop"):
        assert 20 <= t.loop_from_call - 1 <= 38


def test_success_needs_every_key_and_a_succeeded_outcome():
    t = next(t for t in wl.generate(wl.WorkloadSpec(n_tasks=20)) if len(t.keys) == 1)
    assert wl.is_success(t, "succeeded", f"the answer is {t.expected}.")
    assert not wl.is_success(t, "succeeded", "a premature answer")
    assert not wl.is_success(t, "stalled", f"salvaged {t.expected}")
    assert not wl.is_success(t, "succeeded", None)
    conv = _of("conversation")[0]
    answers = [f"reference {k}" for k in conv.keys]
    assert wl.is_success(conv, "succeeded", answers)
    assert not wl.is_success(conv, "succeeded", answers[:1] + ["Based on what I found so far: ..."] + answers[2:])


def test_bad_mix_is_a_config_error():
    from pyguard.base.errors import ConfigError

    with pytest.raises(ConfigError, match="sum"):
        wl.WorkloadSpec(mix={wl.TaskKind.CONVERGE: 0.5})


# ---- JVM ----------------------------------------------------------------------------------------------------------


def _steps(k: int) -> dict:
    tools = [
        {"name": "lookup", "description": "d", "parameters": {"q": "string"}, "results": ["result {call} of lookup"]}
    ]
    turns = ([{"tool_calls": [{"name": "lookup", "arguments": {"q": "x{turn}"}}], "repeat": k}] if k else []) + [
        {"answer": "done"}
    ]
    return {"name": f"steps{k}", "seed": 1, "tools": tools, "turns": turns}


@pytest.mark.jvm
@pytest.mark.parametrize("cap", [1, 3, 5])
def test_static_cap_means_answer_by_model_call_n(jvm, cap):
    """maxToolCallingRoundTrips(N): a task answering at model call N succeeds; one answering at N+1 does not, although
    LangChain4j made that call (its answer is discarded): a capped run costs N+1 model calls."""
    from pyguard.jvm import scripted_model
    from pyguard.live.guard import run_unguarded

    fits = run_unguarded("aiservices", scripted_model(_steps(cap - 1)), "t", max_tool_calling_round_trips=cap)
    assert fits.outcome.value == "succeeded" and fits.model_calls == cap and fits.answer == "done"
    over = run_unguarded("aiservices", scripted_model(_steps(cap)), "t", max_tool_calling_round_trips=cap)
    assert over.model_calls == cap + 1 and over.tool_calls == cap
    assert over.outcome.value == "expired"  # even though call N+1 answered: LangChain4j discarded it
    looping = run_unguarded("aiservices", scripted_model(_steps(cap + 10)), "t", max_tool_calling_round_trips=cap)
    assert looping.model_calls == cap + 1
    assert looping.outcome.value == "expired"


@pytest.mark.jvm
def test_every_kind_plays_as_generated_through_aiservices(jvm):
    """One task per kind, unguarded: a legitimate task answers at its answer_at with every key; a looping task's oracle
    answers where its loop starts (after what it tries on a reflection); the looping task itself never answers alone."""
    from suites.frontier import answers_of

    from pyguard.jvm import scripted_model
    from pyguard.live.guard import run_unguarded

    for kind in wl.TaskKind:
        t = _of(kind.value)[0]
        if not t.looping:
            r = run_unguarded("aiservices", scripted_model(t.scenario), t.task, max_tool_calling_round_trips=100)
            assert wl.is_success(t, r.outcome.value, answers_of(r)), (kind, r.outcome, r.answer)
            assert r.model_calls == t.answer_at, kind
            continue
        o = run_unguarded("aiservices", scripted_model(t.oracle), t.task, max_tool_calling_round_trips=100)
        assert wl.is_success(t, o.outcome.value, answers_of(o)), (kind, o.outcome, o.answer)
        tries = len(t.scenario.get("on_reflection", {}).get("try_first", []))
        if kind is not wl.TaskKind.CONVERSATION_LOOP:
            assert o.model_calls == t.loop_from_call + tries, kind
        r = run_unguarded("aiservices", scripted_model(t.scenario), t.task, max_tool_calling_round_trips=12)
        assert r.outcome.value == "expired" and not wl.is_success(t, r.outcome.value, answers_of(r)), kind


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
        assert set(p["outcomes"]) <= {
            "succeeded",
            "failed",
            "expired",
            "stalled",
            "escalated",
            "cancelled",
            "guard_error",
        }
        assert p["success_rate"] <= p["outcomes"].get("succeeded", 0) / n + 1e-4
    static = {p["name"]: p for p in back["policies"]}
    # a larger cap never finishes fewer tasks, and LangChain4j's default finishes every legitimate one
    rates = [static[f"static-{n}"]["success_rate"] for n in frontier.STATIC_CAPS]
    assert rates == sorted(rates)
    legit = sum(back["workload"]["counts"].get(k.value, 0) for k in wl.LEGITIMATE)
    assert static["langchain4j-default"]["success_rate"] == pytest.approx(legit / n, abs=1e-4)
    waiting = back["waiting"]
    assert set(waiting["by_kind"]) == {k.value for k in wl.WAITING_MIX}
    for e in waiting["by_kind"].values():
        assert set(e) == {"dynamic", "langchain4j-default"}
        assert all(0 <= x["succeeded"] <= x["tasks"] and 0 <= x["stopped"] <= x["tasks"] for x in e.values())
    assert sum(e["dynamic"]["tasks"] for e in waiting["by_kind"].values()) == waiting["tasks"]
    assert 0 <= waiting["legitimate_losses"] <= waiting["tasks"]
    assert set(back["targets"]) >= {
        "best_static",
        "tokens_vs_static_10",
        "success_at_least_best_static",
        "dynamic_vs_oracle_floor",
        "dynamic_within_1_10_of_oracle_floor",
    }
    floor = back["oracle_floor"]
    assert floor["oracle_runs"] == sum(back["workload"]["counts"][k.value] for k in wl.LOOPING)
    assert floor["oracle_runs_succeeded"] == floor["oracle_runs"]
    assert sum(floor["by_family"].values()) == floor["total"] == back["targets"]["oracle_floor_tokens"]
    assert set(back["by_family"]) == set(wl.FAMILIES) - {"waiting"}  # the waiting kinds run apart ("waiting")
    for fam, e in back["by_family"].items():
        assert 0 <= e["dynamic"]["success"] <= 1 and e["oracle_floor_tokens"] > 0
        assert e["langchain4j_default"]["tokens"] >= e["oracle_floor_tokens"] * 0.99, fam
    avg = back["dynamic_draw_averaged"]
    assert avg["recover_probability"] == wl.WorkloadSpec().recover_probability
    never = static["dynamic-no-recovery"]["success_rate"]
    assert min(never, avg["always_recovers_success_rate"]) - 1e-4 <= avg["success_rate"]
    assert avg["success_rate"] <= max(never, avg["always_recovers_success_rate"]) + 1e-4
    assert set(avg["by_family"]) <= set(wl.FAMILIES) and 0 <= avg["legitimate_success_rate"] <= 1
    assert back["targets"]["dynamic_draw_averaged_vs_oracle_floor"] == avg["vs_oracle_floor"] > 0
    assert "plot" not in back
    png = frontier.plot(back, tmp_path / "frontier.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
