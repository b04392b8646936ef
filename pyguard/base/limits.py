"""Every limit on a guarded run's model calls, in one model: what each counts, who enforces it, where its default lives.

From the one that normally acts to the last resort (docs/architecture.md, "Which limit stops my run", has the table):

1. **The budget** (``PolicyConfig.base_budget``, ``earn_per_iteration``, ``extension``): the engine's, per user turn;
   earned by productive iterations. Outcome ``expired`` (rule ``budget``). Defaults: :mod:`pyguard.engine.config`.
2. **The hard cap** (``PolicyConfig.hard_cap``, per task type): the engine's, per user turn; the most the budget can
   grow to. Outcome ``expired``. Default 150 (:mod:`pyguard.engine.config`; why: :mod:`pyguard.engine.policy`).
3. **The run's caps** (``PolicyConfig.caps``: ``max_model_calls``, tokens, cost, time, ...): the engine's, over the
   whole run. Outcome ``expired`` (rule ``cap:<name>``). None by default. The pytest marker's ``max_iterations`` sets
   ``caps.max_model_calls``.
4. **The Java fail-safe** (``Guard(fail_safe_calls=...)``; ``max_model_calls`` is its deprecated name): Java's, per user turn, whatever Python does (it raises, it
   hangs past the callback deadline, it was never registered). Default :func:`fail_safe_cap`: the most model calls the
   policy allows in a turn (:func:`guard_ceiling`, ``caps.max_model_calls`` included) plus :data:`FAIL_SAFE_MARGIN`.
   Outcome ``guard_error`` when the guard failed, ``expired`` otherwise. A run built without a policy
   (:func:`pyguard.jvm.guard_model` / :func:`pyguard.jvm.run_agent` with ``max_model_calls=None``, or Java's
   ``GuardConfig.of``) gets Java's ``GuardConfig.DEFAULT_MAX_MODEL_CALLS``, whose only home is Java.
5. **The agent's own loop cap**, which pyguard does not own: ``max_tool_calling_round_trips`` (LangChain4j AiServices,
   per ``chat()`` call; LangChain4j's default :data:`LANGCHAIN4J_ROUND_TRIPS`, a nested system's sub-agents'
   :data:`NESTED_ROUND_TRIPS`) and ``max_loop_iterations`` (the agentic loop's iterations, each a sub-agent call of up
   to ``max_tool_calling_round_trips`` model calls; the explicit executor's model calls; default
   :data:`DEFAULT_LOOP_ITERATIONS`; a nested system's loop workflow: :data:`NESTED_LOOP_ITERATIONS`). Outcome
   ``expired`` ("the agent's own cap"). Both are agent options (:class:`pyguard.base.agent_options.AgentOptions`).

Each name means one thing. ``max_model_calls``: the policy's cap on model calls per run (``[caps]``); the Java
fail-safe per user turn is ``fail_safe_calls`` (``Guard(max_model_calls=)`` is its deprecated name; the low-level
:func:`pyguard.jvm.guard_model` keeps Java's ``GuardConfig`` spelling). ``max_iterations``: the pytest marker's cap on
model calls per run (it sets ``caps.max_model_calls``). ``max_loop_iterations``: an agent loop's own cap on its
iterations (:func:`pyguard.live.nested.run_nested`'s loop included). The old keywords still work, with a DeprecationWarning
(:func:`renamed_limit`, :func:`pyguard.base.agent_options.agent_options`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from pyguard.base.errors import ConfigError


class PolicyLimits(Protocol):
    """What the limits read of a policy (:class:`pyguard.engine.PolicyConfig` is one): typed here, so this module,
    which the engine imports, imports nothing of the engine."""

    @property
    def task_types(self) -> Iterable[str]: ...

    @property
    def caps(self) -> Any: ...

    def budget_for(self, task_type: str | None) -> Any: ...


__all__: list[str] = []

FAIL_SAFE_MARGIN = 5
"""Model calls the Java fail-safe allows beyond the most the policy allows in a turn (:func:`guard_ceiling`).

A healthy guard must always be the one that stops a run, and it stops one call late at most on the Java side: it
decides after model call *i* and Java applies the decision before call *i+1*; the start of a new user turn reaches
Java with the first decision of that turn, so Java's per-turn count runs one call behind there. A margin of 1 covers
both; the other 4 are slack against anything the engine counts differently from Java (a call the sensor could not
turn into an event, a conversation whose turns Python saw differently). A broken guard still gets no more than these
few calls past what the policy would ever allow."""

DEFAULT_LOOP_ITERATIONS = 10
"""The default of ``max_loop_iterations``: the agentic loop's iterations / the explicit executor's model calls."""

NESTED_LOOP_ITERATIONS = 5
"""The default ``max_loop_iterations`` of a nested system's loop workflow (:func:`pyguard.live.nested.run_nested` with
``kind="loop"``): how many times it runs its sub-agents in sequence before it gives up without the exit text. Five,
as pyguard's systems have had since run trees came (it was the keyword ``max_iterations``)."""

LANGCHAIN4J_ROUND_TRIPS = 100
"""LangChain4j's own default of ``maxToolCallingRoundTrips`` (AiServices), the default pyguard's builder keeps."""

NESTED_ROUND_TRIPS = 20
"""The default ``maxToolCallingRoundTrips`` of each sub-agent in pyguard's multi-agent systems
(:func:`pyguard.live.nested.run_nested`, :func:`pyguard.live.nested.run_nested_unguarded`), per invocation.

Why lower than :data:`LANGCHAIN4J_ROUND_TRIPS`: a sub-agent is invoked for one narrow request and its parent
re-plans between invocations, so one invocation needs a short loop, and a sub-agent stuck in one is cut off by
LangChain4j after 20 model calls instead of 100 (the unguarded baseline included). pyguard's systems have used 20
since run trees came (f4563d9); making it 100 would change what a stuck sub-agent costs. The nested suite's figures
do not depend on it: its scripted sub-agents take at most 7 round trips per invocation (``nested_tracker_stuck``: six
tool calls, then an answer)."""

JAVA_INT_MAX = 2**31 - 1
"""The largest cap Java takes (an ``int``)."""


def guard_ceiling(config: PolicyLimits) -> int:
    """The most model calls the policy lets a user turn make, whatever the task type: the largest hard cap, or the
    run's ``caps.max_model_calls`` when that is lower (a run cap bounds every turn of the run)."""
    ceiling = max(config.budget_for(t).hard_cap for t in (None, *config.task_types))
    if config.caps.max_model_calls is not None:
        ceiling = min(ceiling, config.caps.max_model_calls)
    return ceiling


def fail_safe_cap(config: PolicyLimits) -> int:
    """The Java fail-safe's default for a guard with this policy: :func:`guard_ceiling` + :data:`FAIL_SAFE_MARGIN`,
    at most :data:`JAVA_INT_MAX`."""
    return min(guard_ceiling(config) + FAIL_SAFE_MARGIN, JAVA_INT_MAX)


def renamed_limit(where: str, old: str, old_value: Any, new: str, new_value: Any) -> Any:
    """The value of limit ``new`` given to ``where``, also read from its deprecated name ``old`` (with a
    DeprecationWarning); both at once is a :class:`~pyguard.base.errors.ConfigError`."""
    if old_value is None:
        return new_value
    if new_value is not None:
        raise ConfigError(f"{where}: give {new}={new_value!r} or its deprecated name {old}={old_value!r}, not both")
    import warnings

    warnings.warn(f"{where}({old}=...) is now {new} (see pyguard.base.limits)", DeprecationWarning, stacklevel=3)
    return old_value
