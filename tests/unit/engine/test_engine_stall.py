"""Stall rules one by one, through the policy's observation pipeline (Script events -> session)."""

import json

import pytest
from engine_support import Script

from pyguard.base.decisions import Action
from pyguard.engine import Policy, PolicyConfig
from pyguard.engine.config import StallConfig
from pyguard.engine.fingerprint import fingerprint
from pyguard.engine.stall import StallDetector
from pyguard.engine.steps import ActionResult, Step


def run(steps, config=None):
    s = Policy(config or PolicyConfig(max_reflections=5, hard_cap=100, base_budget=100)).new_run("r1")
    return s, [s.observe(ev) for ev in steps]


def rules(decisions):
    return [(d.iteration, d.rule) for d in decisions if d.action is not Action.CONTINUE]


def test_exact_repeat_is_flagged_at_the_first_unchanged_result():
    sc = Script()
    steps = [sc.step(("status", {"id": "1"}, "in transit at Memphis")) for _ in range(3)]
    s, ds = run(steps)
    assert rules(ds) == [(3, "repeat_no_gain")]
    assert s.gains[1] == pytest.approx(1.0, abs=0.05) and s.gains[2] == 0.0
    flag = ds[2].evidence["flags"][0]
    assert flag["times"] == 2 and "status" in flag["message"]


def test_normalised_repeat_is_flagged():
    sc = Script()
    steps = [sc.step(("status", {"orderId": v}, f"Order {v}: in transit")) for v in ("12345", "SO-12345", "#12345")]
    _, ds = run(steps)
    assert rules(ds) == [(3, "repeat_no_gain")]
    assert "trivially rewritten" in ds[2].reason


def test_normalised_repeats_can_be_switched_off():
    sc = Script()
    steps = [sc.step(("status", {"orderId": v}, f"Order {v}: in transit")) for v in ("12345", "SO-12345", "#12345")]
    _, ds = run(steps, PolicyConfig(stall=StallConfig(normalised_repeats=False, low_gain_streak=10), base_budget=20))
    assert rules(ds) == []


def test_cycle_is_flagged_with_its_members():
    sc = Script()
    steps = [sc.step((t, {"sku": "A1"}, f"{t} result text for A1 stays the same")) for t in ["inv", "price"] * 3]
    s, ds = run(steps)
    # A, B, A: B's result was new, so the state has not repeated yet; A, B, A, B: the round back to B brought
    # nothing new (issue 22: a stop needs the whole cycle to repeat)
    assert rules(ds)[0] == (5, "cycle")
    cycle = [h for h in s.stalls if h.rule == "cycle"]
    assert cycle and cycle[0].stall is not None and cycle[0].stall.iteration == 5
    assert len(cycle[0].evidence["cycle"]) == 2


def test_error_storm_with_varying_error_texts():
    sc = Script()
    steps = [
        sc.step(("charge", {"acct": "A-1"}, f"Error 503 (request id req-{k:06x}9, attempt {k})"), error=True)
        for k in range(5)
    ]
    _, ds = run(steps)
    assert rules(ds)[0] == (4, "error_storm")


def test_errors_with_changing_inputs_are_not_a_storm():
    sc = Script()
    steps = [
        sc.step(("charge", {"acct": f"A-{k}"}, f"Error: account A-{k} has no card {k}"), error=True) for k in range(5)
    ]
    _, ds = run(steps)
    assert all(r != "error_storm" for _, r in rules(ds))


def test_the_same_answer_to_reworded_requests_is_flagged_before_the_low_gain_streak():
    sc = Script()
    steps = [sc.step(("search", {"q": f"query {k}"}, f"No results for 'query {k}'. Try again.")) for k in range(6)]
    s, ds = run(steps)
    assert rules(ds)[0] == (4, "same_answer")  # the 3rd request answered by the same template
    assert s.gains[2:5] == [0.0, 0.0, 0.0]


def test_low_gain_streak_on_boilerplate():
    sc = Script()
    boilerplate = "Results are ranked by relevance. Refine the search with filters to narrow them down. " * 4
    words = ["amber", "basalt", "cobalt", "dune", "ember", "fjord"]
    steps = [sc.step(("search", {"q": f"query {k}"}, f"{boilerplate}Closest entry: {words[k]}.")) for k in range(6)]
    s, ds = run(steps)
    streak = StallConfig().low_gain_streak
    assert rules(ds)[0] == (2 + streak, "low_gain_streak")  # results from iteration 3 on are boilerplate
    assert max(s.gains[2 : 2 + streak]) < 0.1


def test_polling_with_changing_results_is_not_flagged():
    sc = Script()
    steps = [
        sc.step(
            (
                "job_status",
                {"job": "J-7"},
                json.dumps({"job": "J-7", "progress": 5 * k, "at": f"2024-01-01T10:00:{k:02d}Z"}),
            )
        )
        for k in range(12)
    ]
    s, ds = run(steps)
    assert rules(ds) == []
    assert min(s.gains[2:]) >= 0.3  # changed results are credited


def test_pagination_is_not_flagged():
    sc = Script()
    steps = [
        sc.step(("list", {"page": k}, json.dumps({"items": [f"item-{k}-{j} widget {k * j}" for j in range(5)]})))
        for k in range(12)
    ]
    _, ds = run(steps)
    assert rules(ds) == []


def test_rerun_after_change_is_not_flagged():
    sc = Script()
    steps = []
    log = "\n".join(f"test_{j} PASSED" for j in range(30))
    for k in range(5):
        steps.append(sc.step(("run_tests", {"cmd": "pytest"}, log + f"\ntest_fix_{k} FAILED\n{5 - k} failed")))
        steps.append(sc.step(("edit", {"patch": f"fix number {k}"}, f"wrote {100 + k} bytes")))
    _, ds = run(steps)
    assert all(r != "repeat_no_gain" and r != "cycle" for _, r in rules(ds))


def test_rerun_with_unchanged_output_after_a_new_edit_is_a_check_not_a_repeat():
    sc = Script()
    steps = [
        sc.step(("run_tests", {"cmd": "pytest"}, "1 failed")),
        sc.step(("edit", {"p": "x"}, "ok")),
        sc.step(("run_tests", {"cmd": "pytest"}, "1 failed")),
        sc.step(("edit", {"p": "y"}, "ok")),
        sc.step(("run_tests", {"cmd": "pytest"}, "1 failed")),
        sc.step(("edit", {"p": "z"}, "ok")),
    ]
    _, ds = run(steps)
    assert all(r not in ("repeat_no_gain", "cycle", "low_gain_streak") for _, r in rules(ds)), rules(ds)


def test_rerun_after_the_same_edit_again_is_a_repeat():
    sc = Script()
    steps = [
        sc.step(("run_tests", {"cmd": "pytest"}, "1 failed")),
        sc.step(("edit", {"p": "x"}, "ok")),
        sc.step(("run_tests", {"cmd": "pytest"}, "1 failed")),
        sc.step(("edit", {"p": "x"}, "ok")),
        sc.step(("run_tests", {"cmd": "pytest"}, "1 failed")),
        sc.step(("edit", {"p": "y"}, "ok")),
    ]
    _, ds = run(steps)
    assert (5, "repeat_no_gain") in rules(ds) or (5, "cycle") in rules(ds), rules(ds)


def test_an_edit_undone_puts_back_what_was_there_and_is_no_new_attempt():
    """Make a fix (an attempt), undo it: the undo writes back content the agent already had, so it is no new
    attempt; the re-run after it returning the same failure as before is a repeat."""
    sc = Script()
    fwd = {"path": "a.py", "old": "x = 1", "new": "x = 2"}
    back = {"path": "a.py", "old": "x = 2", "new": "x = 1"}
    steps = []
    for edit in (fwd, back, fwd, back):
        steps += [sc.step(("run_tests", {"cmd": "pytest"}, "1 failed")), sc.step(("str_replace", edit, "edited"))]
    steps.append(sc.step(("run_tests", {"cmd": "pytest"}, "1 failed")))
    steps.append(sc.step(("edit", {"p": "y"}, "ok")))
    _, ds = run(steps)
    found = rules(ds)
    assert found and found[0] == (6, "repeat_no_gain"), found  # the re-run asked for after the undo: its result


def test_text_put_back_that_an_earlier_edit_replaced_is_no_new_attempt():
    # x = 1 -> x = 2 -> x = 3, then x = 3 -> x = 1: every value was written before (the last edit restores the
    # original line); the re-run after it failing the same way is a repeat. A third fix, x = 4, is new.
    def fix_and_rerun(edits):
        sc = Script()
        steps = []
        for old, new in edits:
            steps += [
                sc.step(("run_tests", {"cmd": "pytest"}, "1 failed")),
                sc.step(("str_replace", {"path": "a.py", "old": old, "new": new}, "edited")),
            ]
        steps.append(sc.step(("run_tests", {"cmd": "pytest"}, "1 failed")))
        steps.append(sc.step(("edit", {"p": "y"}, "ok")))
        return rules(run(steps)[1])

    first_two = [("x = 1", "x = 2"), ("x = 2", "x = 3")]
    # the result of the re-run asked for after the restoring edit
    assert fix_and_rerun(first_two + [("x = 3", "x = 1")])[0] == (8, "repeat_no_gain")
    assert fix_and_rerun(first_two + [("x = 3", "x = 4")]) == []


def test_an_undo_whose_check_changes_is_not_a_repeat():
    # the fix changed the failure, the undo brings the first failure back: a changed result, never a repeat
    sc = Script()
    fwd = {"path": "a.py", "old": "x = 1", "new": "x = 2"}
    back = {"path": "a.py", "old": "x = 2", "new": "x = 1"}
    steps = [
        sc.step(("run_tests", {"cmd": "pytest"}, "FAILED test_a: assert 1 == 2")),
        sc.step(("str_replace", fwd, "edited")),
        sc.step(("run_tests", {"cmd": "pytest"}, "FAILED test_b: KeyError 'y'")),
        sc.step(("str_replace", back, "edited")),
        sc.step(("run_tests", {"cmd": "pytest"}, "FAILED test_a: assert 1 == 2")),
        sc.step(("str_replace", {"path": "a.py", "old": "x = 1", "new": "x = 5"}, "edited")),
        sc.step(("run_tests", {"cmd": "pytest"}, "passed")),
        sc.answer(),
    ]
    _, ds = run(steps)
    assert rules(ds) == []


def test_many_attempts_that_change_nothing_are_a_stall():
    sc = Script()
    steps = []
    for k in range(8):
        steps.append(sc.step(("run_tests", {"cmd": "pytest"}, "FAILED test_x: assert 1 == 2")))
        steps.append(sc.step(("edit", {"patch": f"attempt {k}: {'+' * k}"}, "ok")))
    _, ds = run(steps)
    found = [it for it, r in rules(ds) if r == "fruitless_attempts"]
    assert found and found[0] == 2 + 2 * StallConfig().max_fruitless_attempts  # the 6th check after an edit


def test_polling_whose_result_changes_only_in_timestamps_is_allowed_then_flagged():
    sc = Script()
    n = StallConfig().polling_allowance + 3
    steps = [
        sc.step(
            (
                "job_status",
                {"job": "J-7"},
                json.dumps({"status": "PENDING", "checked_at": f"2026-11-30T10:22:{k:02d}Z"}),
            )
        )
        for k in range(n)
    ]
    s, ds = run(steps)
    found = rules(ds)
    assert found and found[0] == (StallConfig().polling_allowance + 3, "polling_limit")  # poll 11, at iteration 13
    assert all(d.action is Action.CONTINUE for d in ds[: StallConfig().polling_allowance + 1])


def test_a_large_page_refetched_with_only_its_footer_changed_spends_the_polling_allowance_at_once():
    # the same 9 KB page again and again, only its footer's time and request id changing: each re-fetch adds 9 KB
    # to the model's context, so the polls are over polling_allowance_chars (8,000) at the first one
    body = "\n".join(f"[B0{k:04d}] cable {k} - $12.{k % 100:02d} - rating 4.{k % 10}" for k in range(220))
    assert 8000 < len(body) < 10000
    sc = Script()
    steps = [
        sc.step(("browse", {"url": "https://shop.example/p3"}, f"{body}\nPage generated 2026-11-30T10:22:{k:02d}Z"))
        for k in range(4)
    ]
    _, ds = run(steps)
    assert rules(ds)[0] == (3, "polling_limit")
    assert ds[2].evidence["flags"][0]["chars"] > 8000
    # the same page with a larger character allowance is polled like a status check: nothing marks it as a poll
    # (no wait, no "pending"), so it earns the run's one unmarked_poll reflection, and no stop
    _, ds = run(
        steps, PolicyConfig(max_reflections=5, hard_cap=100, base_budget=100, stall={"polling_allowance_chars": 50_000})
    )
    assert rules(ds) == [(4, "unmarked_poll")] and not any(d.stops for d in ds)


def test_small_polls_get_the_whole_count_allowance_within_the_character_allowance():
    cfg = StallConfig()
    assert cfg.polling_allowance * 300 <= cfg.polling_allowance_chars  # a 300-character status check


def test_identical_repeats_are_not_polls():
    sc = Script()
    steps = [sc.step(("job_status", {"job": "J-7"}, json.dumps({"status": "ACTIVE", "shards": 4}))) for _ in range(4)]
    _, ds = run(steps)
    assert rules(ds)[0] == (3, "repeat_no_gain")


def test_identical_pending_reads_are_polls_within_the_allowance():
    """Issue 22: identical "pending" reads before "done" wait; they are not a repeated state."""
    sc = Script()
    pending = [sc.step(("job_status", {"job": "J-7"}, json.dumps({"status": "PENDING"}))) for _ in range(8)]
    done = sc.step(("job_status", {"job": "J-7"}, json.dumps({"status": "DONE", "rows": 12})))
    _, ds = run([*pending, done, sc.answer("done")])
    assert rules(ds) == []
    sc = Script()
    forever = [sc.step(("job_status", {"job": "J-7"}, json.dumps({"status": "PENDING"}))) for _ in range(14)]
    _, ds = run(forever, PolicyConfig(base_budget=40))
    assert rules(ds)[0] == (13, "polling_limit")  # the 11th identical pending read is past the allowance of 10


def test_detector_unit_rearm_and_fruitless():
    d = StallDetector(StallConfig(low_gain_streak=2))
    fp = fingerprint("t", '{"a": 1}')

    def r(it):
        return ActionResult(action=fp, novelty=0.0, result_key="k", requested_at=it - 1)

    assert d.observe(Step(1, actions=(fp,))).stalls == ()
    assert d.observe(Step(2, results=(r(2),), actions=(fp,))).gain == 0.0
    rep = d.observe(Step(3, results=(r(3),), actions=(fp,)))
    assert {f.rule for f in rep.stalls} == {"repeat_no_gain", "low_gain_streak"}
    assert d.all_fruitless([fingerprint("t", '{"a": 1.0}')])
    assert not d.all_fruitless([fingerprint("t", '{"a": 2}')])
    assert not d.all_fruitless([])
    d.rearm()
    d.reset()
    assert not d.all_fruitless([fp])
