"""Conversation budgets of an attached agent (:class:`pyguard.live.agent_guard.AgentGuard`): the ``[conversation]`` limits
(:class:`pyguard.engine.conversation_limits.ConversationLimits`) hold across every user turn of one conversation.

A conversation is one chat-memory id of the agent (give the agent ``agent_guard.memory_ids()`` as its AiServices
``chatRequestTransformer``, so the guard learns which memory each model call serves), or, without it, one thread.
Each turn is a :class:`pyguard.live.agent_guard.ConversationRun`: a guarded run whose engine also judges the conversation's budget
(:class:`pyguard.engine.conversation_budget.ConversationBudget`), so the turn that crosses it stops there (outcome
``expired``, rule ``conversation_budget:<dimension>``, in its decisions, trace and result) and the turns before it
keep their results; a later turn of a spent conversation stops before its first model call.

::

    agent_guard = guard.attach(model)
    agent = MyAgent.create(agent_guard.model, agent_guard.tools(my_tools), agent_guard.before_tool_execution(),
                           agent_guard.memory_ids())           # AiServices ...chatRequestTransformer(hook)
    agent.chat("alice", "Where is order 12345?")
    agent_guard.results[-1].conversation_id                   # "alice"
    agent_guard.conversation("alice").spent                   # what alice's conversation used so far
    agent_guard.conversation("alice").reset()                 # a fresh budget, the conversation goes on
    agent_guard.conversation("alice").end()                   # forgotten: the next turn starts a new one
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from pyguard.base.errors import ConfigError
from pyguard.engine.conditions import StopCondition
from pyguard.engine.conversation_budget import ConversationBudget, ConversationLedger, ConversationSpend
from pyguard.engine.session import RunSession
from pyguard.jvm.tool_limits import conversation_tool_limits

__all__: list[str] = []

KEEP_CONVERSATIONS = 10_000
"""Conversations an attached agent's guard keeps at most; past it the one idle longest is forgotten (its next turn
starts a new conversation, with a fresh budget)."""


def conversation_session(policy: Any, ledger: ConversationLedger, run_id: str, task_type: str | None) -> RunSession:
    """A run's engine session under ``policy`` whose stop condition is the policy's OR ``ledger``'s budget."""
    return RunSession(_WithConversation(policy, ConversationBudget(ledger)), run_id=run_id, task_type=task_type)


class _WithConversation:
    """The guard's policy as a run's session sees it, its stop condition OR-ed with the conversation's budget."""

    def __init__(self, policy: Any, budget: StopCondition) -> None:
        self._policy = policy
        self._budget = budget
        self.config = policy.config
        self.clock = policy.clock
        self.estimator_factory = policy.estimator_factory

    def condition_for_run(self) -> StopCondition:
        return self._policy.condition_for_run() | self._budget

    def _run_settings(self, task_type: str | None) -> Any:
        return self._policy._run_settings(task_type)


class ConversationEntry:
    """One conversation the guard keeps: its ledger and, with ``[conversation.tool_limits]``, its Java limits."""

    def __init__(self, ledger: ConversationLedger, java_limits: Any) -> None:
        self.ledger = ledger
        self.java_limits = java_limits


class Conversations:
    """The conversations of one attached agent, by id (thread-safe)."""

    def __init__(self, host: Any, *, keep: int = KEEP_CONVERSATIONS) -> None:
        if keep < 1:
            raise ConfigError(f"keep={keep!r}: an attached agent keeps at least one conversation")
        self.host = host
        self.keep = keep
        self.forgotten = 0
        """Conversations forgotten because more than :attr:`keep` were open."""
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, ConversationEntry] = OrderedDict()

    def entry(self, conversation_id: str) -> ConversationEntry:
        """The conversation ``conversation_id`` (made on first use), now the most recently used."""
        with self._lock:
            entry = self._entries.get(conversation_id)
            if entry is not None:
                self._entries.move_to_end(conversation_id)
                return entry
            limits = self.host.config.conversation
            ledger = ConversationLedger(conversation_id, limits, self.host.config.caps.prices)
            entry = ConversationEntry(
                ledger, conversation_tool_limits(limits.tool_limits) if limits.tool_limits else None
            )
            self._entries[conversation_id] = entry
            while len(self._entries) > self.keep:
                self._entries.popitem(last=False)
                self.forgotten += 1
            return entry

    def drop(self, conversation_id: str) -> ConversationEntry | None:
        with self._lock:
            return self._entries.pop(conversation_id, None)

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._entries)


def thread_conversation() -> str:
    """The conversation of the calling thread, for an agent whose memory id the guard is not told."""
    return f"thread-{threading.get_ident()}"


class Conversation:
    """One conversation of an attached agent (:meth:`pyguard.live.agent_guard.AgentGuard.conversation`): what it spent,
    against which limits, and the two ways to finish with a budget: :meth:`reset` and :meth:`end`."""

    def __init__(self, conversations: Conversations, conversation_id: str) -> None:
        self._conversations = conversations
        self.id = conversation_id

    @property
    def _entry(self) -> ConversationEntry:
        return self._conversations.entry(self.id)

    @property
    def spent(self) -> ConversationSpend:
        """What the conversation used since it began (or was last reset): runs, model calls, tool calls, tokens, cost."""
        return self._entry.ledger.spend

    @property
    def run_ids(self) -> list[str]:
        """Its runs (user turns) since it began or was last reset, in the order they started."""
        return list(self._entry.ledger.run_ids)

    @property
    def exhausted(self) -> str | None:
        """Why its budget is spent (the reason its next turn would stop with), or None while it has budget left."""
        hit = self._entry.ledger.exhausted()
        return None if hit is None else hit.message

    def summary(self) -> dict[str, Any]:
        """Its id, limits and spend (as a run's footer evidence ``conversation`` records them)."""
        return self._entry.ledger.summary()

    def reset(self) -> ConversationSpend:
        """Start its budget afresh, the conversation (and the agent's chat memory) going on; returns what it had
        spent. A turn running now keeps what it was charged before the reset."""
        entry = self._entry
        if entry.java_limits is not None:
            entry.java_limits.reset()
        return entry.ledger.reset()

    def end(self) -> ConversationSpend:
        """End it: the guard forgets it (its next turn, if any, starts a new conversation with a fresh budget);
        returns what it spent. The agent's chat memory is yours to evict (``ChatMemoryAccess.evictChatMemory``)."""
        entry = self._conversations.drop(self.id)
        return ConversationSpend() if entry is None else entry.ledger.spend
