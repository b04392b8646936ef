"""Which writes are attempts with new content: the ledger of one run's writes (one per run, like the detector).

A write with new content (an edit, a file created with a new body) is an attempt: a read repeated after it is a
check of the new state, not a loop. The ledger counts new writes in an *epoch*: a read whose last result arrived in
an earlier epoch is re-run after an attempt.
"""

from __future__ import annotations

from pyguard.engine.fingerprint import ActionFingerprint, normalised_value

__all__: list[str] = []

MAX_REAPPLIED = 2
"""A write with the same values (the same command, or one edit's ``old`` and ``new`` swapped or not) made this many
times in all is an attempt on a changed state each time; made a third time, it is no new attempt (the re-run after
it is judged as a repeat when its result comes back the same). With 3, the frontier's undo-and-redo loops went one
more round; on the recorded runs 2 stops no successful run more than 3 did, and 1 stopped 20 more successful coding
runs (a script regenerated after other edits). A write of two values or more that only puts back content the tool
already wrote (an undo, a line restored) is no new attempt at once (:meth:`WriteLedger.restores`)."""


class WriteLedger:
    """The writes of one run: how often each was applied, what each tool wrote, and the epoch (new writes so far)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.epoch = 0
        """New writes (attempts with new content) recorded so far."""
        self.fresh = False
        """The last write recorded carried values never written before (not a re-application)."""
        self._writes: dict[tuple[str, frozenset[str]], int] = {}  # (tool, argument values) -> times applied
        self._writes_exact: dict[str, int] = {}  # exact id of a write -> times applied
        self._last_write: str | None = None
        self._written: dict[str, set[str]] = {}  # tool -> every (normalised) value its successful writes carried

    def would_be_new(self, a: ActionFingerprint) -> bool:
        """True when the write ``a``, requested now, would be an attempt with new content (see :meth:`record`)."""
        if self._last_write == a.exact_id:
            return False
        values = frozenset(normalised_value(v) for v in a.arg_values)
        exact = self._writes_exact.get(a.exact_id, 0) + 1
        if exact == 1 and self.restores(a.tool, values):
            return False
        return self._writes.get((a.tool, values), 0) + 1 <= MAX_REAPPLIED and exact <= 2

    def restores(self, tool: str, values: frozenset[str]) -> bool:
        """A write of two values or more, every one of which this tool has written before (as what it wrote or as
        what it replaced): it puts back content the agent already had. A one-value write (a shell command) is left
        to the re-application rule: the same command after other writes acts on a changed state."""
        seen = self._written.get(tool)
        return seen is not None and len(values) >= 2 and values <= seen

    def record(self, a: ActionFingerprint) -> bool:
        """Record the (successful) write ``a``; True when it is an attempt with new content. Not new: the very same
        write again with nothing else written since; the same write a third time (two writes taking turns); or a
        change made and undone, then made again: more than :data:`MAX_REAPPLIED` writes with the same values,
        ``old`` and ``new`` swapped or not; or a write, never made before, of two values or more that this tool has
        all written before (``old`` and ``new`` of earlier edits: an undo, or text put back that an earlier edit
        replaced). A write re-applied once after other writes acts on a changed state (a script regenerated after
        other edits): new. A write that failed (an error result) changed nothing: the caller does not record it."""
        self.fresh = False
        if self._last_write == a.exact_id:
            return False  # the very same write again, nothing else written since
        values = frozenset(normalised_value(v) for v in a.arg_values)
        key = (a.tool, values)
        times = self._writes.get(key, 0) + 1
        self._writes[key] = times
        exact = self._writes_exact.get(a.exact_id, 0) + 1
        self._writes_exact[a.exact_id] = exact
        self._last_write = a.exact_id
        restores = exact == 1 and self.restores(a.tool, values)
        self._written.setdefault(a.tool, set()).update(values)
        if restores or times > MAX_REAPPLIED or exact > 2:
            return False  # content put back; the same change made, undone and made again; one write a third time
        self.epoch += 1
        self.fresh = times == 1
        return True
