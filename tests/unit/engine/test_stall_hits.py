"""The stall rules speak the stop-condition vocabulary: every finding is a ``stalled`` StopHit with a StallSubject,
the run state carries them, the Stalled condition reports them, and a decision's evidence serialises them."""

from __future__ import annotations

from engine_support import Script

from pyguard.base.decisions import Action
from pyguard.base.events import Outcome
from pyguard.engine import Policy, PolicyConfig
from pyguard.engine.conditions import RunState, StallSubject, StopCondition, StopHit
from pyguard.engine.stall_report import stall_hit
from pyguard.engine.stop import Stalled, TokenCap
from pyguard.engine.usage import UsageState


def test_a_repeat_is_a_stalled_hit_with_its_subject_and_the_decision_serialises_it():
    sc = Script()
    s = Policy().new_run("r1")
    ds = [s.observe(sc.step(("get_status", {"id": "7"}, "in transit at Memphis"))) for _ in range(3)]
    assert ds[2].action is Action.REFLECT and ds[2].rule == "repeat_no_gain"
    [hit] = s.stalls
    assert isinstance(hit, StopHit) and hit.outcome is Outcome.STALLED and hit.rule == "repeat_no_gain"
    assert hit.stall is not None and hit.stall.iteration == 3 and hit.stall.tool == "get_status"
    assert hit.stall.sample == "in transit at Memphis" and len(hit.stall.ids) == 2 and hit.action is Action.STOP
    flag = ds[2].evidence["flags"][0]
    assert flag == hit.as_dict()
    assert list(flag)[:5] == ["rule", "iteration", "message", "tool", "fingerprints"]
    assert flag["iteration"] == 3 and flag["fingerprints"] == ['get_status({"id":"7"})'] and flag["times"] == 2
    assert "stops" not in flag  # only a finding that cannot stop says so


def test_stalled_reports_the_run_states_hits_in_order():
    a = stall_hit("cycle", "A, B, A, B", {"times": 3}, StallSubject(4, "a", ("a()",), ("x", "y")))
    b = stall_hit("fruitless_attempts", "tests unchanged", {"attempts": 6}, StallSubject(4), Action.REFLECT)
    state = RunState(run_id="r", iteration=4, budget=10, hard_cap=150, stalls=(a, b))
    hit = Stalled().check(state)
    assert hit is not None and hit.leaves() == (a, b)
    assert (hit.rule, hit.outcome, hit.stall) == ("cycle", Outcome.STALLED, a.stall)
    assert state.reflecting and Stalled().check(RunState(run_id="r", iteration=4)) is None
    assert b.action is Action.REFLECT and b.as_dict()["stops"] is False and b.as_dict()["attempts"] == 6
    # a limit's hit keeps its own form: its evidence and message, no subject
    cap = TokenCap(10).check(RunState(run_id="r", iteration=1, usage=UsageState(total_tokens=11)))
    assert cap is not None and cap.stall is None and cap.action is Action.STOP
    assert cap.as_dict() == {**cap.evidence, "message": cap.message}


class _Mine(StopCondition):
    """A condition of your own that says the run stalled at iteration 2."""

    def check(self, state: RunState) -> StopHit | None:
        if state.iteration != 2:
            return None
        return StopHit("my_stall", Outcome.STALLED, "mine says stalled", {"why": "looping"})


def test_a_stalled_hit_of_your_own_is_reflected_on_with_a_bare_subject():
    sc = Script()
    s = Policy(PolicyConfig(), extra_stop=_Mine()).new_run("r1")
    ds = [s.observe(sc.step(("lookup", {"q": k}, f"result {k} " * 20))) for k in range(2)]
    assert ds[1].action is Action.REFLECT and ds[1].rule == "my_stall" and ds[1].reason == "mine says stalled"
    assert "mine says stalled" in (ds[1].reflection or "")
    assert ds[1].evidence["flags"] == [
        {"rule": "my_stall", "iteration": 2, "message": "mine says stalled", "tool": None, "fingerprints": [],
         "why": "looping"}
    ]  # fmt: skip
