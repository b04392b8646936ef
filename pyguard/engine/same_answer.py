"""The ``same_answer`` stall rule: results that say what an earlier failure said, in other words.

A result whose template (:mod:`pyguard.engine.templates`: echoed arguments, numbers and ids masked) matches an
earlier result of the same tool for another request says the same thing about a different request (a rephrased
lookup failing again): it brings no new information, wherever it falls in the turn. A structured result with no
template (rows, a record, a list: nothing in it tied to the request) that is neither an error nor empty counts when
it is the very same data as an earlier answer to another request (its prepared text: volatile tokens and echoes masked): a reworded query returning the rows it
returned before (``[(143,)]`` to four spellings of one filter). ``same_answer_streak`` such
results since the run's last real progress (a result that brought something new, a write of new content: the stall
detector's progress count) are a stall; other results in between (a "No results" from another tool, a dull re-read)
do not reset the count, progress does. The hit is waited for once when the model's request takes a value a flagged
answer suggested (``Similar: ['Scatman John', ...]``): it is acting on what the tool said.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyguard.engine.conditions import StopHit
from pyguard.engine.config import StallConfig
from pyguard.engine.fingerprint import ActionFingerprint
from pyguard.engine.stall_report import action_hit
from pyguard.engine.steps import ActionResult

__all__: list[str] = []

_DATA_OPENS = ("[", "{", "(")
"""How a structured result (rows, a record, a list) opens; prose is judged by its template alone."""
_MIN_SUGGESTION = 4
"""Shortest argument value (characters) that counts as taken from a result's suggestions."""


class SameAnswer:
    """Stateful, one per run (inside the stall detector)."""

    def __init__(self, config: StallConfig) -> None:
        self.config = config
        self.reset()

    def reset(self) -> None:
        self._templates: dict[tuple[str, str], str] = {}  # (tool, template) -> exact id of the first request
        self._count = 1  # results (the first one counted as 1) matching an earlier failure since the last progress
        self._progress = 0  # the detector's progress count when the count last restarted
        self._sample: tuple[str, tuple[str, ...]] | None = None
        """The last matching answer's text and the request it answered (what a suggestion is taken from)."""
        self._before: tuple[str, tuple[str, ...]] | None = None
        """The matching answer before it."""
        self.suggested = False
        """The current same-answer count waited for a request the tool suggested."""

    def match(self, iteration: int, r: ActionResult, progress: int = 0) -> tuple[bool, StopHit | None]:
        """Whether ``r`` (the first result of its request) matches an earlier answer of its tool to another request,
        and the hit when such answers since the run's last progress (``progress``: the detector's count of results
        that brought something) are ``same_answer_streak`` or more."""
        a = r.action
        assert a is not None
        if progress != self._progress:  # real progress since: the count starts again
            self._progress = progress
            self._count = 1
            self.suggested = False
        template = r.template
        if template is None and not r.is_error and not r.empty and r.text.lstrip()[:1] in _DATA_OPENS:
            # no part of it tied to the request: the very same data (rows, a record; echoes and volatile tokens
            # masked) answering a reworded request is the same answer too (three queries, one count)
            template = "=" + r.result_key
        if template is None or (r.write and not r.is_error) or not self.config.failure_templates:
            # a write's receipt says "done"; a write that failed changed nothing and is judged like a read
            return False, None
        first = self._templates.setdefault((a.tool, template), a.exact_id)
        if first == a.exact_id:
            return False, None
        self._count += 1
        count = self._count
        self._before, self._sample = self._sample, (r.text.lower(), (a.canonical,))
        needed = self.config.same_answer_streak or self.config.error_storm_length
        if count < needed:
            return True, None
        return True, action_hit(
            "same_answer",
            iteration,
            r,
            f"{a.tool} gave the same answer to {count} different requests (the last: {a.short(80)}) since anything "
            "new came in: rewording the request does not change what it returns.",
            {"requests": count, "template": template},
        )

    def follow_suggestions(
        self, stalls: list[StopHit], actions: Sequence[ActionFingerprint], *, paired: bool = False
    ) -> list[StopHit]:
        """Drop a ``same_answer`` hit, once per count, when the model takes an argument from a flagged answer (a
        suggestion the tool made) that it has not asked for before: it is acting on what the tool said, so its
        result, not the answers before, will tell. Unpaired, ``actions`` are the next requests, read against the hit's
        own answer; paired (``actions`` produced the results judged now), against the answer before."""
        same = [h for h in stalls if h.rule == "same_answer"]
        if not same:
            if not paired:
                self.suggested = False
            return stalls
        if self.suggested:
            return stalls
        subject = same[0].stall
        assert subject is not None  # made by match(): about one action
        if paired:
            source = self._before
            if source is None:
                return stalls
            text, asked = source
        else:
            text, asked = (subject.sample or "").lower(), subject.fingerprints
        for a in actions:
            for v in a.arg_values:
                value = v.strip().lower()
                if len(value) >= _MIN_SUGGESTION and value in text and not any(value in f.lower() for f in asked):
                    self.suggested = True
                    return [h for h in stalls if h.rule != "same_answer"]
        return stalls
