"""Issue 22's principle: a stop needs evidence that the run's state repeats, judged over the whole cycle.

A cleanup repeated exactly between attempts with new content is progress; futility (attempts leaving a check's output
unchanged) earns a reflection, never a stop by itself; a wait between identical reads, or a read that says "pending",
makes them polls; a second signal that is the reflected evidence repeated stops sooner, and a stop says which signal
it was (``evidence["signal"]``)."""

from __future__ import annotations

import json

import pytest
from engine_support import Script

from pyguard.base.decisions import Action
from pyguard.engine import Policy, PolicyConfig, StallConfig
from pyguard.engine.waits import is_pending_result, is_wait


def run(steps, config: PolicyConfig | None = None):
    s = Policy(config or PolicyConfig()).new_run("r1")
    ds = []
    for e in steps:
        ds.append(s.observe(e))
        if ds[-1].stops:
            break
    return s, ds


def rules(ds):
    return [(d.iteration, d.rule) for d in ds if d.rule]


def test_a_cleanup_repeated_between_attempts_with_new_content_is_progress():
    """create -> "already exists" -> rm -> create with new content -> run: the rm repeats exactly every cycle."""
    sc = Script()
    steps = []
    for k in range(5):
        body = f"print({k} * 'x')  # attempt {k}"
        steps.append(sc.step(("bash", {"command": "rm /testbed/repro.py"}, "")))
        steps.append(
            sc.step(
                (
                    "str_replace_editor",
                    {"command": "create", "path": "/testbed/repro.py", "file_text": body},
                    "File created successfully at: /testbed/repro.py",
                )
            )
        )
        steps.append(sc.step(("bash", {"command": "python /testbed/repro.py"}, f"Traceback: ValueError {k}")))
    _, ds = run(steps, PolicyConfig(base_budget=40))
    assert rules(ds) == []
    # without the principle, the third exact rm with the same (empty) output was a repeat after other actions
    _, old = run(steps, PolicyConfig(base_budget=40, stall=StallConfig(cycle_progress=False)))
    assert any(rule == "repeat_no_gain" for _, rule in rules(old))


def test_a_cycle_whose_every_result_repeats_is_still_a_stall():
    sc = Script()
    steps = [
        sc.step((t, {"sku": "A1"}, f"{t}: 4 in stock, unchanged")) for t in ["inv", "price", "inv", "price", "inv"]
    ]
    _, ds = run(steps)
    assert rules(ds)[0] == (5, "cycle")


def test_results_taking_turns_bring_nothing_new():
    """A/B/A/B outputs of one toggling write are not new content: the toggle is caught."""
    sc = Script()
    steps = [
        sc.step(("set_filter", {"value": v}, f"filter {v}: {'12 rows' if v == 'a' else '40 rows'}"))
        for v in ["a", "b"] * 5
    ]
    _, ds = run(steps, PolicyConfig(base_budget=40))
    assert ds[-1].stops or any(d.action is Action.REFLECT for d in ds)


def attempts_then_same_check(n: int) -> list:
    """n different edits, each followed by the same check printing the same output."""
    sc = Script()
    steps = []
    for k in range(n):
        steps.append(
            sc.step(
                (
                    "str_replace_editor",
                    {"command": "str_replace", "path": "a.py", "old_str": f"v{k}", "new_str": f"v{k + 1}"},
                    "The file a.py has been edited.",
                )
            )
        )
        steps.append(sc.step(("bash", {"command": "python reproduce.py"}, "AssertionError: expected 3, got 2")))
    return steps


def test_futility_earns_a_reflection_never_a_stop_by_itself():
    config = PolicyConfig(base_budget=60, stall=StallConfig(max_fruitless_attempts=3, low_gain_streak=50))
    _, ds = run(attempts_then_same_check(10), config)
    assert [d.rule for d in ds if d.action is Action.REFLECT] == ["fruitless_attempts"]
    assert not any(d.stops for d in ds)
    flag = next(d for d in ds if d.action is Action.REFLECT).evidence["flags"][0]
    assert flag["stops"] is False
    # when asked to, futility stops as before
    strict = config.model_copy(update={"stall": config.stall.model_copy(update={"futility_stops": True})})
    _, ds = run(attempts_then_same_check(10), strict)
    assert ds[-1].stops and ds[-1].rule == "fruitless_attempts"


@pytest.mark.parametrize(
    "wait_call",
    [
        ("sleep", {"seconds": 10}, "ok"),
        ("wait_for", {"seconds": 5}, "waited"),
        ("bash", {"command": "sleep 30"}, ""),
    ],
)
def test_a_wait_between_identical_reads_makes_them_polls(wait_call):
    sc = Script()
    status = json.dumps({"job_id": "J-1", "state": "ACTIVE", "shards": 4})
    steps = []
    for _ in range(7):
        steps.append(sc.step(("get_job_status", {"job_id": "J-1"}, status)))
        steps.append(sc.step(wait_call))
    steps.append(sc.step(("get_job_status", {"job_id": "J-1"}, json.dumps({"job_id": "J-1", "state": "COMPLETE"}))))
    steps.append(sc.answer("complete"))
    s, ds = run(steps)
    assert rules(ds) == [] and s.finish().outcome.value == "succeeded"
    # the same reads with nothing in between are a repeated state
    sc = Script()
    _, ds = run([sc.step(("get_job_status", {"job_id": "J-1"}, status)) for _ in range(4)])
    assert rules(ds)[0] == (3, "repeat_no_gain")


def test_a_named_wait_tool_from_the_config():
    assert not is_wait("hold_on", "{}")
    assert is_wait("hold_on", "{}", ["hold_on"])


@pytest.mark.parametrize(
    "tool, arguments, waits",
    [
        ("sleep", "{}", True),
        ("time_sleep", '{"s": 1}', True),
        ("waitForJob", '{"id": 1}', True),
        ("get_status", '{"wait_seconds": 10}', True),
        ("get_status", '{"timeout": 0}', False),
        ("get_status", '{"job": "sleep 5"}', False),
        ("bash", '{"command": "make && sleep 2"}', True),
        ("bash", '{"command": "grep sleep src/*.py"}', False),
        ("run", "sleep 3; cat out.log", True),
        ("search", '{"q": "await"}', False),
    ],
)
def test_is_wait(tool, arguments, waits):
    assert is_wait(tool, arguments) is waits


@pytest.mark.parametrize(
    "text, pending",
    [
        ('{"status": "PENDING"}', True),
        ("Job 7 is still running.", True),
        ("queued (position 3)", True),
        ('{"status": "DONE"}', False),
        ("Traceback: ValueError", False),
        ("The service is running normally. " * 20, False),  # long content that mentions running is not a status
    ],
)
def test_is_pending_result(text, pending):
    assert is_pending_result(text) is pending


def test_a_repeated_second_signal_stops_sooner_and_says_so():
    sc = Script()
    steps = [sc.step(("gss", {"id": 1}, "shipment 1: in transit")) for _ in range(6)]
    quiet = PolicyConfig(stop_on_fruitless_retry=False)
    _, ds = run(steps, quiet)
    assert [d.action.value for d in ds] == ["continue", "continue", "reflect", "stop"]
    stop = ds[-1]
    assert stop.evidence["signal"] == {
        "kind": "second",
        "reflected_at": 3,
        "reflected_rules": ["repeat_no_gain"],
        "same_evidence": True,
    }
    assert stop.evidence["flags"][0]["repeated_evidence"] is True
    # without it, the stop waits for the result of the call the model asked for after the reflection
    _, later = run(steps, quiet.model_copy(update={"stop_on_repeated_evidence": False}))
    assert [d.action.value for d in later] == ["continue", "continue", "reflect", "continue", "stop"]
    assert later[-1].evidence["signal"]["same_evidence"] is True


def test_a_new_second_signal_is_told_apart_and_a_first_signal_stop_too():
    sc = Script()
    steps = [sc.step(("gss", {"id": 1}, "shipment 1: in transit")) for _ in range(3)]
    steps += [sc.step(("track", {"id": k}, "No matching records found.")) for k in range(2, 9)]
    _, ds = run(steps)
    stop = ds[-1]
    assert stop.stops and stop.rule == "low_gain_streak"
    assert stop.evidence["signal"]["kind"] == "second" and stop.evidence["signal"]["same_evidence"] is False
    sc = Script()
    _, ds = run([sc.step(("gss", {"id": 1}, "same")) for _ in range(4)], PolicyConfig(max_reflections=0))
    assert ds[-1].stops and ds[-1].evidence["signal"] == {"kind": "first"}


def test_a_reworded_request_after_a_same_answer_reflection_is_judged_by_its_result():
    """Rewording is a new action, not the same state: the call after the reflection does not stop on it."""
    sc = Script()
    queries = ["Scat", "Scatman", "Scat singer", "Scat man John", "John Larkin", "Scatman John"]
    steps = [sc.step(("search", {"q": q}, f"Could not find [{q}]. Similar: ['Jazz', 'Vocal']")) for q in queries[:5]]
    steps.append(
        sc.step(("search", {"q": queries[5]}, "Scatman John (born John Paul Larkin) was an American musician."))
    )
    steps.append(sc.answer("Born in El Monte, California."))
    _, ds = run(steps)
    reflect = next(i for i, d in enumerate(ds) if d.action is Action.REFLECT)
    assert not ds[reflect + 1].stops
