"""Escalation in the engine: a stop that escalates instead (per rule, per task type), and resuming after it."""

from __future__ import annotations

import pytest
from engine_support import Script

from pyguard.base.decisions import Action
from pyguard.base.errors import BudgetError, ConfigError
from pyguard.base.events import Outcome
from pyguard.engine import EscalationConfig, Policy, PolicyConfig, TaskTypeConfig


def _loop(session, script: Script, n: int):
    """The same lookup ``n`` times, the same result every time; returns the decisions until the first stop."""
    out = []
    for _ in range(n):
        d = session.observe(script.step(("get_status", {"id": "1"}, "Order 1: delayed at the hub.")))
        out.append(d)
        if d.stops:
            break
    return out


def test_by_default_a_stall_stops_and_never_escalates():
    decisions = _loop(Policy().new_run("r1"), Script(), 10)
    assert decisions[-1].outcome is Outcome.STALLED


def test_on_stall_escalate_turns_the_stall_stop_into_an_escalation_with_its_evidence():
    policy = Policy(PolicyConfig(escalation=EscalationConfig(on_stall="escalate")))
    decisions = _loop(policy.new_run("r1"), Script(), 10)
    stop = decisions[-1]
    assert stop.action is Action.STOP and stop.outcome is Outcome.ESCALATED
    assert stop.rule and stop.evidence["flags"] and stop.reason.startswith("stalled")


def test_a_rule_override_wins_over_on_stall_and_on_expire():
    keep = EscalationConfig(on_stall="escalate", rules={"fruitless_retry": "stop"})
    assert not keep.escalates("fruitless_retry", stalled=True) and keep.escalates("cycle", stalled=True)
    budget = EscalationConfig(rules={"budget": "escalate"})
    assert budget.escalates("budget", stalled=False) and not budget.escalates("cap:total_tokens", stalled=False)
    s = Policy(PolicyConfig(base_budget=2, earn_per_iteration=0, escalation=budget)).new_run("r1")
    sc = Script()
    s.observe(sc.step(("read", {"p": 1}, "page one has some text")))
    d = s.observe(sc.step(("read", {"p": 2}, "page two has other text")))
    assert d.rule == "budget" and d.outcome is Outcome.ESCALATED


def test_a_task_type_table_replaces_the_policy_one():
    cfg = PolicyConfig(task_types={"refund": TaskTypeConfig(escalation=EscalationConfig(on_stall="escalate"))})
    assert cfg.escalation_for("refund").on_stall == "escalate" and cfg.escalation_for("lookup").on_stall == "stop"
    assert _loop(Policy(cfg).new_run("a", "refund"), Script("a"), 10)[-1].outcome is Outcome.ESCALATED
    assert _loop(Policy(cfg).new_run("b", "lookup"), Script("b"), 10)[-1].outcome is Outcome.STALLED
    assert PolicyConfig.model_validate(cfg.model_dump()) == cfg  # round-trips


def test_escalation_config_is_checked_like_every_config():
    with pytest.raises(ConfigError, match="on_stall"):
        EscalationConfig(on_stall="ask")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="resume_budget"):
        EscalationConfig(resume_budget=0)
    text = PolicyConfig(escalation=EscalationConfig(on_expire="escalate", rules={"cycle": "stop"})).to_toml()
    assert "[escalation]" in text


def test_resume_opens_a_new_turn_with_the_granted_budget():
    # no budget is earned here, so the turn's budget is the grant alone
    s = Policy(PolicyConfig(earn_per_iteration=0, escalation=EscalationConfig(on_stall="escalate"))).new_run("r1")
    sc = Script()
    stop = _loop(s, sc, 10)[-1]
    n = stop.iteration
    assert n is not None
    grant = s.resume(3, reason="a human said: use SO-1")
    assert grant.action is Action.CONTINUE and grant.rule == "resume" and grant.turn == 2
    assert grant.budget == n + 3 and s.stopped is None
    sc.user("use SO-1")
    d = s.observe(sc.step(("get_status", {"id": "SO-1"}, "Order SO-1: in transit, arrives Friday.")))
    assert d.action is Action.CONTINUE and d.turn == 2
    s.observe(sc.step(("get_history", {"id": "SO-1"}, "Scanned in Memphis on Monday, Dallas on Tuesday.")))
    d = s.observe(sc.step(("get_eta", {"id": "SO-1"}, "ETA Friday 10:00, driver assigned.")))
    assert d.stops and d.rule == "budget" and d.iteration == n + 3  # the grant, not a fresh base budget
    assert s.finish().iterations == n + 3


def test_only_an_escalated_run_can_resume():
    s = Policy().new_run("r1")
    with pytest.raises(BudgetError, match="not escalated"):
        s.resume(3)
    stalled = Policy().new_run("r2")
    _loop(stalled, Script("r2"), 10)
    with pytest.raises(BudgetError, match="stalled"):
        stalled.resume(3)
    esc = Policy(PolicyConfig(escalation=EscalationConfig(on_stall="escalate"))).new_run("r3")
    _loop(esc, Script("r3"), 10)
    with pytest.raises(BudgetError, match="positive"):
        esc.resume(0)
    esc.finish()
    with pytest.raises(BudgetError, match="finished"):
        esc.resume(3)
