"""``pyguard fuzz`` and its pytest helper: misbehaving model scripts (:mod:`pyguard.testing.fuzz`) run on an agent
with the agent's own tools, under a guard, to find the loops the guard misses and the legitimate runs it stops.

A driver that runs agents, above the guard it drives (as live calibration is).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from pyguard.base.decisions import Action
from pyguard.base.errors import InputError, did_you_mean
from pyguard.jvm import scripted_model
from pyguard.jvm.tool_specs import tool_specs
from pyguard.live.guard import Guard, run_unguarded
from pyguard.result import RunResult
from pyguard.testing.fuzz import Misbehaviour, Outcome, find_escape, find_false_stop

__all__: list[str] = []


class Finding(BaseModel):
    """A script found by the search, shrunk, with what it cost guarded and unguarded."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    """``escape`` (the guard did not stop it within the budget) or ``false_stop`` (a legitimate run it stopped)."""
    script: Misbehaviour
    guarded_calls: int
    guarded_tokens: int | None
    stopped_at: int | None
    unguarded_calls: int
    unguarded_tokens: int | None

    def save(self, folder: str | os.PathLike[str]) -> Path:
        """Write the script as a scenario file the team can keep as a regression test; returns its path."""
        name = f"fuzz_{self.kind}_{self.script.family}"
        path = Path(folder) / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.script.scenario(name), indent=2) + "\n", encoding="utf-8")
        return path

    def summary(self) -> str:
        what = "escapes the guard" if self.kind == "escape" else "is a legitimate run the guard stops"
        stop = f"stopped after call {self.stopped_at}" if self.stopped_at is not None else "never stopped"
        return (
            f"{self.script.describe()}: {what} ({stop}); guarded {self.guarded_calls} model calls, "
            f"{_tokens(self.guarded_tokens)} tokens; unguarded {self.unguarded_calls} calls, "
            f"{_tokens(self.unguarded_tokens)} tokens"
        )


def _tokens(n: int | None) -> str:
    return "n/a" if n is None else str(n)


class AgentFuzzer:
    """Runs fuzz scripts under ``guard`` with the agent's ``tools`` (a Java object with ``@Tool`` methods).

    The agent is pyguard's own of ``style``, or yours: ``build(model)`` returns your Java agent built around the
    ``ChatModel`` it is given (``agent.chat(task)`` runs it). Its own round-trip cap should let a loop run past
    ``budget``: pyguard's agents get ``budget + 3``."""

    def __init__(
        self,
        guard: Guard,
        tools: Any,
        *,
        task: str = "Please help with my request.",
        budget: int = 10,
        style: str = "aiservices",
        build: Callable[[Any], Any] | None = None,
        values: Mapping[str, Sequence[Any]] | None = None,
        only: Sequence[str] = (),
    ) -> None:
        self.guard, self.tools, self.task, self.budget, self.style = guard, tools, task, budget, style
        self.build, self.values = build, values
        specs = tool_specs(tools)
        unknown = sorted(set(only) - {s.name for s in specs})
        if unknown:
            raise InputError(
                f"tool {unknown[0]!r}{did_you_mean(unknown[0], [s.name for s in specs])} is not one of the agent's "
                f"tools: {', '.join(s.name for s in specs)}"
            )
        self.specs = [s for s in specs if not only or s.name in only]
        """The tools the scripts call (``only``: a subset by name; the agent still has them all)."""

    def run(self, script: Misbehaviour) -> RunResult:
        """The script run on the agent, guarded."""
        model = scripted_model(script.scenario())
        if self.build is None:
            options = {"tools": self.tools, "max_tool_calling_round_trips": self.budget + 3}
            return self.guard.run(self.style, model, self.task, **options)
        with self.guard.start_run(task=self.task) as run:
            agent = self.build(run.wrap(model))
            run.call(lambda: agent.chat(self.task))
        return run.result

    def unguarded(self, script: Misbehaviour) -> tuple[int, int | None]:
        """The script run with no guard: the model calls and tokens the scripted model served."""
        model = scripted_model(script.scenario())
        if self.build is None:
            result = run_unguarded(
                self.style, model, self.task, tools=self.tools, max_tool_calling_round_trips=self.budget + 3
            )
            return result.model_calls, result.total_tokens
        try:
            self.build(model).chat(self.task)
        except Exception:  # noqa: BLE001 - the agent's own cap ends an unguarded loop with an exception
            pass
        return int(model.calls()), int(model.reportedInputTokens()) + int(model.reportedOutputTokens())

    def outcome(self, script: Misbehaviour) -> Outcome:
        result = self.run(script)
        stops = [d.iteration for d in result.decisions if d.action is Action.STOP and d.iteration is not None]
        return Outcome(model_calls=result.model_calls, stopped_at=min(stops) if stops else None)

    def escape(self, examples: int = 40) -> Finding | None:
        """The smallest misbehaviour the guard does not stop within the budget, or None."""
        found = find_escape(self.outcome, self.specs, budget=self.budget, examples=examples, values=self.values)
        return None if found is None else self._finding("escape", *found)

    def false_stop(self, examples: int = 20) -> Finding | None:
        """The smallest legitimate run (distinct calls, then an answer) the guard stops, or None."""
        found = find_false_stop(self.outcome, self.specs, examples=examples, values=self.values)
        return None if found is None else self._finding("false_stop", *found)

    def _finding(self, kind: str, script: Misbehaviour, outcome: Outcome) -> Finding:
        guarded = self.run(script)
        calls, tokens = self.unguarded(script)
        return Finding(
            kind=kind,
            script=script,
            guarded_calls=guarded.model_calls,
            guarded_tokens=guarded.total_tokens,
            stopped_at=outcome.stopped_at,
            unguarded_calls=calls,
            unguarded_tokens=tokens,
        )
