"""The dynamic budget policy (skeleton: budget expiry only; stall detection lands next)."""

from __future__ import annotations

import time
from typing import Callable

from pyguard.decisions import Action, Decision
from pyguard.engine.config import PolicyConfig
from pyguard.errors import BudgetError
from pyguard.events import IterationEvent, Outcome, RunEnd

__all__ = ["Policy", "RunSession"]

Clock = Callable[[], float]


class Policy:
    def __init__(self, config: PolicyConfig | None = None, clock: Clock = time.monotonic) -> None:
        self.config = config if config is not None else PolicyConfig()
        self.clock = clock

    def new_run(self, run_id: str, task_type: str | None = None) -> "RunSession":
        return RunSession(self, run_id=run_id, task_type=task_type)


class RunSession:
    def __init__(self, policy: Policy, *, run_id: str, task_type: str | None) -> None:
        self.policy = policy
        self.run_id = run_id
        self.task_type = task_type
        self.settings = policy.config.budget_for(task_type)
        self.budget = self.settings.base_budget
        self.gains: list[float] = []
        self.decisions: list[Decision] = []
        self._events: list[IterationEvent] = []
        self._stop: Decision | None = None
        self._finished = False
        self._started = policy.clock()

    def observe(self, event: IterationEvent) -> Decision:
        if self._finished or self._stop is not None:
            raise BudgetError(f"run {self.run_id!r} already ended; start a new run with Policy.new_run()")
        self._events.append(event)
        self.gains.append(1.0)
        i = len(self._events)
        if not event.is_final and i >= self.budget:
            d = Decision(action=Action.STOP, reason=f"budget of {self.budget} model calls used",
                         rule="budget", outcome=Outcome.EXPIRED, iteration=i, budget=self.budget)
            self._stop = d
        else:
            d = Decision.proceed(iteration=i, budget=self.budget)
        self.decisions.append(d)
        return d

    def finish(self, answer=None, error=None, verified=None, cancelled=False, guard_error=None) -> RunEnd:
        if self._finished:
            raise BudgetError(f"run {self.run_id!r} already finished")
        self._finished = True
        if self._stop is not None:
            outcome, reason = self._stop.outcome, self._stop.reason
        elif guard_error is not None:
            outcome, reason = Outcome.GUARD_ERROR, str(guard_error)
        elif cancelled:
            outcome, reason = Outcome.CANCELLED, "cancelled"
        elif error is not None:
            outcome, reason = Outcome.FAILED, str(error)
        elif answer is not None and verified is not False:
            outcome, reason = Outcome.SUCCEEDED, "answered"
        else:
            outcome, reason = Outcome.FAILED, "no answer"
        return RunEnd(run_id=self.run_id, outcome=outcome, reason=reason, answer=answer,
                      iterations=len(self._events),
                      wall_ms=(self.policy.clock() - self._started) * 1000.0)
