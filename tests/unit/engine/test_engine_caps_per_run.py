"""Caps never leak between runs: each run judges its own usage, even with a cap of your own that keeps state.

Before issue 13, ``Policy.caps`` was one object shared by every run and each ``new_run()`` called ``reset()`` on it,
so a stateful cap in one run was wiped whenever another run started (``Guard.run_many``: runs on many threads).
"""

from __future__ import annotations

import threading

import pytest

from pyguard.base.errors import ConfigError
from pyguard.base.events import IterationEvent, Outcome, ToolCall
from pyguard.engine import Policy, PolicyConfig
from pyguard.engine.caps import ModelCallCap
from pyguard.engine.conditions import RunState, StopCondition, StopHit


class HeavyStreakCap(StopCondition):
    """Fires after ``limit`` model calls in a row that each used more than ``heavy`` tokens: it keeps the last total
    and the streak between checks (a stateful cap, as users write them)."""

    def __init__(self, limit: int, heavy: int) -> None:
        self.limit, self.heavy = limit, heavy
        self.last_total = 0
        self.streak = 0

    def reset(self) -> None:  # what the shared-object design used to call at every new_run()
        self.last_total = 0
        self.streak = 0

    def check(self, state: RunState) -> StopHit | None:
        total = state.usage.total_tokens
        used = total - self.last_total
        self.last_total = total
        self.streak = self.streak + 1 if used > self.heavy else 0
        if self.streak < self.limit:
            return None
        return StopHit("cap:heavy_streak", Outcome.EXPIRED, f"{self.streak} heavy calls in a row", {"cap": "heavy"})


def call(run_id: str, i: int, tokens: int) -> IterationEvent:
    return IterationEvent(
        run_id=run_id,
        index=i,
        total_tokens=tokens,
        tool_calls=(ToolCall(id=f"c{i}", name="search", arguments=f'{{"q": "page {i}"}}'),),
    )


def test_a_run_starting_does_not_wipe_another_runs_cap_state():
    policy = Policy(PolicyConfig(), extra_stop=HeavyStreakCap(limit=3, heavy=1000))
    a = policy.new_run("a")
    assert not a.observe(call("a", 1, 5000)).stops
    assert not a.observe(call("a", 2, 5000)).stops
    b = policy.new_run("b")  # used to reset the shared cap: a's streak of 2 was lost
    assert not b.observe(call("b", 1, 10)).stops  # b's light call is b's own business
    d = a.observe(call("a", 3, 5000))
    assert d.stops and d.rule == "cap:heavy_streak", d
    assert b.stopped is None


def test_concurrent_runs_each_count_their_own_streak():
    policy = Policy(PolicyConfig(), extra_stop=HeavyStreakCap(limit=4, heavy=1000))
    runs = 8
    barrier = threading.Barrier(runs)
    stopped_at: dict[int, int | None] = {}

    def work(k: int) -> None:
        session = policy.new_run(f"r{k}")
        stopped_at[k] = None
        for i in range(1, 7):
            barrier.wait()  # every run makes its i-th call before any makes its (i+1)-th
            heavy = k % 2 == 0 or i != 2  # odd runs have one light call (the 2nd): their streak restarts
            if session.observe(call(f"r{k}", i, 5000 if heavy else 10)).stops:
                stopped_at[k] = i
                for _ in range(i, 6):
                    barrier.wait()
                return

    threads = [threading.Thread(target=work, args=(k,)) for k in range(runs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert stopped_at == {k: (4 if k % 2 == 0 else 6) for k in range(runs)}


def test_the_given_cap_object_is_never_mutated_and_a_factory_is_called_per_run():
    given = HeavyStreakCap(limit=2, heavy=0)
    policy = Policy(PolicyConfig(), extra_stop=given)
    s = policy.new_run("a")
    s.observe(call("a", 1, 5))
    assert given.streak == 0 and given.last_total == 0

    made: list[StopCondition] = []

    def factory() -> StopCondition:
        made.append(ModelCallCap(2))
        return made[-1]

    policy = Policy(PolicyConfig(), extra_stop=factory)
    before = len(made)
    policy.new_run("x")
    policy.new_run("y")
    assert len(made) == before + 2


def test_bad_extra_stop_is_named():
    with pytest.raises(ConfigError, match="extra_stop=3"):
        Policy(PolicyConfig(), extra_stop=3)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="not a StopCondition"):
        Policy(PolicyConfig(), extra_stop=lambda: "nope")  # type: ignore[arg-type,return-value]
