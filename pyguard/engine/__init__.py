"""The dynamic budget engine: pure Python + numpy (never imports jpype).

from pyguard.engine import Policy, PolicyConfig
policy = Policy(PolicyConfig(), clock=time.monotonic)
session = policy.new_run(run_id="r1", task_type="lookup")
decision = session.observe(event)          # after each model call
end = session.finish(answer="...")         # one RunEnd, exactly one Outcome
"""

from pyguard.engine.config import CapsConfig, EscalationConfig, NoveltyConfig, PolicyConfig, StallConfig, TaskTypeConfig
from pyguard.engine.policy import Policy, RunSession

__all__ = [
    "CapsConfig",
    "EscalationConfig",
    "NoveltyConfig",
    "Policy",
    "PolicyConfig",
    "RunSession",
    "StallConfig",
    "TaskTypeConfig",
]
