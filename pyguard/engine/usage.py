"""What a run has used so far (model calls, tool calls, tokens, cost, time, the most repeated action): the frozen
:class:`UsageState` that caps read, kept by the run's own :class:`UsageTracker`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from pyguard.base.events import IterationEvent
from pyguard.engine.config import Price
from pyguard.engine.fingerprint import ActionFingerprint, fingerprint

__all__: list[str] = []


@dataclass(frozen=True, slots=True)
class UsageState:
    """What a run has used so far."""

    model_calls: int = 0
    tool_calls: int = 0
    tool_calls_by_tool: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    """The sum of :attr:`pyguard.base.events.IterationEvent.tokens` over the calls that reported usage (unknown counts 0)."""
    tokens_reported: bool = False
    """False while no model call has reported token usage."""
    cost: float = 0.0
    unpriced_calls: int = 0
    """Model calls whose model has no price (counted as cost 0)."""
    elapsed_s: float = 0.0
    most_identical: int = 0
    """How often the most repeated exact action was requested."""
    most_identical_action: str | None = None

    def as_dict(self) -> dict:
        return {
            "model_calls": self.model_calls,
            "tool_calls": self.tool_calls,
            "tool_calls_by_tool": dict(self.tool_calls_by_tool),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "cost": round(self.cost, 6),
            "unpriced_calls": self.unpriced_calls,
            "elapsed_s": round(self.elapsed_s, 6),
            "most_identical": self.most_identical,
            "most_identical_action": self.most_identical_action,
        }


class UsageTracker:
    """Accumulates one run's usage from its iteration events (one tracker per run). ``reset()`` starts over.

    ``state`` is the frozen snapshot; it is built when asked for (not at every event), so a policy that only
    needs it for caps or evidence does not pay for it on every model call."""

    def __init__(self, prices: Mapping[str, Price] | None = None) -> None:
        self.prices = dict(prices or {})
        self.reset()

    def reset(self) -> None:
        self._by_tool: Counter[str] = Counter()
        self._identical: Counter[str] = Counter()
        self._top: tuple[int, str | None] = (0, None)
        self._model_calls = 0
        self._tool_calls = 0
        self._input = self._output = self._total = 0
        self._reported = False
        self._cost = 0.0
        self._unpriced = 0
        self._elapsed = 0.0
        self._state: UsageState | None = UsageState()

    @property
    def state(self) -> UsageState:
        """What the run has used so far."""
        if self._state is None:
            self._state = UsageState(
                model_calls=self._model_calls,
                tool_calls=self._tool_calls,
                tool_calls_by_tool=MappingProxyType(dict(self._by_tool)),
                input_tokens=self._input,
                output_tokens=self._output,
                total_tokens=self._total,
                tokens_reported=self._reported,
                cost=self._cost,
                unpriced_calls=self._unpriced,
                elapsed_s=self._elapsed,
                most_identical=self._top[0],
                most_identical_action=self._top[1],
            )
        return self._state

    def price_of(self, model: str | None) -> Price | None:
        if model is not None and model in self.prices:
            return self.prices[model]
        return self.prices.get("*")

    def update(self, event: IterationEvent, elapsed_s: float) -> UsageState:
        """Count ``event`` (``elapsed_s``: seconds since the run started) and return the new state."""
        self.accumulate(event, elapsed_s)
        return self.state

    def accumulate(
        self, event: IterationEvent, elapsed_s: float, actions: Sequence[ActionFingerprint] | None = None
    ) -> None:
        """Count ``event`` like :meth:`update`, without building the state snapshot. ``actions``: the fingerprints of
        the event's tool calls, in order, when the caller has them already (else they are computed here)."""
        calls = event.tool_calls
        if calls:
            if actions is None:
                actions = [fingerprint(c.name, c.arguments) for c in calls]
            by_tool = self._by_tool
            identical = self._identical
            for call, fp in zip(calls, actions, strict=True):
                by_tool[call.name] = by_tool.get(call.name, 0) + 1
                n = identical.get(fp.exact_id, 0) + 1
                identical[fp.exact_id] = n
                if n > self._top[0]:
                    self._top = (n, fp.short())
        inp = event.input_tokens or 0
        out = event.output_tokens or 0
        tokens = event.tokens  # None: unknown, which a cap cannot count (the state says whether any call reported)
        if tokens is not None:
            self._total += tokens
            self._reported = True
        self._input += inp
        self._output += out
        if self.prices:
            price = self.price_of(event.model)
            if price is None:
                self._unpriced += 1
            else:
                self._cost += inp / 1e6 * price.input_per_mtok + out / 1e6 * price.output_per_mtok
        else:
            self._unpriced += 1
        self._model_calls += 1
        self._tool_calls += len(calls)
        self._elapsed = elapsed_s
        self._state = None
