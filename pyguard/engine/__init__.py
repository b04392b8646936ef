"""The dynamic budget engine: pure Python + numpy (never imports jpype).

from pyguard.engine import Policy, PolicyConfig
policy = Policy(PolicyConfig(), clock=time.monotonic)
session = policy.new_run(run_id="r1", task_type="lookup")
decision = session.observe(event)          # after each model call
end = session.finish(answer="...")         # one RunEnd, exactly one Outcome
"""

from pyguard.engine.config import (
    BudgetSettings,
    CapsConfig,
    EscalationConfig,
    NoveltyConfig,
    PolicyConfig,
    Price,
    ReflectionConfig,
    StallConfig,
    TaskTypeConfig,
)
from pyguard.engine.policy import Policy, RunSession

__all__ = [
    "BudgetSettings",
    "CapsConfig",
    "EscalationConfig",
    "NoveltyConfig",
    "Policy",
    "PolicyConfig",
    "Price",
    "ReflectionConfig",
    "RunSession",
    "StallConfig",
    "TaskTypeConfig",
]
