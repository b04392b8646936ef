"""What every candidate of a search reads alike, read once per run: the run's tool results as the engine measures
them (:class:`~pyguard.engine.results.ResultReader`: novelty, keys, error kind, template, emptiness).

The stall candidates of ``pyguard tune`` differ only in stall thresholds and reflection settings: each candidate's
engine pairs the same results with the same calls, and its novelty memory sees the same texts in the same order, so
the reader's answers are the same under every candidate (up to where a candidate's engine stops the run). A
:class:`SharedReading` keeps one live reader per run and the answers it gave; a session attached to it
(:meth:`SharedReading.attach`) takes the answers already given and asks the live reader only for the ones no
earlier candidate reached. The profile in docs/performance.md: reading the results was 42% of a probe pass.

Valid only for sessions whose reading is set alike (:func:`reading_key`: the novelty settings, failure templates,
the tool tables and the turn rule); :func:`pyguard.tune.probe.probe_many` keeps one reading per run and key.
``tests/unit/tune/test_tune_shared.py`` holds the shared passes to the unshared ones, probe by probe.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyguard.base.errors import PyguardError
from pyguard.base.events import IterationEvent, Observation
from pyguard.engine.config import PolicyConfig
from pyguard.engine.results import Pending, ResultReader
from pyguard.engine.session import RunSession
from pyguard.engine.steps import ActionResult

__all__: list[str] = []


def reading_key(config: PolicyConfig) -> tuple[Any, ...]:
    """What a session's reading of its results depends on besides the run: configs with equal keys read alike."""
    return (
        config.novelty.model_dump_json(),
        config.stall.failure_templates,
        config.tools.model_dump_json(),
        config.budget_per_turn,
        config.judge_results_early,
    )


class _Resets:
    """Stands for the live reader's novelty estimator in a session: the session resets it when a turn opens, which
    the shared reading applies to the live estimator only when that read is computed for the first time."""

    __slots__ = ("asked",)

    def __init__(self) -> None:
        self.asked = False

    def reset(self) -> None:
        self.asked = True


class _View:
    """One session's reader: the shared answers in order, the live reader for the ones not given yet."""

    __slots__ = ("_shared", "_next", "estimator")

    def __init__(self, shared: SharedReading) -> None:
        self._shared = shared
        self._next = 0
        self.estimator = _Resets()

    def read(self, pending: Sequence[Pending], event: IterationEvent) -> tuple[ActionResult, ...]:
        return self.read_observations(pending, event.observations)

    def read_observations(
        self, pending: Sequence[Pending], observations: Sequence[Observation]
    ) -> tuple[ActionResult, ...]:
        k = self._next
        self._next += 1
        reset, self.estimator.asked = self.estimator.asked, False
        return self._shared.answer(k, pending, observations, reset)


class SharedReading:
    """One run's reading, shared by the sessions of every candidate replaying that run (one thread)."""

    def __init__(self) -> None:
        self._reader: ResultReader | None = None
        self._answers: list[tuple[ActionResult, ...]] = []
        self._asked: list[Sequence[Observation]] = []
        self.computed = 0
        """Reads computed by the live reader (the rest were shared): for tests and the profile."""

    def attach(self, session: RunSession) -> None:
        """Make ``session`` (fresh, nothing observed yet) read its results through this reading."""
        if session.iterations:
            raise PyguardError(f"run {session.run_id!r}: attach a shared reading before the first observe")
        if self._reader is None:
            self._reader = session._reader
        session._reader = _View(self)  # type: ignore[assignment]  # the reader's interface, shared

    def answer(
        self, k: int, pending: Sequence[Pending], observations: Sequence[Observation], reset: bool
    ) -> tuple[ActionResult, ...]:
        """The ``k``-th read of the run (0-based): given before, or computed now by the live reader."""
        if k < len(self._answers):
            if self._asked[k] is not observations:
                raise PyguardError(
                    f"shared reading: read {k + 1} of a session is of other results than the first session's; the"
                    " sessions sharing one reading must replay the same run with the same reading settings"
                )
            return self._answers[k]
        if k != len(self._answers) or self._reader is None:
            raise PyguardError(f"shared reading: read {k + 1} asked before read {len(self._answers) + 1}")
        if reset:
            self._reader.estimator.reset()
        results = self._reader.read_observations(pending, observations)
        self._answers.append(results)
        self._asked.append(observations)
        self.computed += 1
        return results
