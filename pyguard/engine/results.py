"""A model call's tool results as the stall rules read them: each result paired with the call it answers
(:func:`pair`) and measured (:class:`ResultReader`: novelty, keys, error kind, template, emptiness)."""

from __future__ import annotations

from collections.abc import Sequence

from pyguard.base.events import IterationEvent, Observation, ToolCall
from pyguard.engine.config import NoveltyConfig
from pyguard.engine.fingerprint import ActionFingerprint, run_key
from pyguard.engine.novelty import NoveltyEstimator, ShingleNovelty, prepare_text
from pyguard.engine.result_kinds import error_kind, is_empty_result
from pyguard.engine.steps import ActionResult
from pyguard.engine.templates import request_words, template_key
from pyguard.engine.waits import is_pending_result
from pyguard.engine.window import observed_text

__all__: list[str] = []

Pending = tuple[ToolCall, ActionFingerprint, int, bool, bool]
"""A call requested in the previous iteration: the call, its fingerprint, the iteration, whether it is a write and
whether it waits."""


def pair(pending: Sequence[Pending], observations: Sequence[Observation]):
    """Pair tool observations with the calls requested in the previous iteration: by id, then by tool name in
    order, then in order. Yields (observation, (call, fingerprint, requested_at, write) or None)."""
    if len(observations) == 1 and len(pending) == 1:  # the commonest case: one call, its one result
        obs = observations[0]
        p = pending[0]
        if obs.kind == "tool" and obs.tool_call_id is not None and obs.tool_call_id == p[0].id:
            return [(obs, p)]
    if len(observations) <= len(pending):  # the usual case: results in the order of the calls, ids matching
        for obs, p in zip(observations, pending, strict=False):
            if obs.kind != "tool" or obs.tool_call_id is None or obs.tool_call_id != p[0].id:
                break
        else:
            return list(zip(observations, pending, strict=False))
    free = list(range(len(pending)))
    out = []
    for obs in observations:
        match = None
        if obs.kind == "tool" and free:
            if obs.tool_call_id is not None:
                match = next((k for k in free if pending[k][0].id == obs.tool_call_id), None)
            if match is None and obs.tool_name is not None:
                match = next((k for k in free if pending[k][0].name == obs.tool_name), None)
            if match is None and obs.tool_call_id is None and obs.tool_name is None:
                match = free[0]
        if match is not None:
            free.remove(match)
        out.append((obs, pending[match] if match is not None else None))
    return out


class ResultReader:
    """Measures one run's tool results with its novelty estimator (which remembers what the run has seen)."""

    def __init__(self, novelty_config: NoveltyConfig, estimator: NoveltyEstimator, failure_templates: bool) -> None:
        self.novelty_config = novelty_config
        self.estimator = estimator
        self._shingles = estimator if isinstance(estimator, ShingleNovelty) else None
        self.failure_templates = failure_templates

    def novelty(self, text: str, echo: tuple[str, ...]) -> tuple[float, str]:
        """Novelty of a result: its share of new content, or, for a large result, its new characters measured
        against ``novelty.absolute_chars`` (whichever is larger), in [0, 1]; and its prepared text."""
        ncfg = self.novelty_config
        prepared = prepare_text(text, echo, ncfg.mask_volatile)
        if self._shingles is not None:
            novelty = self._shingles.score_prepared(prepared)
        else:
            novelty = float(self.estimator.observe(text, echo))
        novelty = min(max(novelty, 0.0), 1.0)
        novelty = max(novelty, min(1.0, novelty * len(prepared) / ncfg.absolute_chars))
        return novelty, prepared

    def read(self, pending: Sequence[Pending], event: IterationEvent) -> tuple[ActionResult, ...]:
        """The results ``event`` brought, each paired with the call of ``pending`` it answers."""
        return self.read_observations(pending, event.observations)

    def read_observations(
        self, pending: Sequence[Pending], observations: Sequence[Observation]
    ) -> tuple[ActionResult, ...]:
        """The tool results ``observations``, each paired with the call of ``pending`` it answers."""
        results = []
        templates = self.failure_templates
        for obs, match in pair(pending, observations):
            text = observed_text(obs.text)  # at most a fixed window of it: a decision's cost does not grow with it
            # an observation that answers no requested call (a user message, an unmatched result) has no action,
            # so no raw key, template or write flag
            fp, requested_at, write, wait = None, None, False, False
            if match is not None:
                _call, fp, requested_at, write, wait = match
            novelty, prepared = self.novelty(text, () if fp is None else fp.arg_values)
            results.append(
                ActionResult(
                    fp,
                    novelty,
                    run_key(prepared),
                    obs.is_error,
                    error_kind(prepared) if obs.is_error else None,
                    requested_at,
                    text,
                    obs.kind == "tool" and is_empty_result(prepared),
                    None if fp is None else run_key(text),
                    template_key(prepared, request_words(fp.arg_values)) if templates and fp is not None else None,
                    write,
                    wait,
                    fp is not None and is_pending_result(prepared),
                )
            )
        return tuple(results)
