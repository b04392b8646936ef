"""The ``[conversation]`` table of a policy: budgets that hold across every user turn of one conversation of an attached
agent (every ``chat()`` of one chat-memory id, or of one thread when the agent has no memory id), beside ``[caps]``,
which hold per run (one ``chat()``). LangChain v1's ``ModelCallLimitMiddleware(thread_limit=...)`` and
``ToolCallLimitMiddleware(thread_limit=...)`` are the peers' names for the same. The live accounting is
:mod:`pyguard.engine.conversation_budget`; the attached agent's conversations, :mod:`pyguard.conversation_runs`.

::

    [conversation]
    max_model_calls = 40
    max_tokens = 200000
    [conversation.tool_limits]
    send_email = { limit = 3, exit = "continue" }
"""

from __future__ import annotations

from pydantic import Field

from pyguard.engine.config_tables import ToolLimitConfig
from pyguard.engine.strict_config import StrictConfig

__all__ = ["ConversationLimits"]


class ConversationLimits(StrictConfig):
    """Limits of one conversation, across its runs; None (every default) leaves a dimension unlimited. A limit of N
    means "at most N", as with ``[caps]``: once N is reached the conversation's run stops (outcome ``expired``, rule
    ``conversation_budget:<dimension>``) before using more, and every later turn of that conversation stops before
    its first model call, until the conversation is reset or ended (``AgentGuard.conversation(id).reset()`` /
    ``.end()``)."""

    max_model_calls: int | None = Field(default=None, ge=1)
    """Model calls of every run of the conversation together."""
    max_tool_calls: int | None = Field(default=None, ge=1)
    """Tool calls requested by the model, all tools, all runs of the conversation together."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Total tokens as the provider reported them (a call that reported none adds nothing, and the evidence says the
    count is partial)."""
    max_cost: float | None = Field(default=None, gt=0)
    """Cost, priced with ``[caps.prices]`` (0 for an unpriced model)."""
    tool_limits: dict[str, ToolLimitConfig] = Field(default_factory=dict)
    """Executions of one tool across the conversation, with the exit behaviour of ``[caps.tool_limits]``
    (``continue``: that call is not run, the model reads why, the run goes on; ``end``; ``error``). A call is admitted
    only within both its run's and its conversation's limit."""

    @property
    def enabled(self) -> bool:
        """True when any limit is set."""
        return any(
            v is not None for v in (self.max_model_calls, self.max_tool_calls, self.max_tokens, self.max_cost)
        ) or bool(self.tool_limits)
