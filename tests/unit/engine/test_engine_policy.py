import json

import pytest
from engine_support import FakeClock, Script, run_until_stop

from pyguard.base.decisions import Action
from pyguard.base.errors import BudgetError
from pyguard.base.events import IterationEvent, Outcome
from pyguard.engine import CapsConfig, EscalationConfig, Policy, PolicyConfig, TaskTypeConfig
from pyguard.engine.caps import ModelCallCap
from pyguard.testing.synthetic import generate, logistics_incident


def productive(sc: Script, k: int):
    return sc.step(
        (
            "read_page",
            {"url": f"https://x/{k}"},
            f"page {k}: " + " ".join(f"fact{k}_{j} value{j * k}" for j in range(30)),
        )
    )


def test_a_converging_run_of_20_productive_calls_is_not_cut():
    s = Policy().new_run("r1")
    sc = Script()
    for k in range(20):
        d = s.observe(productive(sc, k))
        assert d.action is Action.CONTINUE, (k, d)
    earn = PolicyConfig().earn_per_iteration
    assert s.budget == 8 + 20 * earn  # the task message and 19 results each earned their calls
    s.observe(sc.answer("the answer"))
    end = s.finish()
    assert end.outcome is Outcome.SUCCEEDED and end.answer == "the answer" and end.iterations == 21


def test_budget_is_dynamic_not_a_static_cap():
    sc = Script()
    s = Policy(PolicyConfig(stall={"low_gain_streak": 100})).new_run("r1")
    # two productive calls, then results with small but non-zero gain: the budget stops growing and runs out
    ds = [s.observe(productive(sc, k)) for k in range(2)]
    base = " ".join(f"common{j}" for j in range(200))
    k = 0
    while not ds[-1].stops:
        k += 1
        ds.append(s.observe(sc.step(("read_page", {"url": f"https://y/{k}"}, base + f" extra{k} tiny{k}"))))
    assert ds[-1].rule == "budget" and ds[-1].outcome is Outcome.EXPIRED
    # 8 + what the task message, the two productive results and the first (new) boilerplate page earned
    assert ds[-1].iteration == 8 + 4 * PolicyConfig().earn_per_iteration
    assert all(g < 0.2 for g in s.gains[4:])


def test_budget_never_exceeds_hard_cap():
    sc = Script()
    s = Policy(PolicyConfig(base_budget=3, hard_cap=5)).new_run("r1")
    ds = []
    for k in range(10):
        ds.append(s.observe(productive(sc, k)))
        assert s.budget <= 5
        if ds[-1].stops:
            break
    assert ds[-1].iteration == 5 and "hard cap" in ds[-1].reason


def test_logistics_incident_reflects_then_stops_within_a_handful():
    s, ds = run_until_stop(logistics_incident())
    assert [d.action for d in ds] == [Action.CONTINUE, Action.CONTINUE, Action.REFLECT, Action.STOP]
    assert ds[2].rule == "repeat_no_gain" and "get_shipment_status" in ds[2].reflection
    assert ds[3].outcome is Outcome.STALLED
    end = s.finish(answer="probably in transit")
    assert end.outcome is Outcome.STALLED and end.answer == "probably in transit"  # salvaged, never succeeded
    assert end.iterations == 4 and end.censored
    assert end.evidence["rule"] == "fruitless_retry" and end.evidence["gains"][:2] == [1.0, 1.0]


def test_so_prefix_variant_after_reflection_also_stops():
    sc = Script()
    s = Policy().new_run("r1")

    def res(v):
        return json.dumps({"order": v, "status": "IN_TRANSIT"})

    ds = [s.observe(sc.step(("gss", {"orderId": v}, res(v)))) for v in ["12345", "12345", "12345", "SO-12345"]]
    assert [d.action.value for d in ds] == ["continue", "continue", "reflect", "stop"]


def test_second_stall_after_reflection_stops_with_stalled_or_escalated():
    quiet = {"stop_on_fruitless_retry": False, "stop_on_repeated_evidence": False}
    for outcome, cfg in [
        (Outcome.STALLED, PolicyConfig(**quiet)),
        (Outcome.ESCALATED, PolicyConfig(**quiet, escalation=EscalationConfig(on_stall="escalate"))),
    ]:
        sc = Script()
        s = Policy(cfg).new_run("r1")
        ds = [s.observe(sc.step(("gss", {"id": 1}, "same"))) for _ in range(5)]
        assert [d.action.value for d in ds] == ["continue", "continue", "reflect", "continue", "stop"]
        assert ds[3].iteration == 4  # grace: iteration 4 answers the call made before the reflection
        assert ds[4].outcome is outcome and "again after a reflection" in ds[4].reason
        assert ds[2].budget == min(ds[1].budget + 4, 40)


def test_zero_reflections_stops_at_first_stall():
    sc = Script()
    s = Policy(PolicyConfig(max_reflections=0)).new_run("r1")
    ds = [s.observe(sc.step(("gss", {"id": 1}, "same"))) for _ in range(3)]
    assert ds[-1].stops and ds[-1].rule == "repeat_no_gain"


def test_hard_caps_stop_with_expired_and_name_the_cap(clock: FakeClock):
    cfg = PolicyConfig(caps=CapsConfig(max_wall_s=10, max_total_tokens=10_000))
    s = Policy(cfg, clock=clock).new_run("r1")
    sc = Script()
    d = s.observe(productive(sc, 0))
    assert d.action is Action.CONTINUE
    clock.advance(10)
    d = s.observe(productive(sc, 1))
    assert d.stops and d.rule == "cap:wall_clock" and d.outcome is Outcome.EXPIRED
    assert d.evidence["caps"][0]["cap"] == "wall_clock"
    end = s.finish()
    assert end.outcome is Outcome.EXPIRED and end.wall_ms == pytest.approx(10_000)


def test_extra_stop_and_token_cap():
    s = Policy(PolicyConfig(), extra_stop=ModelCallCap(2)).new_run("r1")
    sc = Script()
    assert not s.observe(productive(sc, 0)).stops
    assert s.observe(productive(sc, 1)).rule == "cap:model_calls"
    s2 = Policy(PolicyConfig(caps=CapsConfig(max_total_tokens=100))).new_run("r1")
    sc2 = Script()
    assert s2.observe(sc2.step(("t", {}, "x"), input_tokens=60, output_tokens=50)).rule == "cap:total_tokens"


def test_task_type_overrides():
    cfg = PolicyConfig(task_types={"lookup": TaskTypeConfig(base_budget=2, hard_cap=3)})
    s = Policy(cfg).new_run("r1", task_type="lookup")
    assert s.budget == 2 and s.settings.hard_cap == 3
    assert Policy(cfg).new_run("r2", task_type="other").budget == 8


def test_final_answer_is_never_stopped():
    s = Policy(PolicyConfig(base_budget=1, hard_cap=1)).new_run("r1")
    d = s.observe(IterationEvent(run_id="r1", index=1, text="42"))
    assert d.action is Action.CONTINUE
    end = s.finish()
    assert end.outcome is Outcome.SUCCEEDED and end.answer == "42" and not end.censored


@pytest.mark.parametrize(
    "kwargs, outcome",
    [
        (dict(answer="a"), Outcome.SUCCEEDED),
        (dict(answer="a", verified=True), Outcome.SUCCEEDED),
        (dict(answer="a", verified=False), Outcome.FAILED),
        (dict(error="boom"), Outcome.FAILED),
        (dict(answer="a", cancelled=True), Outcome.CANCELLED),
        (dict(answer="a", guard_error="python died"), Outcome.GUARD_ERROR),
        (dict(answer="a", expired="the agent's own cap"), Outcome.EXPIRED),  # a salvaged answer is not success
        (dict(error="boom", expired="the agent's own cap"), Outcome.EXPIRED),
        (dict(), Outcome.FAILED),
    ],
)
def test_finish_outcomes(kwargs, outcome):
    s = Policy().new_run("r1")
    s.observe(Script().step(("t", {}, "x")))
    end = s.finish(**kwargs)
    assert end.outcome is outcome
    if "expired" in kwargs:
        assert end.reason == kwargs["expired"]


def test_misuse_raises_budget_error():
    s = Policy(PolicyConfig(max_reflections=0)).new_run("r1")
    sc = Script()
    with pytest.raises(BudgetError, match="expected iteration 1, got iteration 2"):
        s.observe(IterationEvent(run_id="r1", index=2))
    with pytest.raises(BudgetError, match="'other'"):
        s.observe(IterationEvent(run_id="other", index=1))
    for _ in range(3):
        d = s.observe(sc.step(("gss", {"id": 1}, "same")))
    assert d.stops
    with pytest.raises(BudgetError, match="stopped after iteration 3"):
        s.observe(sc.step(("gss", {"id": 1}, "same")))
    s.finish()
    with pytest.raises(BudgetError, match="already finished"):
        s.finish()
    with pytest.raises(BudgetError, match="finished"):
        s.observe(sc.step(("gss", {"id": 1}, "same")))


def test_runs_are_independent():
    p = Policy()
    a, b = p.new_run("a"), p.new_run("b")
    ra, rb = generate("exact_repeat", 1), generate("convergent", 1)
    for ev in ra.events:
        if a.observe(ev.model_copy(update={"run_id": "a"})).stops:
            break
    for ev in rb.events:
        assert not b.observe(ev.model_copy(update={"run_id": "b"})).stops
    assert a.stopped is not None and b.stopped is None and b.reflections == 0


def test_custom_estimator_is_used():
    class Constant:
        def observe(self, text, echo=()):
            return 0.5

        def learn(self, text):
            pass

        def reset(self):
            pass

    s = Policy(PolicyConfig(), estimator_factory=Constant).new_run("r1")
    sc = Script()
    s.observe(productive(sc, 0))
    s.observe(productive(sc, 1))
    assert s.gains == [0.5, 0.5]


def test_rerun_after_something_new_is_judged_by_its_result():
    sc = Script()
    s = Policy().new_run("r1")
    steps = [
        sc.step(("run_tests", {"cmd": "pytest"}, "2 failed")),
        sc.step(("run_tests", {"cmd": "pytest"}, "2 failed")),
        sc.step(("edit", {"patch": "fix a"}, "wrote 120 bytes")),  # reflection after this: the repeat came back
        sc.step(("run_tests", {"cmd": "pytest"}, "1 failed")),  # re-run after an edit: not a fruitless retry
        sc.step(("read", {"path": "b.py"}, "def b(): ...")),
        sc.answer("fixed one"),
    ]
    ds = [s.observe(ev) for ev in steps]
    assert [d.action.value for d in ds] == ["continue", "continue", "reflect", "continue", "continue", "continue"]
    assert s.finish().outcome is Outcome.SUCCEEDED
