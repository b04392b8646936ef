"""The ``nothing_new`` stall rule: a long stretch of the run in which almost no result was new to the run.

Repeats are no evidence of a loop where the agent revisits states as a matter of course (an agent acting in an
environment through one step tool: :mod:`pyguard.engine.run_shape`): a navigation agent walks back through rooms it
has seen, a game's "You can't go that way." comes again. What such an agent's productive stretches still show is
*something new now and then*: a room, an item, an answer never seen before in the run. ``nothing_new_window``
tool-using calls in a row (``[stall]``, 35 by default) in which at most ``nothing_new_max_new`` (2) results were new to the run (their prepared text, volatile tokens and
echoed arguments masked, never seen before in this turn) is the late, safe signal that the run goes round: the hit
earns a reflection like any stall; it stops the run when the window holds a reflection already (the model read one
and nothing new came since: :func:`pyguard.engine.answered.persisting`), for runs of any shape.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from pyguard.base.decisions import Action
from pyguard.engine.conditions import StallSubject, StopHit
from pyguard.engine.stall_report import stall_hit
from pyguard.engine.steps import ActionResult

__all__: list[str] = []


class NothingNew:
    """Stateful, one per turn (inside the stall detector): ``observe`` each call's results in order. ``window`` and
    ``max_new`` are the stall config's ``nothing_new_window`` and ``nothing_new_max_new``."""

    def __init__(self, window: int, max_new: int) -> None:
        self.window = window
        self.max_new = max_new
        self._seen: set[str] = set()
        self._new: deque[tuple[int, bool]] = deque(maxlen=window)

    def observe(self, iteration: int, results: Sequence[ActionResult]) -> StopHit | None:
        """Take call ``iteration``'s results; the hit when the window is full and holds at most ``max_new`` calls
        with a result new to the run."""
        keys = [r.result_key for r in results if r.action is not None]
        if not keys:
            return None  # a call answered by no tool (a harness message): neither new nor old
        new = False
        for key in keys:
            if key not in self._seen:
                self._seen.add(key)
                new = True
        self._new.append((iteration, new))
        if len(self._new) < self.window:
            return None
        fresh = sum(n for _, n in self._new)
        if fresh > self.max_new:
            return None
        since = self._new[0][0]
        tools = sorted({r.action.tool for r in results if r.action is not None})
        return stall_hit(
            "nothing_new",
            f"In the last {self.window} calls with tool results (since call {since}) only {fresh} brought a result "
            "not seen before in this run: the run keeps coming back to what it has already seen.",
            {"window": self.window, "new": fresh, "since": since, "distinct_results": len(self._seen)},
            StallSubject(iteration, tool=tools[0] if len(tools) == 1 else None),
            Action.REFLECT,
        )
