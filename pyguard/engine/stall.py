"""Stall detection: from each iteration's action results, the iteration's gain and the stall flags.

The :class:`StallDetector` receives one :class:`Step` per iteration (the results that arrived in that model call's
request, each paired with the action that produced it, and the actions the model requested in its response) and
returns a :class:`StallReport`: the iteration's information gain and zero or more :class:`StallFlag`, each with its
evidence. Rules:

- ``repeat_no_gain``: an action repeated (exact or normalised fingerprint) whose result is unchanged (same text
  once volatile tokens and echoed arguments are masked) as the last time;
- ``cycle``: the same, when other actions came in between (A, B, A, B ... or A, B, C, A ...);
- ``error_storm``: ``error_storm_length`` consecutive errors of the same kind from the same tool with unchanged
  (normalised) inputs, even when the error texts differ (request ids, numbers);
- ``low_gain_streak``: ``low_gain_streak`` consecutive iterations whose gain is below ``low_gain_threshold``
  (``low_gain_streak_after_reflection`` once the run has had a reflection); ``empty_streak`` (and
  ``empty_streak_after_reflection``) when every result of the streak was empty.

An *empty* result (:func:`is_empty_result`: only an empty container, or a short no-data phrase such as "No matching
records found.") scores zero gain, even the first time it is seen (``empty_results_no_gain``), so a run that keeps
finding nothing is low-gain from its first empty answer, and a streak of nothing but empty answers is a stall one
iteration sooner than a streak of dull ones (a dull result may still hold a clue; "nothing" holds none). A repeated
action whose result changed is still credited as below.

What is *not* flagged: polling whose result changes, pagination (different arguments, new content), re-running
the same command after something changed (its output differs). A repeated action whose result changed is credited
``changed_result_gain`` even when its text is mostly the same, so polling and re-runs are not low-gain either.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pyguard.engine.config import StallConfig
from pyguard.engine.fingerprint import ActionFingerprint, normalised_value, short_digest

__all__ = ["ActionResult", "Step", "StallFlag", "StallReport", "StallDetector", "error_kind", "is_empty_result"]

_NEGLIGIBLE_CHANGE = 0.01
"""A changed result whose novelty is below this (a few characters of a large text) changed negligibly."""
_MAX_REAPPLIED = 2
"""A write with the same values (the same command, or one edit's ``old`` and ``new`` swapped or not) made this many
times in all is an attempt on a changed state each time; made a third time, it is no new attempt (the re-run after
it is judged as a repeat when its result comes back the same). With 3, the frontier's undo-and-redo loops went one
more round; on the recorded runs 2 stops no successful run more than 3 did, and 1 stopped 20 more successful coding
runs (a script regenerated after other edits). A write of two values or more that only puts back content the tool
already wrote (an undo, a line restored) is no new attempt at once (``StallDetector._restores``)."""
_MIN_SUGGESTION = 4
"""Shortest argument value (characters) that counts as taken from a result's suggestions."""
_TOKENS = re.compile(r"[\w\u2400\u2405-]+")
"""A run of word characters, masks, echo marks and dashes: a token whose digits make it a value, not a kind."""
_DIGIT = re.compile(r"\d")
_ERROR_KIND_CHARS = 200
_EMPTY_MAX_CHARS = 120
"""Longest prepared text that can be an empty result; anything longer says something."""
_NOUNS = (
    r"(?:records?|results?|rows?|items?|entries|entry|documents?|docs|matches|match|hits?|data|events?|logs?|files?)"
)
_NO_DATA = re.compile(
    r"(?:no (?:matching |such )?" + _NOUNS + r"(?: (?:were |was )?(?:found|returned|available|matched))?"
    r"|(?:0|zero) " + _NOUNS + r"(?: (?:were |was )?(?:found|returned|matched))?"
    r"|(?:\w+ ){0,2}not found"
    r"|nothing (?:found|returned|to show)"
    r"|none|null|nil|empty|no data|no content|\(empty\)|\(no results?\)"
    r")"
)
"""A whole result (punctuation, masked and echoed values removed) that only says "nothing"."""
_PUNCTUATION = re.compile(r"[^\w ]+|_")
"""Everything but letters, digits and spaces (an underscore counts as punctuation: ``not_found``)."""


def _void(value: Any) -> bool:
    """A JSON value that carries nothing: null, an empty string, list or object, a masked or echoed value only, or
    an object of such values, zeros and ``false`` with at least one empty collection (``{"items": [], "total": 0}``)."""
    if value is None or (isinstance(value, (list, dict, str)) and not value):
        return True
    if isinstance(value, str):
        return not value.strip(" \u2400\u2405")
    if not isinstance(value, dict):
        return False
    collections = 0
    for v in value.values():
        if isinstance(v, (bool, int, float)):
            if v:
                return False
        elif not _void(v):
            return False
        elif isinstance(v, (list, dict)):
            collections += 1
    return collections > 0


def is_empty_result(prepared: str) -> bool:
    """True when ``prepared`` (a result text after :func:`pyguard.engine.novelty.prepare_text`) is nothing but an
    empty result: blank or only echoed arguments; a JSON ``[]``, ``{}``, ``null`` or an object of empty collections and zeros; or a short
    no-data phrase ("no matching records found", "0 rows returned", "order not found", "none"). Conservative: a
    text longer than 120 characters, or one that says anything besides "nothing", is not empty."""
    text = prepared.strip()
    if len(text) > _EMPTY_MAX_CHARS:
        return False
    if not text.strip("\u2405 "):
        return True  # blank, or only the action's own arguments echoed back
    if text[0] in "[{" or text == "null":
        try:
            return _void(json.loads(text))
        except ValueError:
            return False
    words = " ".join(_PUNCTUATION.sub(" ", text.replace("\u2400", " ").replace("\u2405", " ")).split())
    return bool(words) and _NO_DATA.fullmatch(words) is not None


def error_kind(prepared: str) -> str:
    """The kind of an error from its prepared text: tokens with digits masked, first 200 characters.

    Linear in the text and stops once 200 characters of the masked form are built, so a tool error of any size or
    shape costs the same (a single pattern ``[\\w-]*\\d[\\w-]*`` was quadratic on a long token without digits)."""
    out: list[str] = []
    n = 0
    pos = 0
    for m in _TOKENS.finditer(prepared):
        if m.start() > pos:
            out.append(prepared[pos : m.start()])
            n += m.start() - pos
            if n >= _ERROR_KIND_CHARS:
                break
        token = m.group()
        piece = "#" if _DIGIT.search(token) else token
        out.append(piece)
        n += len(piece)
        pos = m.end()
        if n >= _ERROR_KIND_CHARS:
            break
    else:
        out.append(prepared[pos : pos + _ERROR_KIND_CHARS])
    return short_digest("".join(out)[:_ERROR_KIND_CHARS])


@dataclass(slots=True)  # not frozen: one per result and step; a frozen __init__ costs twice as much
class ActionResult:
    """One observation of an iteration, paired with the action that produced it (``action`` None for user or
    system messages and for tool results that match no requested call)."""

    action: ActionFingerprint | None
    novelty: float
    result_key: str
    """Digest of the prepared result text: equal keys mean an unchanged result."""
    is_error: bool = False
    error_kind: str | None = None
    requested_at: int | None = None
    """Iteration whose response requested the action."""
    text: str = ""
    """The raw result text (quoted, as data, in reflections)."""
    empty: bool = False
    """The result says only "nothing" (:func:`is_empty_result` of its prepared text)."""
    raw_key: str | None = None
    """Digest of the raw result text: a result whose ``result_key`` is unchanged but whose ``raw_key`` changed
    differs only in volatile fields (a poll re-sampling a job's status)."""
    template: str | None = None
    """Digest of the result's template (:mod:`pyguard.engine.templates`), None when nothing in it is tied to the
    request."""
    write: bool = False
    """The action is a write (:mod:`pyguard.engine.actions`): it changes what later reads see."""


@dataclass(slots=True)  # not frozen: one per result and step; a frozen __init__ costs twice as much
class Step:
    """What the detector sees of one iteration."""

    iteration: int
    results: tuple[ActionResult, ...] = ()
    actions: tuple[ActionFingerprint, ...] = ()
    """The actions requested in this iteration's response (their results come with the next step)."""
    writes: tuple[ActionFingerprint, ...] = ()
    """Those of ``actions`` that are writes (:mod:`pyguard.engine.actions`)."""


@dataclass(frozen=True, slots=True)
class StallFlag:
    """One stall finding with its evidence."""

    rule: str
    iteration: int
    message: str
    """One sentence for people and for the reflection."""
    tool: str | None = None
    fingerprints: tuple[str, ...] = ()
    """Canonical forms of the actions involved (cut for display)."""
    ids: tuple[str, ...] = ()
    """Exact and normalised fingerprint digests of the actions involved."""
    sample: str | None = None
    """The last result text of the action involved (tool content: quote it as data, never as instructions)."""
    evidence: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "iteration": self.iteration,
            "message": self.message,
            "tool": self.tool,
            "fingerprints": list(self.fingerprints),
            **self.evidence,
        }


def _action_flag(rule: str, iteration: int, r: ActionResult, message: str, evidence: dict[str, Any]) -> StallFlag:
    """A finding about the one action that produced result ``r`` (its tool, fingerprints and last result)."""
    a = r.action
    assert a is not None
    return StallFlag(
        rule=rule,
        iteration=iteration,
        message=message,
        tool=a.tool,
        fingerprints=(a.short(),),
        ids=(a.exact_id, a.norm_id),
        sample=r.text,
        evidence=evidence,
    )


@dataclass(slots=True)  # not frozen: one per result and step; a frozen __init__ costs twice as much
class StallReport:
    gain: float
    flags: tuple[StallFlag, ...] = ()
    result_gains: tuple[float, ...] = ()
    new_writes: int = 0
    """Results of writes with new content in this step (attempts: progress, whatever they returned)."""
    polls: int = 0
    """Results of polls within their allowance in this step (a read repeated whose result changed only in
    volatile fields)."""
    only_polls: bool = False
    """Every result of this step was such a poll: the iteration waited, it did not stall."""
    acted: bool = False
    """Some result of this step answers an action (a tool result paired with a call)."""


@dataclass(slots=True)
class _Last:
    requested_at: int | None
    result_key: str
    count: int
    """Results seen for this fingerprint (1 = the first one)."""
    unchanged: int
    """Consecutive unchanged results."""
    canonical: set[str]
    fruitless: bool = False
    """The latest result brought nothing: unchanged, or the same kind of error as the one before."""
    epoch: int = 0
    """New writes made before this result arrived (a later new write makes a repeat of this read a check)."""
    attempts: int = 0
    """Consecutive checks after new writes that returned this same result (the attempts changed nothing here)."""
    polls: int = 0
    """Consecutive results that changed only in volatile fields."""
    raw_key: str | None = None
    """Digest of the latest raw result text."""
    poll_chars: int = 0
    """Characters of the consecutive polls' results (what they added to the model's context)."""


class StallDetector:
    """Stateful, one per run. ``observe`` each step in order; ``rearm`` after a reflection."""

    def __init__(self, config: StallConfig | None = None) -> None:
        self.config = config if config is not None else StallConfig()
        self.reset()

    def reset(self) -> None:
        self._by_exact: dict[str, _Last] = {}
        self._by_norm: dict[str, _Last] = {}
        self._history: deque[tuple[int, ActionFingerprint]] = deque(maxlen=8 * self.config.cycle_max_period)
        self._repeats: set[tuple[int, str]] = set()  # (iteration, exact_id) of actions that repeated an earlier one
        self._errors: dict[str, tuple[str, int]] = {}  # tool -> (input+kind key, consecutive count)
        self._streak = 0
        self._streak_gains: list[float] = []
        self._empties = 0  # iterations at the end of the streak whose every tool result was empty
        self._rearmed = False
        self._epoch = 0
        self._writes: dict[tuple[str, frozenset[str]], int] = {}  # (tool, argument values) -> times applied
        self._writes_exact: dict[str, int] = {}  # exact id of a write -> times applied
        self._last_write: str | None = None
        self._written: dict[str, set[str]] = {}  # tool -> every (normalised) value its successful writes carried
        self._deferred = False  # the last iteration's low-gain streak flag waited for a new attempt's result
        self._suggested = False  # the current same-answer streak waited for a request the tool suggested
        self._templates: dict[tuple[str, str], str] = {}  # (tool, template) -> exact id of the first request
        self._template_streak: dict[str, int] = {}  # tool -> results in a row that matched an earlier template
        self._matched = False
        self._step_writes = 0
        self._step_polls = 0
        self.fruitless: set[str] = set()
        """Fingerprint digests (exact and normalised) of actions found fruitless so far."""

    def rearm(self) -> None:
        """Start counting streaks afresh (after a reflection), low-gain streaks now to
        ``low_gain_streak_after_reflection``; what was repeated stays known."""
        self._rearmed = True
        self._streak = 0
        self._streak_gains = []
        self._empties = 0
        self._errors.clear()

    def _still_fruitless(self, a: ActionFingerprint) -> bool:
        if a.exact_id in self.fruitless:
            last = self._by_exact.get(a.exact_id)
        elif self.config.normalised_repeats and a.norm_id in self.fruitless:
            last = self._by_norm.get(a.norm_id)
        else:
            return False
        return last is not None and last.fruitless

    def all_fruitless(self, actions: Sequence[ActionFingerprint]) -> bool:
        """True when ``actions`` is non-empty and every action repeats one found fruitless (flagged) whose latest
        result still brought nothing (a poll whose result changed since is not fruitless any more)."""
        return bool(actions) and all(self._still_fruitless(a) for a in actions)

    # ---- per step ---------------------------------------------------------------------------------------------

    def observe(self, step: Step) -> StallReport:
        flags: list[StallFlag] = []
        gains: list[float] = []
        self._step_writes = 0
        self._step_polls = 0
        iteration = step.iteration
        results = step.results
        acted = False
        for r in results:
            gain, flag = self._result(iteration, r)
            gains.append(gain)
            if flag is not None:
                flags.append(flag)
            if r.action is not None:
                acted = True
                if r.is_error or self._errors:
                    storm = self._error_storm(iteration, r)
                    if storm is not None:
                        flags.append(storm)
        if gains:
            gain = max(gains)
        else:
            gain = 1.0 if iteration == 1 else 0.0
        if self._step_writes:
            gain = max(gain, self.config.new_write_gain)
        only_polls = bool(results) and self._step_polls == len(results)
        history = self._history
        by_exact = self._by_exact
        norm = self.config.normalised_repeats
        for a in step.actions:
            if a.exact_id in by_exact or (norm and a.norm_id in self._by_norm):
                self._repeats.add((iteration, a.exact_id))
            history.append((iteration, a))
        if len(self._repeats) > 4 * (history.maxlen or 1):
            oldest = history[0][0] if history else iteration
            self._repeats = {k for k in self._repeats if k[0] >= oldest}
        # what counts towards a low-gain streak: an iteration that got tool results (not one answered only by a
        # user or harness message: a format error re-prompted is no sign that tools stopped helping), and not a
        # poll within its allowance
        counts = (acted or (iteration > 1 and not results)) and not only_polls
        empty = acted and all(r.empty for r in results if r.action is not None)
        streak = self._low_gain(iteration, gain, counts, empty)
        if streak is not None and not self._deferred and any(self._would_be_new(w) for w in step.writes):
            # the model is making a new attempt (an edit with new content): wait one iteration for what it brings
            # rather than stop it unexecuted; if the streak goes on after it, the flag is raised then
            streak = None
            self._deferred = True
        else:
            self._deferred = False
        if streak is not None:
            flags.append(streak)
        if flags or self._suggested:
            flags = self._follow_suggestions(flags, step.actions)
            for f in flags:
                self.fruitless.update(f.ids)
        return StallReport(
            gain=gain,
            flags=tuple(flags),
            result_gains=tuple(gains),
            new_writes=self._step_writes,
            polls=self._step_polls,
            only_polls=only_polls,
            acted=acted,
        )

    def _follow_suggestions(self, flags: list[StallFlag], actions: Sequence[ActionFingerprint]) -> list[StallFlag]:
        """Drop a ``same_answer`` flag, once per streak, when the model's next request takes an argument from the
        answer that was flagged (a suggestion the tool made: ``Similar: ['Scatman John', ...]``) that it has not
        asked for before: it is acting on what the tool said, so its result, not the answers before, will tell."""
        same = [f for f in flags if f.rule == "same_answer"]
        if not same:
            self._suggested = False
            return flags
        if self._suggested:
            return flags
        text = (same[0].sample or "").lower()
        asked = same[0].fingerprints
        for a in actions:
            for v in a.arg_values:
                value = v.strip().lower()
                if len(value) >= _MIN_SUGGESTION and value in text and not any(value in f.lower() for f in asked):
                    self._suggested = True
                    return [f for f in flags if f.rule != "same_answer"]
        return flags

    def _would_be_new(self, a: ActionFingerprint) -> bool:
        """True when the write ``a``, requested now, would be an attempt with new content (see ``_new_write``)."""
        if self._last_write == a.exact_id:
            return False
        values = frozenset(normalised_value(v) for v in a.arg_values)
        exact = self._writes_exact.get(a.exact_id, 0) + 1
        if exact == 1 and self._restores(a.tool, values):
            return False
        return self._writes.get((a.tool, values), 0) + 1 <= _MAX_REAPPLIED and exact <= 2

    def _restores(self, tool: str, values: frozenset[str]) -> bool:
        """A write of two values or more, every one of which this tool has written before (as what it wrote or as
        what it replaced): it puts back content the agent already had. A one-value write (a shell command) is left
        to the re-application rule: the same command after other writes acts on a changed state."""
        seen = self._written.get(tool)
        return seen is not None and len(values) >= 2 and values <= seen

    def _new_write(self, r: ActionResult) -> bool:
        """Record the write of ``r``; True when it is an attempt with new content. Not new: the very same write
        again with nothing else written since; the same write a third time (two writes taking turns); or a change
        made and undone, then made again: more than ``_MAX_REAPPLIED`` writes with the same values, ``old`` and
        ``new`` swapped or not; or a write, never made before, of two values or more that this tool has all written
        before (``old`` and ``new`` of earlier edits: an undo, or text put back that an earlier edit replaced). A
        write re-applied once after other writes acts on a changed state (a script regenerated after other
        edits): new. A write that failed (an error result) changed nothing and is not recorded."""
        a = r.action
        assert a is not None
        if self._last_write == a.exact_id:
            return False  # the very same write again, nothing else written since
        values = frozenset(normalised_value(v) for v in a.arg_values)
        key = (a.tool, values)
        times = self._writes.get(key, 0) + 1
        self._writes[key] = times
        exact = self._writes_exact.get(a.exact_id, 0) + 1
        self._writes_exact[a.exact_id] = exact
        self._last_write = a.exact_id
        restores = exact == 1 and self._restores(a.tool, values)
        self._written.setdefault(a.tool, set()).update(values)
        if restores or times > _MAX_REAPPLIED or exact > 2:
            return False  # content put back; the same change made, undone and made again; one write a third time
        self._epoch += 1
        return True

    def _template_match(self, iteration: int, r: ActionResult) -> StallFlag | None:
        """A result whose template matches an earlier result of the same tool for another request: it says the
        same thing about a different request (a rephrased lookup failing again). Flags a streak of them."""
        a = r.action
        assert a is not None
        if r.template is None or (r.write and not r.is_error) or not self.config.failure_templates:
            # a write's receipt says "done"; a write that failed changed nothing and is judged like a read
            self._template_streak.pop(a.tool, None)
            return None
        first = self._templates.setdefault((a.tool, r.template), a.exact_id)
        if first == a.exact_id:
            self._template_streak.pop(a.tool, None)
            return None
        count = self._template_streak.get(a.tool, 1) + 1
        self._template_streak[a.tool] = count
        self._matched = True
        needed = self.config.same_answer_streak or self.config.error_storm_length
        if count < needed:
            return None
        return _action_flag(
            "same_answer",
            iteration,
            r,
            f"{a.tool} gave the same answer to {count} different requests in a row (the last: {a.short(80)}): "
            "rewording the request does not change what it returns.",
            {"requests": count, "template": r.template},
        )

    def _result(self, iteration: int, r: ActionResult) -> tuple[float, StallFlag | None]:
        a = r.action
        novelty = 0.0 if r.empty and self.config.empty_results_no_gain else r.novelty
        if a is None:
            return novelty, None
        cfg = self.config
        new_write = r.write and not r.is_error and self._new_write(r)
        if new_write:
            self._step_writes += 1
        last = self._by_exact.get(a.exact_id)
        same_request = last is not None
        how = "the same arguments"
        if last is None and cfg.normalised_repeats:
            last = self._by_norm.get(a.norm_id)
            how = "trivially rewritten arguments"
        flag = None
        self._matched = False
        template_flag = self._template_match(iteration, r) if last is None else None
        canonical = {a.canonical} if last is None else last.canonical | {a.canonical}
        # a result of the same request that changed by a negligible share (a 10 KB page whose footer's request id
        # changed) with nothing written since is a poll, like one that changed only in masked volatile fields
        barely = (
            last is not None
            and same_request
            and not new_write
            and last.epoch == self._epoch
            and last.result_key != r.result_key
            and r.novelty < _NEGLIGIBLE_CHANGE
        )
        if last is None:
            gain = 0.0 if self._matched else novelty
            entry = _Last(r.requested_at, r.result_key, 1, 0, canonical, r.is_error, self._epoch)
            flag = template_flag
        elif (last.result_key != r.result_key and not barely) or new_write:  # changed, or a write re-applied
            gain = max(novelty, cfg.changed_result_gain)
            entry = _Last(r.requested_at, r.result_key, last.count + 1, 0, canonical, r.is_error, self._epoch)
        elif last.epoch < self._epoch and not r.write:
            # a check after a new attempt (an edit, then the tests again): not a loop, but the attempt changed
            # nothing here; many attempts in a row that change nothing are
            gain = 0.0
            attempts = last.attempts + 1
            entry = _Last(r.requested_at, r.result_key, last.count + 1, 0, canonical, False, self._epoch, attempts)
            if attempts >= cfg.max_fruitless_attempts:
                entry.fruitless = True
                flag = self._attempts_flag(iteration, r, attempts)
        elif (
            same_request
            and cfg.polling_allowance
            and (barely or (r.raw_key is not None and last.raw_key not in (None, r.raw_key)))
        ):
            gain = 0.0
            polls = last.polls + 1
            entry = _Last(
                r.requested_at,
                r.result_key,
                last.count + 1,
                last.unchanged + 1,
                canonical,
                False,
                self._epoch,
                last.attempts,
                polls,
                poll_chars=last.poll_chars + len(r.text),
            )
            if polls > cfg.polling_allowance or entry.poll_chars > cfg.polling_allowance_chars:
                entry.fruitless = True
                flag = self._polling_flag(iteration, r, polls, entry.poll_chars)
            else:
                self._step_polls += 1
        else:
            gain = 0.0
            entry = _Last(
                r.requested_at, r.result_key, last.count + 1, last.unchanged + 1, canonical, True, self._epoch
            )
            flag = self._repeat_flag(iteration, r, last, entry, how)
        entry.raw_key = r.raw_key
        self._by_exact[a.exact_id] = entry
        self._by_norm[a.norm_id] = entry
        return gain, flag

    def _attempts_flag(self, iteration: int, r: ActionResult, attempts: int) -> StallFlag:
        a = r.action
        assert a is not None
        return _action_flag(
            "fruitless_attempts",
            iteration,
            r,
            f"{attempts} changes in a row left the result of {a.short(80)} exactly as it was: "
            "the attempts are not reaching the problem.",
            {"attempts": attempts},
        )

    def _polling_flag(self, iteration: int, r: ActionResult, polls: int, chars: int) -> StallFlag:
        a = r.action
        assert a is not None
        return _action_flag(
            "polling_limit",
            iteration,
            r,
            f"{a.short(80)} was polled {polls} time{'s' if polls > 1 else ''} and its result changed only in "
            f"timestamps and ids (allowance {self.config.polling_allowance} polls, "
            f"{self.config.polling_allowance_chars:,} characters of results).",
            {"polls": polls, "allowance": self.config.polling_allowance, "chars": chars},
        )

    def _repeat_flag(self, iteration: int, r: ActionResult, last: _Last, entry: _Last, how: str) -> StallFlag:
        a = r.action
        assert a is not None
        between: list[tuple[int, ActionFingerprint]] = []
        if last.requested_at is not None and r.requested_at is not None:
            between = [
                (it, b)
                for it, b in self._history
                if last.requested_at < it < r.requested_at
                or (it == r.requested_at and b.exact_id != a.exact_id and b.norm_id != a.norm_id)
            ]
        # a cycle: everything in between was itself a repeat (A, B, A, B); a new action in between (an edit
        # before re-running the tests) makes it a plain repeat after other actions
        in_cycle = bool(between) and all((it, b.exact_id) in self._repeats for it, b in between)
        members: list[ActionFingerprint] = []
        for _, b in between:
            if all(b.norm_id != m.norm_id for m in members) and b.norm_id != a.norm_id:
                members.append(b)
        variants = sorted(entry.canonical)
        shown = ", ".join(v if len(v) <= 80 else v[:77] + "..." for v in variants[:3])
        evidence: dict[str, Any] = {
            "times": entry.count,
            "unchanged": entry.unchanged,
            "variants": variants[:5],
            "normalised": a.normalised,
        }
        ids = {a.exact_id, a.norm_id}
        if (
            in_cycle
            and members
            and last.requested_at is not None
            and r.requested_at is not None
            and r.requested_at - last.requested_at <= self.config.cycle_max_period
        ):
            rule = "cycle"
            names = [a.short(80)] + [m.short(80) for m in members]
            evidence["cycle"] = names
            message = (
                f"The actions {' -> '.join(names)} are going round in a cycle: {a.tool} returned the same result "
                f"as before ({entry.count} calls so far), and nothing new came in between."
            )
            for m in members:
                ids.update((m.exact_id, m.norm_id))
        else:
            rule = "repeat_no_gain"
            if between:
                how += f" after {len(between)} other action{'s' if len(between) > 1 else ''}"
            message = (
                f"{a.tool} was called again with {how} ({shown}) and returned the same result as before: "
                f"{entry.count} calls, {entry.unchanged + 1} identical results in a row."
            )
        return StallFlag(
            rule=rule,
            iteration=iteration,
            message=message,
            tool=a.tool,
            fingerprints=tuple(v if len(v) <= 120 else v[:117] + "..." for v in variants[:5]),
            ids=tuple(sorted(ids)),
            sample=r.text,
            evidence=evidence,
        )

    def _error_storm(self, iteration: int, r: ActionResult) -> StallFlag | None:
        a = r.action
        if a is None:
            return None
        if not r.is_error:
            self._errors.pop(a.tool, None)
            return None
        key = (a.norm_id if self.config.normalised_repeats else a.exact_id) + ":" + (r.error_kind or "")
        previous = self._errors.get(a.tool)
        count = previous[1] + 1 if previous is not None and previous[0] == key else 1
        self._errors[a.tool] = (key, count)
        if count < self.config.error_storm_length:
            return None
        return _action_flag(
            "error_storm",
            iteration,
            r,
            f"{a.tool} failed {count} times in a row with the same kind of error and unchanged inputs ({a.short(80)}).",
            {"errors": count, "error_kind": r.error_kind},
        )

    def _low_gain(self, iteration: int, gain: float, counts: bool, empty: bool = False) -> StallFlag | None:
        """The low-gain streak after this iteration, and its flag when it is long enough: ``low_gain_streak``
        dull iterations, or ``empty_streak`` when every tool result of the streak was empty (each after a
        reflection: the ``*_after_reflection`` lengths)."""
        if not counts:
            return None
        cfg = self.config
        if gain < cfg.low_gain_threshold:
            self._streak += 1
            self._streak_gains.append(round(gain, 4))
            self._empties = self._empties + 1 if empty else 0
        else:
            self._streak = 0
            self._streak_gains = []
            self._empties = 0
        needed = cfg.low_gain_streak_after_reflection if self._rearmed else cfg.low_gain_streak
        only_empty = self._empties >= self._streak
        if only_empty:
            needed = min(needed, cfg.empty_streak_after_reflection if self._rearmed else cfg.empty_streak)
        if self._streak < needed:
            return None
        recent = [a for it, a in self._history if it >= iteration - self._streak]
        tools = sorted({a.tool for a in recent})
        what = (
            "came back empty"
            if only_empty
            else (
                "brought almost nothing new "
                f"(information gain {', '.join(f'{g:.2f}' for g in self._streak_gains[-6:])}; "
                f"threshold {cfg.low_gain_threshold:.2f})"
            )
        )
        return StallFlag(
            rule="low_gain_streak",
            iteration=iteration,
            message=f"The last {self._streak} tool results {what}.",
            tool=tools[0] if len(tools) == 1 else None,
            fingerprints=tuple(a.short() for a in recent[-5:]),
            ids=(),
            evidence={
                "streak": self._streak,
                "streak_gains": list(self._streak_gains[-20:]),
                "tools": tools,
                "empty": only_empty,
            },
        )
