"""Run trees: guard a LangChain4j multi-agent system (a supervisor or a workflow of sub-agents) as one tree of runs.

Every invocation of a sub-agent is a **child run** with its own engine session, its own guarded model and its own
trace (its ``run_start`` names its parent: ``parent_run_id``). Budgets compose down the tree
(:mod:`pyguard.engine.tree`): a child gets at most what its parent has left (model calls, tokens, cost, time), and
what a child spends is charged to its parent. One level up, the parent's engine sees its sub-agent invocations as its
own tool calls and their results as its observations, so a supervisor that invokes the same sub-agent with the same
request and gets the same result is a repeat like any other (reflected on, then stopped ``stalled``)::

        from pyguard.live.nested import SubAgent, run_nested
    from pyguard.engine.tree import TreeLimits

    result = run_nested(Guard(trace_dir="traces"), "supervisor", "Where is order 12345?",
                        [SubAgent("tracker", tracker_model), SubAgent("notifier", notifier_model)],
                        planner=planner_model, limits=TreeLimits(model_calls=60, tokens=50_000))
    result.outcome, result.tree_model_calls, [c.outcome for c in result.children]

Your own system: open a :class:`NestedRun` with :func:`start_tree`, build the supervisor on ``run.wrap(planner)``
and each sub-agent on ``run.agent_tree().childModel(name, model)`` with ``.listener(run.agent_tree())``, give the
supervisor or workflow ``.errorHandler(run.agent_tree().errorHandler())``, then ``run.call(...)`` (docs/nested.md).

How the two kinds of parent see their children:

- **supervisor** (``kind="supervisor"``): the parent's model calls are the planner's. A planner response naming a
  sub-agent (``{"agentName": ..., "arguments": {...}}``) is the parent's tool call; the results of the invocations that
  ran since its previous model call are the observations of its next one. ``"done"`` is its answer.
- **workflow** (``kind="workflow"``, a sequence or loop without a model of its own): each invocation is one step of
  the parent (its tool call), carrying the previous invocation's result as its observation. A STOP of the parent keeps
  the next invocation from making any model call; a reflection has no model to go to and is only recorded.

A child stopped by its own guard (stalled, over its budget) hands its parent a one-line result saying so (through the
system's error handler), so the parent decides what to do next, as it would with a failing tool. A parent that is
stopped stops the whole system: its next child is cancelled before its first model call.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Unpack

from pyguard.base.agent_options import AgentOptions, agent_options
from pyguard.base.ending import TokenTotals, token_totals
from pyguard.base.errors import ConfigError
from pyguard.base.events import IterationEvent, RunRecord
from pyguard.engine.tree import BudgetNode, TreeLimits
from pyguard.jvm import guard_model, tool_set
from pyguard.jvm.nested import SubAgent, SystemKind, build_system
from pyguard.live.nested_run import RECOVERY_PREFIX, NestedRun, supervisor_invocation
from pyguard.live.run import RunHost, new_run_id

if TYPE_CHECKING:  # pragma: no cover
    from pyguard.result import RunResult

__all__ = ["RECOVERY_PREFIX", "NestedRun", "SubAgent", "TreeLimits", "supervisor_invocation"]


class SubAgentKeywords(TypedDict, total=False):
    """The agent options a system uses (:class:`pyguard.AgentOptions`' fields; each :class:`SubAgent` has its own
    model and tools): the sub-agents' round trips and a loop workflow's iterations (default
    :data:`pyguard.base.limits.NESTED_LOOP_ITERATIONS`; ``max_iterations`` is its deprecated name):
    :func:`run_nested_unguarded`'s keywords."""

    max_tool_calling_round_trips: int | None
    max_loop_iterations: int | None
    max_iterations: int | None


class TreeKeywords(SubAgentKeywords, total=False):
    """:func:`run_nested`'s agent-option keywords: the sub-agents' and the root run's task type and id."""

    task_type: str | None
    run_id: str | None


def _uses(keywords: Any) -> tuple[str, ...]:
    """The agent options a system's keywords name (a deprecated name is read as its new one)."""
    return tuple(k for k in keywords.__optional_keys__ if k != "max_iterations")


def start_tree(
    guard: RunHost,
    *,
    kind: Literal["supervisor", "workflow"],
    task: str | None = None,
    task_type: str | None = None,
    run_id: str | None = None,
    limits: TreeLimits | None = None,
    child_limits: TreeLimits | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> NestedRun:
    """Open the root of a run tree: ``limits`` bound the whole tree, ``child_limits`` each invocation (within what is
    left). A supervisor's planner goes through :meth:`NestedRun.wrap`; sub-agents through :meth:`NestedRun.agent_tree`."""
    if kind not in ("supervisor", "workflow"):
        raise ConfigError(f"kind={kind!r}: a run tree's root is a 'supervisor' (with a planner model) or a 'workflow'")
    run_id = run_id or new_run_id()
    return NestedRun(
        guard,
        run_id=run_id,
        task=task,
        task_type=task_type,
        kind=kind,
        budget=BudgetNode.root(run_id, limits, clock=clock),
        child_limits=child_limits,
    )


def run_nested(
    guard: RunHost,
    kind: SystemKind | str,
    task: str,
    agents: Sequence[SubAgent],
    *,
    planner: Any = None,
    limits: TreeLimits | None = None,
    child_limits: TreeLimits | None = None,
    max_agents_invocations: int = 10,
    exit_when_contains: str = "DONE",
    options: AgentOptions | None = None,
    **keywords: Unpack[TreeKeywords],
) -> RunResult:
    """Run one of pyguard's multi-agent systems (``NestedAgents``: a ``supervisor`` with ``planner`` over ``agents``,
    a ``sequence`` or a ``loop`` of them) guarded as a run tree; returns the root's result with its children.
    ``options`` (:class:`pyguard.AgentOptions`) or keywords: the root's ``task_type`` and ``run_id``, the
    sub-agents' ``max_tool_calling_round_trips`` (default :data:`pyguard.base.limits.NESTED_ROUND_TRIPS`) and a loop's
    ``max_loop_iterations`` (default :data:`pyguard.base.limits.NESTED_LOOP_ITERATIONS`; ``max_iterations`` is its
    deprecated name)."""
    options = agent_options("run_nested", options, keywords, uses=_uses(TreeKeywords))
    run = start_tree(
        guard,
        kind="supervisor" if kind == "supervisor" else "workflow",
        task=task,
        task_type=options.task_type,
        run_id=options.run_id,
        limits=limits,
        child_limits=child_limits,
    )
    run.drive(
        lambda system: system.run(task),
        build=lambda: build_system(
            kind,
            agents,
            tree=run.agent_tree(),
            planner=None if planner is None else run.wrap(planner),
            max_agents_invocations=max_agents_invocations,
            exit_when_contains=exit_when_contains,
            options=options,
        ),
        reads="value",
    )
    return run.result


class UnguardedTree:
    """What the same system did with LangChain4j's own limits only: answer or error, model calls and tokens."""

    def __init__(self, answer: str | None, error: str | None, events: list[IterationEvent]) -> None:
        self.answer = answer
        self.error = error
        self.events = events

    @property
    def model_calls(self) -> int:
        return len(self.events)

    @property
    def tokens(self) -> TokenTotals:
        """The tree's tokens (:func:`pyguard.base.ending.token_totals`): the known sum, partial when some call reported
        none."""
        return token_totals(self.events)

    @property
    def total_tokens(self) -> int | None:
        """:attr:`tokens`' total: None when no call reported usage (unknown, never 0)."""
        return self.tokens.total


def run_nested_unguarded(
    kind: SystemKind | str,
    task: str,
    agents: Sequence[SubAgent],
    *,
    planner: Any = None,
    max_agents_invocations: int = 10,
    exit_when_contains: str = "DONE",
    options: AgentOptions | None = None,
    **keywords: Unpack[SubAgentKeywords],
) -> UnguardedTree:
    """The baseline: the same system on the same models, observed (every model call counted), never acted on.
    ``options`` or keywords: the sub-agents' ``max_tool_calling_round_trips``, as for :func:`run_nested`."""
    options = agent_options("run_nested_unguarded", options, keywords, uses=_uses(SubAgentKeywords))

    events: list[IterationEvent] = []
    lock = threading.Lock()

    def sink(event: IterationEvent) -> None:
        with lock:
            events.append(event)

    def observed(model: Any, name: str) -> Any:
        return guard_model(model, sink, run_id=f"unguarded.{name}", observe_only=True).java

    watched = [
        SubAgent(
            a.name, observed(a.model, a.name), a.tools if a.tools is not None else _tools_of(a.model), a.description
        )
        for a in agents
    ]
    system = build_system(
        kind,
        watched,
        planner=None if planner is None else observed(planner, "planner"),
        max_agents_invocations=max_agents_invocations,
        exit_when_contains=exit_when_contains,
        options=options,
    )
    try:
        answer = system.run(task)
        return UnguardedTree(None if answer is None else str(answer), None, events)
    except Exception as exc:
        return UnguardedTree(None, f"{type(exc).__name__}: {exc}", events)


def _tools_of(model: Any) -> Any:
    return tool_set(None, model)


def run_tree(records: Sequence[RunRecord]) -> dict[str | None, list[str]]:
    """The tree of recorded runs (e.g. ``load_runs(trace_dir)``): parent run id -> child run ids in file order; the
    key None lists the top-level runs. Runs written before run trees existed are top-level."""
    tree: dict[str | None, list[str]] = {}
    for record in records:
        tree.setdefault(record.start.parent_run_id, []).append(record.run_id)
    return tree
