"""One vocabulary for what stops a run: each condition declared once with its config (the class names its model;
no table of builders), the caps' names in ``[caps]`` and ``[stop]`` alike, the older spellings read with a
DeprecationWarning and written back in the new ones, and ``reset()`` called on each run's copy of a condition."""

from __future__ import annotations

import tomllib
import typing

import pytest
from engine_support import Script

from pyguard.base.decisions import Action
from pyguard.base.errors import ConfigError
from pyguard.base.events import Outcome
from pyguard.engine import EscalationConfig, Policy, PolicyConfig, TaskTypeConfig
from pyguard.engine.conditions import RunState, StopCondition, StopHit
from pyguard.engine.stop import TokenCap, build_condition
from pyguard.engine.stop_config import StopConfig, TokensConfig


def _kinds() -> list[type]:
    union = typing.get_args(StopConfig)[0]
    return list(typing.get_args(union))


@pytest.mark.parametrize("model", _kinds(), ids=lambda m: m.__name__)
def test_every_config_kind_has_its_condition_class_and_round_trips(model: type) -> None:
    fields = {"limit": 3} if "limit" in model.model_fields else {}
    fields |= {"seconds": 2.0} if "seconds" in model.model_fields else {}
    fields |= {"of": [{"kind": "model_calls", "limit": 2}]} if "of" in model.model_fields else {}
    config = model.model_validate(fields)
    condition = build_condition(config)
    assert condition.config_model is model and condition.config() == config


def test_the_older_tokens_table_warns_and_is_written_back_in_the_caps_name() -> None:
    with pytest.warns(DeprecationWarning, match='kind = "input_tokens"'):
        config = PolicyConfig.from_dict({"stop": {"kind": "tokens", "which": "input", "limit": 40}})
    assert config.stop == TokensConfig(kind="input_tokens", limit=40)
    text = config.to_toml()
    assert "which" not in text and "input_tokens" in text
    assert PolicyConfig.from_dict(tomllib.loads(text)) == config  # the new spelling reads back without a warning
    assert repr(build_condition(config.stop)) == "TokenCap(40, 'input')"


def test_token_cap_kind_is_a_deprecated_name_of_which() -> None:
    with pytest.warns(DeprecationWarning, match="which='output'"):
        cap = TokenCap(10, kind="output")
    assert cap.which == "output" and cap.config() == TokenCap(10, "output").config()
    with pytest.raises(ConfigError, match="'weird'"):
        TokenCap(10, which="weird")


def test_stall_outcome_is_a_deprecated_alias_of_escalation_on_stall() -> None:
    with pytest.warns(DeprecationWarning, match="on_stall"):
        old = PolicyConfig(
            stall_outcome="escalated",  # type: ignore[call-arg]
            task_types={"refund": TaskTypeConfig(escalation=EscalationConfig(on_expire="escalate"))},
        )
    assert old.escalation.on_stall == "escalate"
    assert old.task_types["refund"].escalation == EscalationConfig(on_stall="escalate", on_expire="escalate")
    assert "stall_outcome" not in old.model_dump()
    assert PolicyConfig.model_validate(old.model_dump()) == old
    with pytest.warns(DeprecationWarning):
        assert PolicyConfig.from_dict({"stall_outcome": "stalled"}) == PolicyConfig()
    with pytest.raises(ConfigError, match="'gave_up'"):
        PolicyConfig.from_dict({"stall_outcome": "gave_up"})
    # a stall stop under it is escalated, as before
    sc = Script()
    with pytest.warns(DeprecationWarning):
        s = Policy(PolicyConfig(stall_outcome="escalated", max_reflections=0)).new_run("r1")  # type: ignore[call-arg]
    ds = [s.observe(sc.step(("get_status", {"id": "7"}, "in transit"))) for _ in range(3)]
    assert ds[-1].action is Action.STOP and ds[-1].outcome is Outcome.ESCALATED


class _Third(StopCondition):
    """Stateful: fires on its third check."""

    def __init__(self) -> None:
        self.seen = 0

    def check(self, state: RunState) -> StopHit | None:
        self.seen += 1
        return StopHit("cap:third", Outcome.EXPIRED, "third check") if self.seen >= 3 else None

    def reset(self) -> None:
        self.seen = 0


def test_each_run_gets_its_own_copy_of_a_condition_reset_before_its_first_check() -> None:
    given = _Third()
    given.check(RunState(run_id="x", iteration=1))
    given.check(RunState(run_id="x", iteration=2))  # the object has counted 2 before the policy got it
    policy = Policy(PolicyConfig(), extra_stop=given)
    sc = Script()
    s = policy.new_run("r1")
    ds = [s.observe(sc.step(("search", {"q": f"topic {k}"}, f"fact {k} " * 30))) for k in range(3)]
    assert [d.action for d in ds] == [Action.CONTINUE, Action.CONTINUE, Action.STOP]
    assert ds[-1].rule == "cap:third" and given.seen == 2
