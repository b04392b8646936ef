"""A run's shape: whether its agent revisits states as a matter of course, read from the run itself.

An agent that acts in an environment through one step tool (``act("left")``, ``move(north)``, a text game's
commands) has a small action vocabulary and sees the same observation again as it makes progress: a navigation
agent turns left, right, left and goes on; a puzzle agent pushes a box back and forth. There repetition is no
evidence of a loop, and the engine cannot read progress from the results (a room described again is not a
repeated *state* of the task). :class:`RunShape` reads three things from the run, never its source:

- **one step tool**: at least ``STEP_TOOL_SHARE`` of the tool calls go to one tool;
- **a small action vocabulary**: that tool's calls use at most ``MAX_VOCABULARY`` distinct (normalised) actions,
  short as a rule (at most ``LONG_SHARE`` of them over ``MAX_ACTION_CHARS`` characters of arguments: a text game's
  "COOK SLICED RED HOT PEPPER WITH STOVE" is a step, a coding agent's file written through its shell is not), and
  the run has made at least ``VOCABULARY_REUSE`` times as many calls as it has distinct actions (actions come back);
- **observations that recur in productive stretches**: after a revisit the run still finds results it never saw, and
  then revisits again (revisits amid exploration, not two states the run is stuck between).

Once all three have held (``revisits_expected``, from ``MIN_CALLS`` tool calls on, and it stays so for the rest of
the run: the shape is the agent's, so a new turn, such as a harness answering a reply it could not pass on, keeps it) the policy treats stall findings as reflections only and leaves stopping to the caps
(docs/architecture.md, the engine's principles); ``pyguard tune`` can then fit such a task type from labelled runs.
A coding agent's one ``bash`` tool does not qualify (its commands are many and long), nor does a lookup agent with
several tools.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyguard.engine.fingerprint import ActionFingerprint

__all__: list[str] = []

MIN_CALLS = 6
"""Tool calls before the shape is judged."""
STEP_TOOL_SHARE = 0.9
"""Share of the calls that one tool must take to be the run's step tool."""
MAX_VOCABULARY = 30
"""Most distinct actions of the step tool for a small vocabulary (a text game's commands: directions, take, open,
cook... over a run of up to a hundred turns)."""
VOCABULARY_REUSE = 1.2
"""Calls per distinct action the step tool must have made."""
MAX_ACTION_CHARS = 48
"""Longest arguments (characters, canonical form) of a short action."""
LONG_SHARE = 0.2
"""Most share of the step tool's calls whose arguments are longer than ``MAX_ACTION_CHARS``."""


class RunShape:
    """Stateful, one per run: ``observe`` each step's actions and result keys in order."""

    def __init__(self) -> None:
        self._calls = 0
        self._by_tool: dict[str, int] = {}
        self._vocabulary: dict[str, set[str]] = {}
        self._long: dict[str, int] = {}
        self._seen: set[str] = set()
        self._revisited = False
        self._new_since_revisit = False
        self._revisit_after_new = False
        self.revisits_expected = False
        """True once the run showed the shape of an environment-step agent (sticky for the run)."""

    def observe(self, actions: Sequence[ActionFingerprint], result_keys: Sequence[str]) -> bool:
        """Take one step (its requested actions, its results' keys) and return :attr:`revisits_expected`."""
        for a in actions:
            self._calls += 1
            self._by_tool[a.tool] = self._by_tool.get(a.tool, 0) + 1
            self._vocabulary.setdefault(a.tool, set()).add(a.norm_id)
            if len(a.canonical) - len(a.tool) - 2 > MAX_ACTION_CHARS:
                self._long[a.tool] = self._long.get(a.tool, 0) + 1
        for key in result_keys:
            if key in self._seen:
                if self._new_since_revisit:
                    self._revisit_after_new = True
                self._revisited = True
            else:
                self._seen.add(key)
                # new after a revisit: the run went on exploring from a state it had seen
                self._new_since_revisit = self._new_since_revisit or self._revisited
        if not self.revisits_expected and self._calls >= MIN_CALLS:
            self.revisits_expected = self._judge()
        return self.revisits_expected

    def _judge(self) -> bool:
        tool, calls = max(self._by_tool.items(), key=lambda kv: kv[1])
        if calls < STEP_TOOL_SHARE * self._calls or self._long.get(tool, 0) > LONG_SHARE * calls:
            return False
        vocabulary = len(self._vocabulary[tool])
        return vocabulary <= MAX_VOCABULARY and calls >= VOCABULARY_REUSE * vocabulary and self._revisit_after_new
