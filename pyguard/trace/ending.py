"""How an imported run ended: finished on its own, or cut off — one rule for every importer.

- A run whose last model call answered without a tool call finished on its own.
- A run whose last model call requested a *terminal* tool — one that ends the run by itself: ``finish``,
  ``submit``, a purchase, a hand-off to a human — finished on its own too: its outcome is its label
  (``finish[wrong answer]`` with a failed label is a failed run, not a censored one).
- A run the recording says was cut off (the agent hit its own step or cost limit, the harness force-quit it)
  is *censored*: ``RunEnd.censored`` is True, ``evidence["cut_off"]`` says why. So is a recording that ends
  while the model still requests an ordinary tool (nobody knows how it would have gone on).

The default guess of terminal names is :data:`DEFAULT_TERMINAL_TOOLS` (plus any name starting with
``transfer_to_`` or ``handoff``); ``terminal_tools=`` replaces the guess with the names given.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from pyguard.base.ending import Causes, footer, settle
from pyguard.base.events import IterationEvent, RunEnd

__all__: list[str] = []

DEFAULT_TERMINAL_TOOLS: frozenset[str] = frozenset(
    {
        "finish",
        "final_answer",
        "answer",
        "submit",
        "submit_answer",
        "done",
        "task_complete",
        "complete_task",
        "end_conversation",
        "end_task",
        "exit",
        "stop",
        "terminate",
        "return_answer",
        "transfer_to_human_agents",
        "transfer_to_human",
        "escalate_to_human",
        "handoff",
        "hand_off",
        "buy",
        "buy_now",
        "purchase",
        "checkout",
        "place_order",
    }
)
"""Tool names (compared case-insensitively, ``-``/space read as ``_``) that end a run when called last."""

_PREFIXES = ("transfer_to_", "handoff")


def _norm(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


def normalise_tool_names(names: Iterable[str] | str | None) -> frozenset[str] | None:
    """``"finish, submit"`` or ``["finish", "submit"]`` -> a set of normalised names; None stays None."""
    if names is None:
        return None
    if isinstance(names, str):
        names = names.split(",")
    return frozenset(_norm(n) for n in names if n.strip())


def is_terminal(name: str, terminal_tools: frozenset[str] | None = None) -> bool:
    """Does calling ``name`` end the run? ``terminal_tools`` (normalised) replaces the default guess."""
    n = _norm(name)
    if terminal_tools is not None:
        return n in terminal_tools
    return n in DEFAULT_TERMINAL_TOOLS or n.startswith(_PREFIXES)


def build_end(
    run_id: str,
    events: list[IterationEvent],
    *,
    label: bool | None,
    imported_from: str,
    source: str,
    terminal_tools: frozenset[str] | None = None,
    finished: bool | None = None,
    cut_off: str | None = None,
    answer: str | None = None,
    evidence: dict[str, Any] | None = None,
) -> RunEnd:
    """The footer of an imported run.

    ``cut_off`` (e.g. "step_limit", "cost_limit", "force_terminated") says the recording itself marks the run
    as cut off; ``finished=True`` says the importer knows the run ended on its own (e.g. mini-swe-agent's
    "Submitted"); otherwise the last call decides (an answer or a terminal tool: finished; any other tool: cut
    off). ``answer`` overrides the last message's text as the run's answer.
    """
    last = events[-1]
    ev: dict[str, Any] = {"imported_from": imported_from, "source": source, **(evidence or {})}
    ended_by = next((c.name for c in last.tool_calls if is_terminal(c.name, terminal_tools)), None)
    if cut_off is None and not finished and last.tool_calls and ended_by is None:
        cut_off = "recording_ends"
    censored = cut_off is not None
    if cut_off is not None:
        ev["cut_off"] = cut_off
    elif ended_by is not None:
        ev["ended_by_tool"] = ended_by
    settled = settle(
        Causes(
            expired=None
            if cut_off is None
            else "recording ends while the model still requests tools (cut off)"
            if cut_off == "recording_ends"
            else f"cut off by the agent's harness ({cut_off.replace('_', ' ')})",
            failed="recorded as failed" if label is False else None,
            ended="recorded as successful" if label else "the run ended on its own (no outcome label recorded)",
        )
    )
    if answer is None and not censored:
        answer = last.text
        if ended_by is not None:
            call = next(c for c in last.tool_calls if c.name == ended_by)
            answer = call.arguments or last.text
    return footer(run_id, events, settled, answer=answer, evidence=ev, success_label=label, censored=censored)
