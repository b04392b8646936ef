"""After a reflection, a shorter low-gain streak (``low_gain_streak_after_reflection``) confirms the stall."""

import json

import pytest
from engine_support import Script

from pyguard.base.decisions import Action
from pyguard.base.errors import ConfigError
from pyguard.engine import Policy, PolicyConfig
from pyguard.engine.config import StallConfig
from pyguard.engine.fingerprint import fingerprint
from pyguard.engine.stall import StallDetector
from pyguard.engine.steps import ActionResult, Step


def rules(decisions):
    return [(d.iteration, d.rule, d.action.value) for d in decisions if d.action is not Action.CONTINUE]


def _boilerplate_steps(n: int):
    """A diverging agent: a new query every call, the same boilerplate back (not empty, so low gain by novelty)."""
    sc = Script()
    return [
        sc.step(
            ("search_kb", {"query": f"topic variant {k}"}, "Nothing matches that query. Related: 'Getting started'.")
        )
        for k in range(n)
    ]


def run(steps, config=None):
    s = Policy(config or PolicyConfig()).new_run("r1")
    out = []
    for ev in steps:
        d = s.observe(ev)
        out.append(d)
        if d.stops:
            break
    return s, out


def test_default_is_one_shorter_after_a_reflection():
    assert StallConfig().low_gain_streak_after_reflection == 3 and StallConfig().low_gain_streak == 4
    with pytest.raises(ConfigError, match="low_gain_streak_after_reflection"):
        StallConfig(low_gain_streak_after_reflection=0)


def test_detector_uses_the_shorter_streak_once_rearmed():
    d = StallDetector(StallConfig(low_gain_streak=3, low_gain_streak_after_reflection=2))

    def fp(k):
        return fingerprint("search", json.dumps({"q": k}))

    def res(k):
        return ActionResult(action=fp(k), novelty=0.0, result_key=f"r{k}", requested_at=k - 1)

    d.observe(Step(1, actions=(fp(1),)))
    flags = [d.observe(Step(i, results=(res(i - 1),), actions=(fp(i),))).stalls for i in range(2, 5)]
    assert [len(f) for f in flags] == [0, 0, 1]  # 3 low-gain iterations before a reflection
    d.rearm()
    flags = [d.observe(Step(i, results=(res(i - 1),), actions=(fp(i),))).stalls for i in range(5, 7)]
    assert [len(f) for f in flags] == [0, 1]  # 2 after it
    assert flags[1][0].rule == "low_gain_streak" and flags[1][0].evidence["streak"] == 2
    d.reset()  # a new run starts with the full streak again
    d.observe(Step(1, actions=(fp(1),)))
    assert [len(d.observe(Step(i, results=(res(i - 1),), actions=(fp(i),))).stalls) for i in range(2, 5)] == [0, 0, 1]


@pytest.mark.parametrize("after, stop_at", [(1, 7), (2, 8), (3, 9)])
def test_a_stall_after_a_reflection_stops_after_the_grace_call_and_the_shorter_streak(after, stop_at):
    stall = StallConfig(low_gain_streak=3, low_gain_streak_after_reflection=after, failure_templates=False)
    cfg = PolicyConfig(stall=stall, base_budget=20, hard_cap=40)
    _, ds = run(_boilerplate_steps(12), cfg)
    got = rules(ds)
    assert got[0] == (5, "low_gain_streak", "reflect")  # results from iteration 2 on are boilerplate: 3 low at 3, 4, 5
    assert got[1] == (stop_at, "low_gain_streak", "stop")  # 6 is the grace call; then `after` low-gain iterations
    assert ds[-1].outcome.value == "stalled" and "again after a reflection" in ds[-1].reason


def test_progress_after_a_reflection_resets_the_shorter_streak():
    sc = Script()
    steps = [
        sc.step(("search_kb", {"query": f"q{k}"}, "Nothing matches that query. Related: 'Getting started'."))
        for k in range(6)
    ]
    for k in range(6):  # the agent reacts: productive lookups, with a dull result between every two
        text = (
            "Nothing matches that query. Related: 'Getting started'."
            if k % 3 == 2
            else (f"record {k}: owner team-{k * 17}, region r{k * 29}, amount {k * 1013}, note {'abcdefgh'[k]}{k * 7}")
        )
        steps.append(sc.step(("get_record", {"id": f"R-{k}"}, text)))
    steps.append(sc.answer("found it"))
    s, ds = run(steps)
    assert [r[2] for r in rules(ds)] == ["reflect"]  # no stop: a lone dull result after a reflection is not a streak
    assert s.stopped is None


def test_polling_after_a_reflection_is_never_stopped():
    sc = Script()
    steps = [sc.step(("get_status", {"id": "7"}, "order 7: held at Memphis hub")) for _ in range(3)]  # flagged repeat
    steps.append(sc.step(("start_export", {"q": "orders"}, "export job exp-1 started")))
    for p in range(10, 100, 10):  # a poll whose progress changes every time
        steps.append(sc.step(("check_export", {"job": "exp-1"}, f"job exp-1: RUNNING {p}% ({p * 7} of 700 rows)")))
    steps.append(sc.answer("done"))
    s, ds = run(steps)
    assert [r[:2] for r in rules(ds)] == [(3, "repeat_no_gain")]
    assert s.stopped is None


def test_a_low_gain_streak_waits_one_iteration_for_a_new_edit():
    # dull reads, then the model asks for an edit with new content: the streak flag waits for the edit's result
    # (an attempt is judged by what it brings, not stopped unexecuted); the edit brings something, so no flag
    sc = Script()
    dull = [sc.step(("grep", {"pattern": f"p{k}"}, "<returncode>1</returncode>")) for k in range(5)]
    edit = sc.step(("edit", {"path": "a.py", "new": "fixed = True"}, "The file a.py has been edited."))
    _, ds = run([*dull, edit, sc.answer()], PolicyConfig())
    assert rules(ds) == []
    # the same run with another dull read instead of the edit is flagged there
    sc = Script()
    steps = [sc.step(("grep", {"pattern": f"p{k}"}, "<returncode>1</returncode>")) for k in range(6)]
    _, ds = run([*steps, sc.answer()], PolicyConfig())
    assert [r[:2] for r in rules(ds)] == [(6, "low_gain_streak")]  # results 2-5 dull: the 4th at iteration 6


def test_a_waited_for_edit_that_brings_nothing_raises_the_flag_at_the_next_iteration():
    detector = StallDetector(StallConfig(low_gain_streak=2))
    reads = [fingerprint("grep", f'{{"pattern": "p{k}"}}') for k in range(3)]
    write = fingerprint("edit", '{"path": "a.py", "new": "v2"}')

    def dull(i, a):
        return ActionResult(
            action=a, novelty=0.0, result_key=f"k{i}", requested_at=i - 1, is_error=True, write=a is write
        )

    detector.observe(Step(1, actions=(reads[0],)))
    detector.observe(Step(2, results=(dull(2, reads[0]),), actions=(reads[1],)))
    waited = detector.observe(Step(3, results=(dull(3, reads[1]),), actions=(write,), writes=(write,)))
    assert not waited.stalls  # the streak is 2, but a new edit is on its way
    failed = detector.observe(Step(4, results=(dull(4, write),), actions=(reads[2],)))
    assert [f.rule for f in failed.stalls] == ["low_gain_streak"]  # the edit failed: the streak goes on, flagged
