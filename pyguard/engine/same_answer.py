"""The ``same_answer`` stall rule: one tool giving the same answer (template) to differently worded requests.

A result whose template (:mod:`pyguard.engine.templates`) matches an earlier result of the same tool for another
request says the same thing about a different request (a rephrased lookup failing again); ``same_answer_streak``
of them in a row is a stall, waited for once when the model's next request takes a value the answer suggested.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyguard.engine.conditions import StopHit
from pyguard.engine.config import StallConfig
from pyguard.engine.fingerprint import ActionFingerprint
from pyguard.engine.stall_report import action_hit
from pyguard.engine.steps import ActionResult

__all__ = ["SameAnswer"]

_MIN_SUGGESTION = 4
"""Shortest argument value (characters) that counts as taken from a result's suggestions."""


class SameAnswer:
    """Stateful, one per run (inside the stall detector)."""

    def __init__(self, config: StallConfig) -> None:
        self.config = config
        self.reset()

    def reset(self) -> None:
        self._templates: dict[tuple[str, str], str] = {}  # (tool, template) -> exact id of the first request
        self._template_streak: dict[str, int] = {}  # tool -> results in a row that matched an earlier template
        self.suggested = False
        """The current same-answer streak waited for a request the tool suggested."""

    def match(self, iteration: int, r: ActionResult) -> tuple[bool, StopHit | None]:
        """Whether ``r`` (the first result of its request) matches an earlier answer of its tool to another request,
        and the hit when the streak of such answers is long enough."""
        a = r.action
        assert a is not None
        if r.template is None or (r.write and not r.is_error) or not self.config.failure_templates:
            # a write's receipt says "done"; a write that failed changed nothing and is judged like a read
            self._template_streak.pop(a.tool, None)
            return False, None
        first = self._templates.setdefault((a.tool, r.template), a.exact_id)
        if first == a.exact_id:
            self._template_streak.pop(a.tool, None)
            return False, None
        count = self._template_streak.get(a.tool, 1) + 1
        self._template_streak[a.tool] = count
        needed = self.config.same_answer_streak or self.config.error_storm_length
        if count < needed:
            return True, None
        return True, action_hit(
            "same_answer",
            iteration,
            r,
            f"{a.tool} gave the same answer to {count} different requests in a row (the last: {a.short(80)}): "
            "rewording the request does not change what it returns.",
            {"requests": count, "template": r.template},
        )

    def follow_suggestions(self, stalls: list[StopHit], actions: Sequence[ActionFingerprint]) -> list[StopHit]:
        """Drop a ``same_answer`` hit, once per streak, when the model's next request takes an argument from the
        answer that was flagged (a suggestion the tool made: ``Similar: ['Scatman John', ...]``) that it has not
        asked for before: it is acting on what the tool said, so its result, not the answers before, will tell."""
        same = [h for h in stalls if h.rule == "same_answer"]
        if not same:
            self.suggested = False
            return stalls
        if self.suggested:
            return stalls
        subject = same[0].stall
        assert subject is not None  # made by match(): about one action
        text = (subject.sample or "").lower()
        asked = subject.fingerprints
        for a in actions:
            for v in a.arg_values:
                value = v.strip().lower()
                if len(value) >= _MIN_SUGGESTION and value in text and not any(value in f.lower() for f in asked):
                    self.suggested = True
                    return [h for h in stalls if h.rule != "same_answer"]
        return stalls
