"""Stall detection: from each iteration's action results, the iteration's gain and the stall rules' hits.

The :class:`StallDetector` receives one :class:`~pyguard.engine.steps.Step` per iteration (the results that arrived
in that model call's request, each paired with the action that produced it, and the actions the model requested in
its response) and returns a :class:`~pyguard.engine.stall_report.StallReport`: the iteration's information gain and
zero or more ``stalled`` :class:`~pyguard.engine.conditions.StopHit`, each with its evidence and its
:class:`~pyguard.engine.conditions.StallSubject` (the :class:`~pyguard.engine.stop_rules.Stalled` condition reports
them). Rules:

- ``repeat_no_gain``: an action repeated (exact or normalised fingerprint) whose result is unchanged (same text
  once volatile tokens and echoed arguments are masked) as the last time;
- ``cycle``: the same, when other actions came in between (A, B, A, B ... or A, B, C, A ...);
- ``fruitless_attempts``: a check re-run after new writes returning the very same result ``max_fruitless_attempts``
  times; ``polling_limit``: a read re-sampled past its polling allowance (both here);
- ``error_storm`` and ``low_gain_streak`` (:mod:`pyguard.engine.streaks`), ``same_answer``
  (:mod:`pyguard.engine.same_answer`), ``nothing_new`` (:mod:`pyguard.engine.nothing_new`); which writes are new
  attempts: :mod:`pyguard.engine.writes`.

An *empty* result (:func:`pyguard.engine.result_kinds.is_empty_result`: only an empty container, or a short no-data
phrase such as "No matching records found.") scores zero gain, even the first time it is seen
(``empty_results_no_gain``), so a run that keeps finding nothing is low-gain from its first empty answer, and a
streak of nothing but empty answers is a stall one iteration sooner than a streak of dull ones (a dull result may
still hold a clue; "nothing" holds none).

What is *not* flagged: polling whose result changes, pagination (different arguments, new content), re-running
the same command after something changed (its output differs). A repeated action whose result changed is credited
``changed_result_gain`` even when its text is mostly the same, so polling and re-runs are not low-gain either.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from pyguard.base.decisions import Action
from pyguard.engine.conditions import StopHit
from pyguard.engine.config import StallConfig
from pyguard.engine.fingerprint import ActionFingerprint
from pyguard.engine.nothing_new import NothingNew
from pyguard.engine.same_answer import SameAnswer
from pyguard.engine.stall_report import StallReport, attempts_hit, polling_hit, repeat_hit
from pyguard.engine.steps import ActionResult, Step
from pyguard.engine.streaks import ErrorStorm, LowGainStreak
from pyguard.engine.waits import UNMARKED_POLLS, takes_turns, unmarked_poll_hit
from pyguard.engine.writes import WriteLedger

__all__: list[str] = []

_NEGLIGIBLE_CHANGE = 0.01
"""A changed result whose novelty is below this (a few characters of a large text) changed negligibly."""


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
    progress: int = 0
    """Results that brought something (a gain of at least ``low_gain_threshold``: new content, a changed result, a
    write with new content) in the run up to this one: one more since means the cycle back to this action was not
    a repeated state."""
    waits: int = 0
    """Waits made up to this result (a wait since makes an identical repeat of this read a poll)."""


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
        self._writes = WriteLedger()
        self._errors = ErrorStorm(self.config)
        self._low_gain = LowGainStreak(self.config)
        self._same_answer = SameAnswer(self.config)
        self._nothing_new = NothingNew(self.config.nothing_new_window, self.config.nothing_new_max_new)
        self._deferred = False  # the last iteration's low-gain streak hit waited for a new attempt's result
        self._progress = 0  # results so far that brought something (see _Last.progress)
        self._seen: dict[str, set[str]] = {}  # exact id -> every result key its results had
        self._waits = 0  # waits so far (see _Last.waits)
        self._step_writes = 0
        self._step_polls = 0
        self._unmarked_poll = False  # the run's one unmarked_poll reflection was earned
        self.fruitless: set[str] = set()
        """Fingerprint digests (exact and normalised) of actions found fruitless so far."""

    def rearm(self) -> None:
        """Start counting streaks afresh (after a reflection), low-gain streaks now to
        ``low_gain_streak_after_reflection``; what was repeated stays known."""
        self._low_gain.rearm()
        self._errors.reset()

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
        stalls: list[StopHit] = []
        gains: list[float] = []
        self._step_writes = 0
        self._step_polls = 0
        iteration = step.iteration
        results = step.results
        if step.paired:  # the actions whose results these are: known before their results are judged
            self._record_actions(iteration, step.actions)
        acted = False
        for r in results:
            gain, hit = self._result(iteration, r)
            gains.append(gain)
            if hit is not None:
                stalls.append(hit)
            if r.action is not None:
                acted = True
                if r.is_error or self._errors.counting:
                    storm = self._errors.observe(iteration, r)
                    if storm is not None:
                        stalls.append(storm)
        late = self._nothing_new.observe(iteration, results)
        if late is not None:
            stalls.append(late)
        if gains:
            gain = max(gains)
        else:
            gain = 1.0 if iteration == 1 else 0.0
        if self._step_writes:
            gain = max(gain, self.config.new_write_gain)
        only_polls = bool(results) and self._step_polls == len(results)
        history = self._history
        if not step.paired:
            self._record_actions(iteration, step.actions)
        # what counts towards a low-gain streak: an iteration that got tool results (not one answered only by a
        # user or harness message: a format error re-prompted is no sign that tools stopped helping), and not a
        # poll within its allowance
        counts = (acted or (iteration > 1 and not results)) and not only_polls
        empty = acted and all(r.empty for r in results if r.action is not None)
        streak = self._low_gain.observe(iteration, gain, counts, empty, history)
        if (
            streak is not None
            and not step.paired  # paired: the writes' results are in this step, judged already
            and not self._deferred
            and any(self._writes.would_be_new(w) for w in step.writes)
        ):
            # the model is making a new attempt (an edit with new content): wait one iteration for what it brings
            # rather than stop it unexecuted; if the streak goes on after it, the hit comes then
            streak = None
            self._deferred = True
        else:
            self._deferred = False
        if streak is not None:
            stalls.append(streak)
        if stalls or self._same_answer.suggested:
            stalls = self._same_answer.follow_suggestions(stalls, step.actions, paired=step.paired)
            for h in stalls:
                if h.stall is not None and h.action is Action.STOP:  # futility earns a reflection, never a stop: its
                    self.fruitless.update(h.stall.ids)  # actions are not fruitless retries
        return StallReport(
            gain=gain,
            stalls=tuple(stalls),
            result_gains=tuple(gains),
            new_writes=self._step_writes,
            polls=self._step_polls,
            only_polls=only_polls,
            acted=acted,
        )

    def _record_actions(self, iteration: int, actions: Sequence[ActionFingerprint]) -> None:
        """The actions requested in ``iteration``'s response: into the history, each marked when it repeats one whose
        result is known (what a cycle is made of)."""
        history = self._history
        by_exact = self._by_exact
        norm = self.config.normalised_repeats
        for a in actions:
            if a.exact_id in by_exact or (norm and a.norm_id in self._by_norm):
                self._repeats.add((iteration, a.exact_id))
            history.append((iteration, a))
        if len(self._repeats) > 4 * (history.maxlen or 1):
            oldest = history[0][0] if history else iteration
            self._repeats = {k for k in self._repeats if k[0] >= oldest}

    def _result(self, iteration: int, r: ActionResult) -> tuple[float, StopHit | None]:
        a = r.action
        novelty = 0.0 if r.empty and self.config.empty_results_no_gain else r.novelty
        if a is None:
            return novelty, None
        cfg = self.config
        new_write = r.write and not r.is_error and self._writes.record(a)
        if new_write:
            self._step_writes += 1
        last = self._by_exact.get(a.exact_id)
        same_request = last is not None
        how = "the same arguments"
        if last is None and cfg.normalised_repeats:
            last = self._by_norm.get(a.norm_id)
            how = "trivially rewritten arguments"
        matched, template_hit = self._same_answer.match(iteration, r, self._progress) if last is None else (False, None)
        epoch = self._writes.epoch
        canonical = {a.canonical} if last is None else last.canonical | {a.canonical}
        # a result of the same request that changed by a negligible share (a 10 KB page whose footer's request id
        # changed) with nothing written since is a poll, like one that changed only in masked volatile fields
        barely = (
            last is not None
            and same_request
            and not new_write
            and last.epoch == epoch
            and last.result_key != r.result_key
            and r.novelty < _NEGLIGIBLE_CHANGE
        )
        if last is None:
            gain = 0.0 if matched else novelty
            entry = _Last(r.requested_at, r.result_key, 1, 0, canonical, r.is_error, epoch)
            hit = template_hit
        else:
            gain, entry, hit = self._seen_again(
                iteration,
                r,
                last,
                novelty,
                canonical,
                how,
                same_request=same_request,
                new_write=new_write,
                barely=barely,
            )
        if self._brings_something(a.exact_id, r, gain, new_write):
            self._progress += 1
        if r.wait:
            self._waits += 1
        entry.raw_key = r.raw_key
        entry.progress = self._progress
        entry.waits = self._waits
        self._by_exact[a.exact_id] = entry
        self._by_norm[a.norm_id] = entry
        return gain, hit

    def _seen_again(
        self,
        iteration: int,
        r: ActionResult,
        last: _Last,
        novelty: float,
        canonical: set[str],
        how: str,
        *,
        same_request: bool,
        new_write: bool,
        barely: bool,
    ) -> tuple[float, _Last, StopHit | None]:
        """The gain, new memory entry and hit of a result of an action seen before (``last``): changed, a check
        after a new attempt, a poll, a repeat after progress elsewhere in the cycle, or a repeat."""
        cfg = self.config
        epoch = self._writes.epoch
        hit = None
        if (last.result_key != r.result_key and not barely) or new_write:  # changed, or a write re-applied
            gain = max(novelty, cfg.changed_result_gain)
            entry = _Last(r.requested_at, r.result_key, last.count + 1, 0, canonical, r.is_error, epoch)
        elif last.epoch < epoch and not r.write:
            # a check after a new attempt (an edit, then the tests again): not a loop, but the attempt changed
            # nothing here; many attempts in a row that change nothing are
            gain = 0.0
            attempts = last.attempts + 1
            entry = _Last(r.requested_at, r.result_key, last.count + 1, 0, canonical, False, epoch, attempts)
            if attempts >= cfg.max_fruitless_attempts:
                entry.fruitless = True
                hit = attempts_hit(iteration, r, attempts, futility_stops=cfg.futility_stops)
        elif (
            same_request
            and cfg.polling_allowance
            and (
                barely
                or (
                    r.raw_key is not None
                    and last.raw_key not in (None, r.raw_key)
                    and not takes_turns(self._history, self._repeats, r.action, last.requested_at, r.requested_at)
                )
                or (cfg.waits_make_polls and (r.wait or r.pending or last.waits < self._waits))
            )
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
                epoch,
                last.attempts,
                polls,
                poll_chars=last.poll_chars + len(r.text),
            )
            if polls > cfg.polling_allowance or entry.poll_chars > cfg.polling_allowance_chars:
                entry.fruitless = True
                hit = polling_hit(iteration, r, polls, entry.poll_chars, cfg)
            else:
                self._step_polls += 1
                marked = barely or r.wait or r.pending or last.waits < self._waits
                if polls == UNMARKED_POLLS and not marked and not self._unmarked_poll:
                    self._unmarked_poll = True  # once per run: a reflection, never a stop by itself
                    hit = unmarked_poll_hit(iteration, r, polls)
        elif cfg.cycle_progress and last.progress < self._progress:
            # the same result again, but something in the cycle since brought new content (a write with new
            # content, a check whose output changed, a new result): the run's state did not repeat (a cleanup
            # such as ``rm file`` between attempts, a file re-read after other work)
            gain = 0.0
            entry = _Last(r.requested_at, r.result_key, last.count + 1, last.unchanged + 1, canonical, False, epoch)
        else:
            gain = 0.0
            entry = _Last(r.requested_at, r.result_key, last.count + 1, last.unchanged + 1, canonical, True, epoch)
            hit = self._repeat_hit(iteration, r, last, entry, how)
        return gain, entry, hit

    def _brings_something(self, exact_id: str, r: ActionResult, gain: float, new_write: bool) -> bool:
        """Whether result ``r`` moved the run's state: a write of values never written before, or a result of
        some gain that this action never returned before (results taking turns, A/B/A/B, bring nothing new)."""
        seen = self._seen.setdefault(exact_id, set())
        new_state = r.result_key not in seen
        seen.add(r.result_key)
        if new_write:
            return self._writes.fresh
        return new_state and gain >= self.config.low_gain_threshold

    def _repeat_hit(self, iteration: int, r: ActionResult, last: _Last, entry: _Last, how: str) -> StopHit:
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
        cycle = (
            in_cycle
            and bool(members)
            and last.requested_at is not None
            and r.requested_at is not None
            and r.requested_at - last.requested_at <= self.config.cycle_max_period
        )
        return repeat_hit(
            iteration, r, (entry.count, entry.unchanged, entry.canonical), how, len(between), members if cycle else None
        )
