"""``[task_types.X.stall]``: a task type's own stall table replaces the policy's ``[stall]`` for its runs only."""

from engine_support import Script

from pyguard.base.decisions import Action
from pyguard.engine import Policy, PolicyConfig
from pyguard.engine.config import StallConfig, TaskTypeConfig

BASE = StallConfig(low_gain_streak=6, empty_streak=6)
"""The policy's own table: six empty results in a row before a stall."""
QUICK = StallConfig(low_gain_streak=3, empty_streak=3)
CONFIG = PolicyConfig(stall=BASE, task_types={"lookup": TaskTypeConfig(stall=QUICK), "other": TaskTypeConfig()})


def _steps(n: int):
    sc = Script()
    return [sc.step(("query_logs", {"window": f"last {k + 1} hours"}, "No matching records found.")) for k in range(n)]


def first_stop(policy: Policy, task_type: str | None, n: int = 6):
    s = policy.new_run("r1", task_type)
    for d in (s.observe(ev) for ev in _steps(n)):
        if d.action is not Action.CONTINUE:
            return d.iteration, d.rule
    return None


def test_a_type_with_its_own_stall_table_reflects_where_the_others_do_not():
    policy = Policy(CONFIG)
    assert first_stop(policy, "lookup") == (4, "low_gain_streak")  # 3 empty results (iterations 2-4)
    assert first_stop(policy, "other") is None  # a type without a stall table: the policy's [stall]
    assert first_stop(policy, None) is None
    assert first_stop(policy, "unknown") is None
    assert first_stop(policy, "lookup") == (4, "low_gain_streak")  # the cached per-type settings again


def test_stall_for_falls_back_to_the_policy_table():
    assert CONFIG.stall_for("lookup") == QUICK
    assert CONFIG.stall_for("other") is BASE
    assert CONFIG.stall_for(None) is BASE
    assert CONFIG.budget_for("lookup").base_budget == CONFIG.base_budget  # the stall table is not a budget field


def test_per_type_stall_table_round_trips_through_toml(tmp_path):
    path = tmp_path / "policy.toml"
    text = CONFIG.to_toml()
    assert "[task_types.lookup.stall]" in text
    path.write_text(text)
    assert PolicyConfig.from_toml(path) == CONFIG
    path.write_text("[task_types.lookup.stall]\nlow_gain_streak = 2\n")
    loaded = PolicyConfig.from_toml(path)
    assert loaded.stall_for("lookup") == StallConfig(low_gain_streak=2)
    assert loaded.stall_for("x") == StallConfig()


def _actions(policy: Policy, task_type: str | None, n: int = 14):
    s = policy.new_run("r1", task_type)
    out = []
    for ev in _steps(n):
        d = s.observe(ev)
        if d.action is not Action.CONTINUE:
            out.append((d.iteration, d.action.value))
        if d.action is Action.STOP:
            break
    return out


def test_a_type_with_more_reflections_reflects_again_where_the_others_stop():
    config = PolicyConfig(
        stall=QUICK,
        base_budget=40,
        hard_cap=60,
        task_types={"patient": TaskTypeConfig(max_reflections=2), "other": TaskTypeConfig(base_budget=30)},
    )
    policy = Policy(config)
    other = _actions(policy, "other")
    patient = _actions(policy, "patient")
    assert [a for _, a in other] == ["reflect", "stop"]
    assert [a for _, a in patient][:3] == ["reflect", "reflect", "stop"]
    assert patient[1][0] == other[1][0]  # the second stall: a stop for one type, another reflection for the other
    assert config.budget_for("patient").max_reflections == 2 and config.budget_for("other").max_reflections == 1
    assert config.budget_for("other").stop_on_fruitless_retry is True
