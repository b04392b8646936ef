"""One run of a run tree (:class:`NestedRun`): the root (a supervisor or a workflow) or a child (one sub-agent
invocation), with its budget node, its children and what its engine sees of them; :mod:`pyguard.live.nested` opens trees
and runs pyguard's multi-agent systems on it (the module docstring there says how the two kinds of parent see their
children).
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from pyguard.base.decisions import Action, Decision
from pyguard.base.ending import stop_outcome
from pyguard.base.errors import RunError
from pyguard.base.events import IterationEvent, Observation, Outcome, RunRecord, ToolCall
from pyguard.base.limits import FAIL_SAFE_MARGIN
from pyguard.base.safe_reader import loads
from pyguard.engine.tree import BudgetNode, TreeLimits
from pyguard.jvm.nested import agent_tree
from pyguard.live.run import GuardedRun, Reads, RunHost

if TYPE_CHECKING:  # pragma: no cover
    from pyguard.result import RunResult

__all__: list[str] = []


ParentKind = Literal["supervisor", "workflow", "agent"]
RECOVERY_PREFIX = "[pyguard] sub-agent"
"""How the result a stopped child hands its parent begins."""
_GUARD_STOPS = (Outcome.STALLED, Outcome.EXPIRED, Outcome.ESCALATED)


def supervisor_invocation(text: str | None) -> tuple[str, str] | None:
    """``(agent_name, canonical JSON arguments)`` of a LangChain4j supervisor planner's response, or None when the
    text is not an agent invocation. The planner answers ``{"agentName": "x", "arguments": {...}}`` (possibly inside
    a Markdown code fence); ``"done"`` ends the supervisor."""
    if not text:
        return None
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        obj = loads(text[start : end + 1], source="a supervisor's response")  # the one safe reader: depth, integers
    except ValueError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("agentName"), str):
        return None
    args = obj.get("arguments")
    return obj["agentName"], json.dumps(args if isinstance(args, dict) else {}, sort_keys=True, ensure_ascii=False)


class NestedRun(GuardedRun):
    """One run of a run tree: the root (a supervisor or workflow) or a child (one sub-agent invocation).

    Made by :func:`start_tree` (the root) and by the root's Java ``AgentTree`` (children, one per invocation)."""

    wraps_up = False
    """A stop in a tree ends the tree through its exception (no wrap-up answer: see GuardedRun.wraps_up)."""

    def __init__(
        self,
        guard: RunHost,
        *,
        run_id: str,
        task: str | None,
        task_type: str | None,
        kind: ParentKind,
        budget: BudgetNode,
        parent: NestedRun | None = None,
        child_limits: TreeLimits | None = None,
        agent_style: str | None = None,
    ) -> None:
        super().__init__(
            guard,
            run_id=run_id,
            task=task,
            task_type=task_type,
            agent_style=agent_style or kind,
            parent_run_id=None if parent is None else parent.run_id,
        )
        self.kind = kind
        self.parent = parent
        self.budget = budget
        self.child_limits = child_limits
        """Each child's own limits (capped by this run's remainder when it starts); None: the remainder only."""
        self.child_runs: list[NestedRun] = []
        self._tree_lock = threading.RLock()
        self._pending: list[Observation] = []
        """Results of invocations this run's engine has not seen yet (they go into its next event)."""
        self._open: dict[str, list[NestedRun]] = {}
        self._closed: dict[str, NestedRun] = {}
        self._reported: set[str] = set()
        self._counts: Counter[str] = Counter()
        self._steps = 0
        self._imposed: tuple[Outcome, str, str] | None = None
        """A stop the tree imposed on this run (its budget ran out): outcome, reason, rule."""
        self._java_tree: Any = None

    def fail_safe_calls(self) -> int:
        """The Java fail-safe of a run in a tree holds it to the model calls its budget has left too (plus the named
        margin, :data:`pyguard.base.limits.FAIL_SAFE_MARGIN`), so the tree's remainder holds even if Python fails. In
        observe or reflect mode the tree's budget stops nothing, so the guard's own fail-safe only."""
        own = super().fail_safe_calls()
        if self.mode != "enforce":
            return own
        left = self.budget.remaining().model_calls
        return own if left is None else max(1, min(own, left + FAIL_SAFE_MARGIN))

    # -- the engine's view -------------------------------------------------------------------------------------------

    def observe(self, event: IterationEvent) -> Decision | None:
        """One model call of this run (the Java sensor calls this): charged to the tree, seen by the engine (a
        supervisor's as a tool call over its sub-agents), then the tree's budget is checked."""
        if self.kind == "supervisor":
            event = self._as_supervisor_event(event)
        self.budget.charge_event(event, self.guard.config.caps.prices)
        decision = super().observe(event)
        if decision is not None and decision.stops:
            return decision
        hit = self.budget.exhausted()
        if hit is not None:
            self._impose(Outcome.EXPIRED, hit.message, hit.rule)
        return decision

    def _as_supervisor_event(self, event: IterationEvent) -> IterationEvent:
        with self._tree_lock:
            results = tuple(self._pending)
            self._pending.clear()
        invocation = supervisor_invocation(event.text) if event.error is None else None
        calls: tuple[ToolCall, ...] = ()
        if invocation is not None and invocation[0] != "done":
            calls = (ToolCall(id=f"invoke_{event.index}", name=invocation[0], arguments=invocation[1]),)
        # The planner's request re-states the task and quotes the last response as a user message: the task counts
        # once (first call), the results arrive as the invocations' observations.
        observations = (event.observations if event.index == 1 else ()) + results
        return event.model_copy(update={"tool_calls": calls, "observations": observations})

    def _workflow_step(
        self, agent_name: str | None, inputs_json: str = "", answer: str | None = None
    ) -> Decision | None:
        """One step of a workflow: a sub-agent invocation (its tool call), or its end (``agent_name`` None: the answer).
        Steps are taken one at a time (a parallel workflow's invocations too), so the trace stays in order."""
        if self.mode != "enforce":
            self.stopping()  # records the tree's stop this step would have been refused for (observe, reflect)
        with self._tree_lock:
            results = tuple(self._pending)
            self._pending.clear()
            self._steps += 1
            index = self._steps
            task = (Observation(kind="user", text=self.start.task),) if index == 1 and self.start.task else ()
            calls = (
                () if agent_name is None else (ToolCall(id=f"invoke_{index}", name=agent_name, arguments=inputs_json),)
            )
            event = IterationEvent(
                run_id=self.run_id,
                index=index,
                tool_calls=calls,
                observations=task + results,
                text=answer,
                task_type=self.task_type,
                timestamp_ms=time.time() * 1000.0,
            )
            return GuardedRun.observe(self, event)  # a step, not a model call: nothing to charge

    def drive(
        self, execute: Callable[[Any], Any], *, build: Callable[[], Any] | None = None, reads: Reads = "bridge"
    ) -> RunResult:
        """Run the system and end this run from what happened (see :meth:`GuardedRun.drive`). A workflow that
        returns has a last step: its answer, with the results of the invocations since its previous step."""
        if self.kind != "workflow":
            return super().drive(execute, build=build, reads=reads)

        def run_workflow(system: Any) -> Any:
            value = execute(system)
            self._workflow_step(None, answer=None if value is None else str(value))
            return value

        return super().drive(run_workflow, build=build, reads=reads)

    def _impose(self, outcome: Outcome, reason: str, rule: str) -> None:
        if self.mode != "enforce":  # observe and reflect never stop a run: the tree's stop is recorded, not made
            with self._lock:
                if self.observed_stop is None:
                    last = self.events[-1].index if self.events else 0  # 0: before its first model call
                    self.observed_stop = Decision(
                        action=Action.STOP, reason=reason, rule=rule, outcome=outcome, iteration=last
                    )
            return
        with self._tree_lock:
            if self._imposed is None:
                self._imposed = (outcome, reason, rule)
        if self._guarded is not None:
            self._guarded.request_stop(outcome, reason, rule)

    def stopping(self) -> tuple[Outcome, str, str] | None:
        """Why this run takes no more steps (its engine stopped it, the tree did, or an ancestor is stopping), or None.
        In observe or reflect mode always None: a stop is only recorded (the tree's by :meth:`_impose`)."""
        if self.mode != "enforce":
            hit = self.budget.exhausted()
            if hit is not None:
                self._impose(Outcome.EXPIRED, hit.message, hit.rule)
            return None
        stop = self.session.stopped
        if stop is not None:
            return stop_outcome(stop.outcome), stop.reason, stop.rule or "stop"
        if self._imposed is None:
            hit = self.budget.exhausted()
            if hit is not None:
                self._impose(Outcome.EXPIRED, hit.message, hit.rule)
        if self._imposed is not None:
            return self._imposed
        if self.parent is not None:
            return self.parent.stopping()
        return None

    # -- children (called by the Java AgentTree) ---------------------------------------------------------------------

    def agent_tree(self) -> Any:
        """This run's Java ``dev.pyguard.bridge.nested.AgentTree`` (made once): route each sub-agent through it."""
        if self._java_tree is None:
            self._java_tree = agent_tree(self)
        return self._java_tree

    def open_child(self, agent_name: str, inputs_json: str, base: Any) -> Any:
        """A sub-agent invocation begins: a child run on ``base``; returns its guarded Java model."""
        if self.kind == "workflow" and self.stopping() is None:
            self._workflow_step(agent_name, inputs_json)
        with self._tree_lock:
            self._counts[agent_name] += 1
            child_id = f"{self.run_id}-{agent_name}-{self._counts[agent_name]}"
        node = self.budget.child(child_id, self.child_limits)
        child = NestedRun(
            self.guard,
            run_id=child_id,
            task=_request_of(inputs_json),
            task_type=self.task_type,
            kind="agent",
            budget=node,
            parent=self,
            agent_style=f"subagent:{agent_name}",
        )
        with self._tree_lock:
            self.child_runs.append(child)
            self._open.setdefault(agent_name, []).append(child)
        guarded = child.guarded_model(base)
        stop = self.stopping()
        if stop is not None:
            why = f"its parent run {self.run_id!r} was stopped before this invocation: {stop[1]}"
            if stop[0] is Outcome.EXPIRED:
                child._impose(Outcome.EXPIRED, why, stop[2])
            else:
                child.cancel(why)
        else:
            hit = node.exhausted()
            if hit is not None:
                child._impose(Outcome.EXPIRED, hit.message, hit.rule)
        return guarded.java

    def close_child(self, agent_name: str, output: str | None, error: Any) -> None:
        """The invocation ended: finish its child run; a result goes to this run's next event."""
        with self._tree_lock:
            stack = self._open.get(agent_name) or []
            child = stack.pop() if stack else None
            if child is not None:
                self._closed[agent_name] = child
        if child is None:
            return
        if error is None:
            child.call(lambda: output)
            self._report(child, agent_name, output or "", is_error=False)
        else:
            child.call(lambda: _raise(error))

    def recovery(self, agent_name: str, error: Any) -> str | None:
        """What a failed invocation hands its parent: a line saying its guard stopped it, or None (the error goes on)."""
        with self._tree_lock:
            open_child = bool(self._open.get(agent_name))
        if open_child:  # the error handler came before the listener's error event
            self.close_child(agent_name, None, error)
        with self._tree_lock:
            child = self._closed.get(agent_name)
        if child is None or child._result is None or self.stopping() is not None:
            return None
        result = child._result
        if result.outcome not in _GUARD_STOPS:
            return None
        text = f"{RECOVERY_PREFIX} {agent_name!r} was stopped by its guard ({result.outcome}): {result.reason}"
        self._report(child, agent_name, text, is_error=True)
        return text

    def _report(self, child: NestedRun, agent_name: str, text: str, *, is_error: bool) -> None:
        with self._tree_lock:
            if child.run_id in self._reported:
                return
            self._reported.add(child.run_id)
            self._pending.append(
                Observation(kind="tool", tool_call_id=child.run_id, tool_name=agent_name, text=text, is_error=is_error)
            )

    # -- the result ------------------------------------------------------------------------------------------------

    def _close_unfinished(self) -> None:
        with self._tree_lock:
            left = [c for c in self.child_runs if c._result is None]
        for child in left:
            child.call(lambda: _raise(RunError(f"its parent run {self.run_id!r} ended first")))

    @property
    def result(self) -> RunResult:
        """This run's result with its children (each with theirs), in the order they started."""
        base = super().result
        self._close_unfinished()
        with self._tree_lock:
            children = tuple(c.result for c in self.child_runs)
        evidence = {**base.end.evidence, "tree": self.budget.summary()}
        record = RunRecord(
            start=base.record.start, events=base.record.events, end=base.end.model_copy(update={"evidence": evidence})
        )
        return base.model_copy(update={"children": children, "record": record})


def _request_of(inputs_json: str) -> str | None:
    try:
        inputs = loads(inputs_json, source="an agent invocation's inputs")
    except ValueError:
        return inputs_json
    if isinstance(inputs, dict) and isinstance(inputs.get("request"), str):
        return inputs["request"]
    return inputs_json


def _raise(error: Any) -> Any:
    raise error
