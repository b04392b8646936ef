"""Helpers for engine tests: a fake clock and an event script builder (imported by the engine tests)."""

from __future__ import annotations

import json

from pyguard.base.events import IterationEvent, Observation, RunRecord, ToolCall
from pyguard.engine import Policy, PolicyConfig


class FakeClock:
    """A clock tests advance by hand: no sleeps."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Script:
    """Builds events of one run: ``step(calls, results_text)``; results arrive in the next event."""

    def __init__(self, run_id: str = "r1", task: str = "Find the answer.") -> None:
        self.run_id = run_id
        self.index = 0
        self._obs: tuple[Observation, ...] = (Observation(kind="user", text=task),)

    def step(self, *calls: tuple[str, dict | str, str], error: bool = False, **usage) -> IterationEvent:
        self.index += 1
        tcs, obs = [], []
        for k, (name, args, result) in enumerate(calls):
            cid = f"c{self.index}_{k}"
            tcs.append(ToolCall(id=cid, name=name, arguments=args if isinstance(args, str) else json.dumps(args)))
            obs.append(Observation(tool_call_id=cid, tool_name=name, text=result, is_error=error))
        ev = IterationEvent(
            run_id=self.run_id, index=self.index, tool_calls=tuple(tcs), observations=self._obs, **usage
        )
        self._obs = tuple(obs)
        return ev

    def user(self, text: str) -> None:
        """The user writes again: the next event carries the message (after an answer, a new turn)."""
        self._obs = self._obs + (Observation(kind="user", text=text),)

    def answer(self, text: str = "done", **usage) -> IterationEvent:
        self.index += 1
        ev = IterationEvent(run_id=self.run_id, index=self.index, observations=self._obs, text=text, **usage)
        self._obs = ()
        return ev


def run_until_stop(run: RunRecord, policy: Policy | None = None):
    """Feed a recorded run's events to a fresh session until the engine stops it: (session, decisions)."""
    session = (policy or Policy()).new_run(run.run_id)
    decisions = []
    for event in run.events:
        decisions.append(session.observe(event))
        if decisions[-1].stops:
            break
    return session, decisions


def drive(events: list[IterationEvent], config: PolicyConfig | None = None, *, paired: bool = True):
    """Feed ``events`` as the guard does: each call's response, then (``paired``) its results before the next call,
    up to the first stop. Returns the session and its decisions."""
    session = Policy(config or PolicyConfig()).new_run(events[0].run_id)
    decisions = []
    for k, e in enumerate(events):
        decisions.append(session.observe(e))
        if paired and not decisions[-1].stops and not e.is_final and k + 1 < len(events):
            decisions.append(session.observe_results(e.index, events[k + 1].observations))
        if decisions[-1].stops:
            break
    return session, decisions


def walk_rooms(calls: int, new_every: int | None = None) -> list[IterationEvent]:
    """An environment-step agent: one act tool, four moves, three rooms visited over and over, and (``new_every``) a
    room never seen before every so many calls."""
    sc = Script(task="Cook the meal.")
    moves = ["north", "south", "east", "west"]
    rooms = ["a hall", "a corridor", "a kitchen"]
    events = []
    for k in range(calls):
        room = f"room {k}" if new_every and k % new_every == 0 else rooms[k % 3]
        events.append(sc.step(("act", {"command": moves[k % 4]}, f"You are in {room}. Exits lead everywhere.")))
    events.append(sc.answer("Done."))
    return events
