"""What one conversation has spent across its runs, against its ``[conversation]`` limits
(:class:`~pyguard.engine.conversation_limits.ConversationLimits`). Pure Python, thread-safe (one lock per
conversation: two turns of one memory id may run at once on two threads).

A :class:`ConversationLedger` is charged with every model call of every run of its conversation
(:meth:`ConversationLedger.charge_event`); :meth:`ConversationLedger.exhausted` names the first limit reached, a
:class:`~pyguard.engine.conditions.StopHit` with rule ``conversation_budget:<dimension>`` and outcome ``expired``;
:class:`ConversationBudget` is the stop condition a run of the conversation is judged by (beside its policy's), so
the stop is an engine decision like a cap's: in the run's decisions, its trace and its footer. As with caps, a limit
of N stops once N is *reached*: the model call that reaches it is the last one.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pyguard.base.events import IterationEvent, Outcome
from pyguard.engine.conditions import RunState, StopCondition, StopHit
from pyguard.engine.config import Price
from pyguard.engine.conversation_limits import ConversationLimits
from pyguard.engine.tree import event_cost

__all__: list[str] = []

RULE = "conversation_budget"
"""The rule prefix of a stop by a conversation's budget (``conversation_budget:model_calls``, ...)."""


@dataclass(frozen=True, slots=True)
class ConversationSpend:
    """What a conversation has used so far, all its runs together."""

    runs: int = 0
    model_calls: int = 0
    tool_calls: int = 0
    tokens: int = 0
    cost: float = 0.0
    tokens_partial: bool = False
    """True when some model call reported no usage: :attr:`tokens` is then a lower bound."""
    tools: Mapping[str, int] = field(default_factory=dict)
    """Tool calls requested, by tool."""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "runs": self.runs,
            "model_calls": self.model_calls,
            "tool_calls": self.tool_calls,
            "tokens": self.tokens,
            "cost": round(self.cost, 6),
        }
        if self.tokens_partial:
            out["tokens_partial"] = True
        return out


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.4g}"


class ConversationLedger:
    """One conversation's spend against its limits. ``prices`` (``[caps.prices]``) price its cost."""

    def __init__(
        self, conversation_id: str, limits: ConversationLimits, prices: Mapping[str, Price] | None = None
    ) -> None:
        self.id = conversation_id
        self.limits = limits
        self.prices = dict(prices or {})
        self._lock = threading.Lock()
        self._spend = ConversationSpend()
        self.run_ids: list[str] = []
        """The runs of this conversation since it began (or was last reset), in the order they started."""

    @property
    def spend(self) -> ConversationSpend:
        with self._lock:
            return self._spend

    def add_run(self, run_id: str) -> None:
        """A run (one user turn) of this conversation begins."""
        with self._lock:
            self.run_ids.append(run_id)
            self._spend = replace(self._spend, runs=self._spend.runs + 1)

    def charge_event(self, event: IterationEvent) -> None:
        """Charge one model call: itself, the tool calls it requested, its tokens (none when unreported, then
        partial) and its cost."""
        cost = event_cost(event, self.prices) if self.prices else 0.0
        with self._lock:
            s = self._spend
            tools = dict(s.tools)
            for call in event.tool_calls:
                tools[call.name] = tools.get(call.name, 0) + 1
            self._spend = replace(
                s,
                model_calls=s.model_calls + 1,
                tool_calls=s.tool_calls + len(event.tool_calls),
                tokens=s.tokens + (event.tokens or 0),
                cost=s.cost + cost,
                tokens_partial=s.tokens_partial or not event.tokens_complete,
                tools=tools,
            )

    def charge_tokens(self, tokens: int) -> None:
        """Charge tokens billed outside the run's model calls (a wrap-up's)."""
        if tokens > 0:
            with self._lock:
                self._spend = replace(self._spend, tokens=self._spend.tokens + tokens)

    def exhausted(self) -> StopHit | None:
        """The first limit reached (model calls, tool calls, tokens, cost), or None."""
        lim, s = self.limits, self.spend
        checks = (
            ("model_calls", lim.max_model_calls, s.model_calls),
            ("tool_calls", lim.max_tool_calls, s.tool_calls),
            ("tokens", lim.max_tokens, s.tokens),
            ("cost", lim.max_cost, s.cost),
        )
        for dimension, limit, used in checks:
            if limit is not None and used >= limit:
                return StopHit(
                    f"{RULE}:{dimension}",
                    Outcome.EXPIRED,
                    f"the conversation's budget ran out: {_fmt(used)} {dimension.replace('_', ' ')} of"
                    f" conversation {self.id!r} reach its limit of {_fmt(limit)}",
                    {"conversation": self.id, "dimension": dimension, "limit": float(limit), "used": float(used)},
                )
        return None

    def reset(self) -> ConversationSpend:
        """Start the budget afresh (the conversation goes on); returns what it had spent."""
        with self._lock:
            spent, self._spend = self._spend, ConversationSpend()
            self.run_ids = []
            return spent

    def summary(self) -> dict[str, Any]:
        """The conversation's id, limits and spend (a run's footer evidence ``conversation``)."""
        limits = self.limits.model_dump(mode="json", exclude_none=True, exclude={"tool_limits"})
        tool_limits = {t: c.limit for t, c in sorted(self.limits.tool_limits.items())}
        out: dict[str, Any] = {"id": self.id, "limits": limits, "spent": self.spend.as_dict()}
        if tool_limits:
            out["tool_limits"] = tool_limits
        return out


class ConversationBudget(StopCondition):
    """The stop condition of a run of a conversation: fires when the conversation's ledger is exhausted. It reads the
    live ledger, not the run state (the run's own calls are charged to the ledger before each check), and has no
    configuration of its own (``[conversation]`` is the policy's): the run's session is built with it."""

    def __init__(self, ledger: ConversationLedger) -> None:
        self.ledger = ledger

    def check(self, state: RunState) -> StopHit | None:
        return self.ledger.exhausted()

    def __deepcopy__(self, memo: dict) -> ConversationBudget:
        return self  # every run of the conversation reads the one live ledger

    def __repr__(self) -> str:
        return f"ConversationBudget({self.ledger.id!r})"
