"""The dynamic budget policy: continue, reflect or stop, after every model call, and why.

Per run (:class:`RunSession`)::

    budget = base_budget(task_type)                       (again at the start of every user turn)
    after iteration i (one model call):
        gain_i  = information gain of the results that arrived in call i's request      (novelty.py, stall.py)
        stalls_i = stall rules' hits: repeat_no_gain, cycle, error_storm, low_gain_streak (stall.py)
        if the model answered (no tool calls):              continue (the run ends; finish() says succeeded)
        if stalls and the reflections are used up:          stop, outcome "stalled" (or "escalated")
        if a hard cap is reached:                           stop, outcome "expired", rule "cap:<name>"
        if stalls:                                          reflect; budget = min(budget + extension, hard_cap)
        elif gain_i >= earn_threshold:                      budget = min(budget + earn_per_iteration, hard_cap)
        if i >= budget:                                     stop, outcome "expired", rule "budget"

After a reflection injected into call i+1, iteration i+1's results are the answers to calls the model asked for
*before* it read the reflection, so their stalls are not held against it (grace). From then on any new stall is the
second stall and stops the run; and if the model, before trying anything new, asks only for actions already found
fruitless whose latest result still brought nothing (exactly or normalised), the run stops at once (rule
``fruitless_retry``) instead of paying one more model call to see the same result again. Once it has tried
something new (an edit before re-running the tests), a repeated action is judged by its result.

Defaults and why
----------------
The defaults were chosen on public recordings of real agents (``benchmarks/run.py real_replay``: a coding agent
on SWE-bench, ReAct question answering, multi-turn function calling, customer-service conversations), where the
first bound is that at most 1% of successful runs (2% of any one source) are stopped early. The measured figures
and the trade-off between policies are in benchmarks/RESULTS.md (real_replay), not here: figures in a
docstring go stale.

- ``base_budget = 8``: what a turn gets before it has shown any progress. Enough for a lookup (2-4 calls) and
  for a first stall to be seen, reflected on and confirmed.
- ``earn_threshold = 0.2``, ``earn_per_iteration = 2``: every productive iteration (at least a fifth of its
  result new, 1,000 new characters of a large one, a repeated action whose result changed, or a write with new
  content) buys two more calls, so a run stays within budget while about one iteration in three is productive.
  With 1 (the replacement only), coding agents that succeed after many calls ran out of budget among their
  ordinary dull results (a grep that finds nothing, a re-read), and were stopped although they would have succeeded
  (the real_replay benchmark suite).
- ``hard_cap = 150`` per turn: the ceiling however productive, above LangChain4j's own default of 100 round trips
  (which still applies to an AiServices agent unless raised) so that pyguard is never the tighter of the two for
  productive work; the longest successful recorded coding runs stay below it (real_replay).
- ``extension = 4``: after a reflection the model needs one call to react, one to see the result and one to
  answer; one more of slack. Granted only with a reflection, never unconditionally.
- ``max_reflections = 1``: one reflection, then the next stall stops the run (2 leaves fewer false stops on
  recorded runs but also saves much less: the "1-cautious" policy of
  ``benchmarks/real_data/tradeoff.py``).
- Turns (``budget_per_turn = True``): a user message after the model's answer opens a new turn with its own
  budget, stall state, reflections and memory, as LangChain4j's cap counts per ``chat()`` call; ``caps`` hold
  across the run.
- Stall thresholds (``StallConfig``): a repeat is flagged the first time it brings back an unchanged result
  (detection delay 1), unless a write with new content came in between (an edit, then the tests again: a check,
  not a loop; an edit that only puts back what earlier edits wrote or replaced, an undo, is no new content;
  ``max_fruitless_attempts = 6`` such checks returning the very same result is a stall); a result
  that only changed in volatile fields is a poll (``polling_allowance = 10`` in a row, budget-neutral, as long as
  the polls bring back at most ``polling_allowance_chars = 8000`` characters in all: every poll's result stays in
  the model's context, so ten re-fetches of a 10 KB page whose footer changes cost like a hundred status checks and
  are judged as repeats at once); the same answer (template) to 3 reworded requests is a stall (waited for once
  when the model's next request takes a value the answer suggested); error storms at 3 same-kind errors; a
  low-gain streak at 4 iterations below 0.1, 3 after a reflection, either waiting one iteration when the model's response makes a new
  write (an edit is an attempt: judged by its result, not stopped unexecuted); a streak of 3 before the reflection,
  or 2 after it, cut successful coding runs that had a few dull results in a row. A streak of nothing but empty
  answers is one shorter (``empty_streak = 3``, 2 after a reflection): "nothing" holds no clue, a dull result
  may. A write that failed (an error) changed nothing and is judged by its failure template like a read.
- ``empty_results_no_gain = True``: a result that is only an empty container (``[]``, ``{"items": [],
  "total": 0}``) or a short no-data phrase ("No matching records found.", "0 rows returned.", "not found";
  :func:`pyguard.engine.result_kinds.is_empty_result`, at most 120 characters) scores zero gain even the first time. A
  repeated action whose result changed (a poll whose queue empties) is still credited as changed.

The principle (issue 22): a stop needs evidence that the run's *state* repeats, judged over the whole cycle.
``cycle_progress``: a repeated action that returns the same result is a stall only when nothing since its last result
brought anything (no write of new values, no output the action never printed before, no new result), so a cleanup
repeated between attempts with new content is progress. ``futility_stops = False``: attempts that leave a check's
output unchanged earn a reflection, never a stop by itself. ``waits_make_polls``: identical reads around a wait, or
saying "pending", are polls. ``stop_on_repeated_evidence``: after a reflection, a second signal that is the first one
again, with the model asking for more of the same, stops in that call; every stall stop says which signal it was
(``evidence["signal"]``).

With these defaults the logistics incident (``get_shipment_status`` 7 times identical, then 3 times with the
``SO-`` prefix) is reflected on after its 3rd model call (the 2nd identical result) and stopped after its 4th,
when the model asks for the same shipment again: 4 model calls instead of 11.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from pyguard.decisions import Action, Decision
from pyguard.ending import Causes, EndNotes, Settled, TokenTotals, footer, settle
from pyguard.engine.actions import classify_action
from pyguard.engine.conditions import RunState, StallSubject, StopCondition, StopHit
from pyguard.engine.config import BudgetSettings, EscalationConfig, PolicyConfig, StallConfig
from pyguard.engine.fingerprint import ActionFingerprint, fingerprint, run_key
from pyguard.engine.novelty import NoveltyEstimator, ShingleNovelty, make_estimator, prepare_text
from pyguard.engine.reflection import build_reflection
from pyguard.engine.result_kinds import error_kind, is_empty_result
from pyguard.engine.stall import StallDetector
from pyguard.engine.stall_report import StallReport, stall_hit
from pyguard.engine.steps import ActionResult, Step
from pyguard.engine.stop import policy_condition
from pyguard.engine.templates import request_words, template_key
from pyguard.engine.usage import UsageState, UsageTracker
from pyguard.engine.waits import is_pending_result, is_wait
from pyguard.engine.window import observed_text
from pyguard.errors import BudgetError, ConfigError
from pyguard.events import IterationEvent, Observation, Outcome, RunEnd, ToolCall, opens_turn

__all__ = ["Policy", "RunSession"]

Clock = Callable[[], float]
"""Returns seconds (monotonic); injected so that tests never sleep."""


class Policy:
    """A policy configuration plus a clock; makes one :class:`RunSession` per run."""

    def __init__(
        self,
        config: PolicyConfig | None = None,
        clock: Clock = time.monotonic,
        *,
        estimator_factory: Callable[[], NoveltyEstimator] | None = None,
        extra_stop: StopCondition | Callable[[], StopCondition] | None = None,
    ) -> None:
        self.config = config if config is not None else PolicyConfig()
        self.clock = clock
        self.estimator_factory = estimator_factory or (lambda: make_estimator(self.config.novelty))
        if extra_stop is not None and not isinstance(extra_stop, StopCondition) and not callable(extra_stop):
            raise ConfigError(f"extra_stop={extra_stop!r} must be a StopCondition or a function that makes one per run")
        self.extra_stop = extra_stop
        """A stop condition given in Python that a trace does not record (a function, a live run tree); conditions
        with a config belong in ``config.stop``, which the trace header records and replay rebuilds."""
        self._per_task: dict[
            str | None,
            tuple[PolicyConfig, BudgetSettings, EscalationConfig, frozenset[str], frozenset[str], StallConfig],
        ] = {}
        """What every run of a task type starts from, made once (the configs are frozen): see :meth:`_run_settings`."""
        self.stop_condition = self.condition_for_run()
        """The whole stop condition of this policy (what a run gets; each run has its own copy:
        :meth:`condition_for_run`)."""

    def condition_for_run(self) -> StopCondition:
        """The stop condition of one run (:func:`pyguard.engine.stop.policy_condition`): the stall rules, the
        config's caps and ``stop`` conditions, ``extra_stop`` (a deep copy of the given condition, or what the given
        function makes), the hard cap and the budget. The built-in conditions are stateless (they read the run
        state), and a condition of your own that keeps state between checks gets one copy per run: runs on many
        threads never share it, and a run starting never resets another's."""
        extra = self.extra_stop
        if extra is not None:
            extra = copy.deepcopy(extra) if isinstance(extra, StopCondition) else extra()
            if not isinstance(extra, StopCondition):
                raise ConfigError(f"extra_stop made {extra!r}, not a StopCondition")
        return policy_condition(self.config, extra)

    def _run_settings(
        self, task_type: str | None
    ) -> tuple[BudgetSettings, EscalationConfig, frozenset[str], frozenset[str], StallConfig]:
        """The budget settings, escalation, write/read tool sets and stall settings of a run of ``task_type``
        (:meth:`PolicyConfig.stall_for`): the same for every run
        of a task type under one config (frozen), so built once and shared, not per run (made again if ``config`` is
        replaced)."""
        config = self.config
        cached = self._per_task.get(task_type)
        if cached is None or cached[0] is not config:
            cached = (
                config,
                config.budget_for(task_type),
                config.escalation_for(task_type),
                frozenset(config.tools.write_tools),
                frozenset(config.tools.read_tools),
                config.stall_for(task_type),
            )
            self._per_task[task_type] = cached
        return cached[1:]

    def new_run(self, run_id: str, task_type: str | None = None) -> RunSession:
        """A fresh session with its own state (budget, memory, counters) for one run."""
        return RunSession(self, run_id=run_id, task_type=task_type)


_Pending = tuple[ToolCall, ActionFingerprint, int, bool, bool]
"""A call requested in the previous iteration: the call, its fingerprint, the iteration, whether it is a write and
whether it waits."""


def _pair(pending: Sequence[_Pending], observations: Sequence[Observation]):
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


_NO_SUBJECT = StallSubject(0)


def _about(hit: StopHit) -> StallSubject:
    """What a stall hit is about (a ``stalled`` hit of a condition of your own is given a bare subject)."""
    return hit.stall or _NO_SUBJECT


class RunSession:
    """The engine's state for one run. ``observe`` every iteration event in order, then ``finish`` once."""

    def __init__(self, policy: Policy, *, run_id: str, task_type: str | None) -> None:
        self.policy = policy
        self.config = policy.config
        self.run_id = run_id
        self.task_type = task_type
        self.settings, self.escalation, self._write_tools, self._read_tools, self.stall_config = policy._run_settings(
            task_type
        )
        """The stall settings in force for this run: its task type's ``[task_types.X.stall]``, else ``[stall]``."""
        self.budget: int = self.settings.base_budget
        self.gains: list[float] = []
        self.decisions: list[Decision] = []
        self.stalls: list[StopHit] = []
        """The stall rules' hits of the run so far (a finish's evidence lists them under ``flags``)."""
        self.reflections = 0
        self._estimator = policy.estimator_factory()
        self._shingles = self._estimator if isinstance(self._estimator, ShingleNovelty) else None
        self._detector = StallDetector(self.stall_config)
        self._usage = UsageTracker(self.config.caps.prices)
        self._condition = policy.condition_for_run()
        self._pending: list[_Pending] = []
        self._reflected_at: int | None = None
        self._reflected: list[StopHit] = []
        """The findings of the turn's last reflection (what a second signal is compared with)."""
        self._tried_new = False
        self._iterations = 0
        self._last_event: IterationEvent | None = None
        self._stop: Decision | None = None
        self._end: RunEnd | None = None
        self._started = policy.clock()
        self._reprompted = False
        self.turn = 1
        """The conversation turn in force (1-based): a user message after the model's answer opens the next."""
        self._turn_start = 0
        """Model calls made before the current turn began (budgets and the hard cap count from here)."""

    def _new_turn(self, i: int) -> None:
        """Iteration ``i`` opens a new turn: budget, stall state, memory and reflections start afresh (as
        LangChain4j's cap restarts with every ``chat()`` call); the run's caps go on counting."""
        self.turn += 1
        self._turn_start = i - 1
        self.budget = self._turn_start + self.settings.base_budget
        self.reflections = 0
        self._reflected_at = None
        self._reflected = []
        self._tried_new = False
        self._detector = StallDetector(self.stall_config)
        self._estimator.reset()
        self._pending = []

    @property
    def _hard_cap(self) -> int:
        """The hard cap as a model-call number of the run (the turn's calls count from the turn's start)."""
        return self._turn_start + self.settings.hard_cap

    # ---- public state -----------------------------------------------------------------------------------------

    @property
    def iterations(self) -> int:
        return self._iterations

    @property
    def usage(self) -> UsageState:
        return self._usage.state

    @property
    def stopped(self) -> Decision | None:
        """The STOP decision, if the engine stopped the run."""
        return self._stop

    @property
    def ended(self) -> bool:
        return self._stop is not None or self._end is not None

    # ---- observe ----------------------------------------------------------------------------------------------

    def _novelty(self, text: str, echo: tuple[str, ...]) -> tuple[float, str]:
        """Novelty of a result: its share of new content, or, for a large result, its new characters measured
        against ``novelty.absolute_chars`` (whichever is larger), in [0, 1]; and its prepared text."""
        ncfg = self.config.novelty
        prepared = prepare_text(text, echo, ncfg.mask_volatile)
        if self._shingles is not None:
            novelty = self._shingles.score_prepared(prepared)
        else:
            novelty = float(self._estimator.observe(text, echo))
        novelty = min(max(novelty, 0.0), 1.0)
        novelty = max(novelty, min(1.0, novelty * len(prepared) / ncfg.absolute_chars))
        return novelty, prepared

    def _results(self, event: IterationEvent) -> tuple[ActionResult, ...]:
        results = []
        templates = self.stall_config.failure_templates
        for obs, match in _pair(self._pending, event.observations):
            text = observed_text(obs.text)  # at most a fixed window of it: a decision's cost does not grow with it
            # an observation that answers no requested call (a user message, an unmatched result) has no action,
            # so no raw key, template or write flag
            fp, requested_at, write, wait = None, None, False, False
            if match is not None:
                _call, fp, requested_at, write, wait = match
            novelty, prepared = self._novelty(text, () if fp is None else fp.arg_values)
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

    def observe(self, event: IterationEvent) -> Decision:
        """Take iteration ``event`` (the next model call of this run) and decide what happens before the next one."""
        if self._end is not None:
            raise BudgetError(f"run {self.run_id!r} is finished; start a new run with Policy.new_run()")
        if self._stop is not None:
            raise BudgetError(
                f"run {self.run_id!r} was stopped after iteration {self._stop.iteration} ({self._stop.rule}); "
                f"got iteration {event.index}: the run must end, call finish()"
            )
        if event.run_id != self.run_id:
            raise BudgetError(f"event of run {event.run_id!r} given to the session of run {self.run_id!r}")
        i = self._iterations + 1
        if event.index != i:
            raise BudgetError(
                f"run {self.run_id!r}: expected iteration {i}, got iteration {event.index}; observe events in order"
            )
        self._iterations = i
        new_turn = opens_turn(self._last_event, event)
        if self.config.budget_per_turn and new_turn:
            self._new_turn(i)
        self._reprompted = not new_turn and self._last_event is not None and self._last_event.is_final
        self._last_event = event
        calls = event.tool_calls
        # each call's fingerprint and kind once: the usage counts, the stall rules and the next iteration's
        # pairing all use these
        actions = tuple(fingerprint(c.name, c.arguments) for c in calls)
        self._usage.accumulate(event, self.policy.clock() - self._started, actions)
        wt, rt, waits = self._write_tools, self._read_tools, self.config.tools.wait_tools
        pending = [
            (c, fp, i, classify_action(c.name, c.arguments, wt, rt) == "write", is_wait(c.name, c.arguments, waits))
            for c, fp in zip(calls, actions, strict=False)
        ]
        writes = tuple(p[1] for p in pending if p[3])
        report = self._detector.observe(Step(i, self._results(event), actions, writes))
        self.gains.append(report.gain)
        self._pending = pending
        decision = self._decide(i, event, report, list(report.stalls), actions)
        self.decisions.append(decision)
        if decision.action is Action.STOP:
            self._stop = decision
        return decision

    def _decide(
        self,
        i: int,
        event: IterationEvent,
        report: StallReport,
        found: list[StopHit],
        actions: tuple[ActionFingerprint, ...],
    ) -> Decision:
        s = self.settings
        cfg = self.config
        gain = report.gain
        echo = None
        if self._reflected_at is not None and i == self._reflected_at + 1:
            echo = self._repeated_evidence(found, actions) if s.stop_on_repeated_evidence else None
            if found:
                self.stalls.extend(found)
            # grace: these results answer calls made before the model read the reflection; unless they bring the
            # reflected evidence again and the model, having read it, asks for more of the same (``echo``, below)
            found = []
            self._detector.rearm()
        fruitless = False
        if self._reflected_at is not None and i > self._reflected_at and actions:
            fruitless = self._detector.all_fruitless(actions)
            if not fruitless:
                self._tried_new = True  # something new since the reflection: the world may have changed
        if s.stop_on_fruitless_retry and fruitless and not found and not self._tried_new:
            found = [
                stall_hit(
                    "fruitless_retry",
                    "After the reflection the model asked again only for actions already found fruitless: "
                    + ", ".join(a.short(80) for a in actions)
                    + ".",
                    {"actions": [a.canonical for a in actions]},
                    StallSubject(i, actions[0].tool, tuple(a.short() for a in actions)),
                )
            ]
        elif echo is not None:
            found = [echo]
        self.stalls.extend(found)
        if event.is_final:
            return Decision(
                action=Action.CONTINUE,
                reason="the model answered",
                iteration=i,
                turn=self.turn,
                budget=self.budget,
                evidence={"gain": round(gain, 4)},
            )
        # the budget if the run goes on: a reflection's extension when there is a stall, else what this call
        # earned (a poll within its allowance waits, and a call re-prompted after a response with no tool call (a
        # format error answered by the harness) did not use a tool: neither spends budget)
        neutral = report.only_polls or (self._reprompted and not report.acted)
        budget = self.budget
        if found and self.reflections < s.max_reflections:
            budget = min(budget + s.extension, self._hard_cap)
        elif gain >= s.earn_threshold or neutral:
            budget = min(budget + max(s.earn_per_iteration, int(neutral)), self._hard_cap)
        usage = self._usage.state
        state = RunState(
            run_id=self.run_id,
            iteration=i,
            turn=self.turn,
            turn_start=self._turn_start,
            usage=usage,
            budget=budget,
            hard_cap=self._hard_cap,
            hard_cap_per_turn=s.hard_cap,
            gain=gain,
            stalls=tuple(found),
            reflections=self.reflections,
            max_reflections=s.max_reflections,
        )
        hit = self._condition.check(state)
        if hit is None:
            self.budget = budget
            return self._continue(i, gain)
        # precedence: a stall once the reflections are used up, then a limit (a cap, a tree budget, a condition of
        # the config's or your own), then a reflection on a stall, then the budget
        hits = hit.leaves()
        stalls = [h if h.stall else replace(h, stall=StallSubject(i)) for h in hits if h.outcome is Outcome.STALLED]
        limits = [h for h in hits if h.outcome is not Outcome.STALLED and h.rule != "budget"]
        budget_hit = next((h for h in hits if h.rule == "budget"), None)
        if stalls and self.reflections >= s.max_reflections:
            stoppers = [h for h in stalls if h.stops]
            if stoppers:
                outcome = Outcome.ESCALATED if cfg.stall_outcome == "escalated" else Outcome.STALLED
                first = stoppers[0]
                again = " again after a reflection" if self.reflections else ""
                return self._stop_decision(
                    i,
                    outcome,
                    first.rule,
                    f"stalled{again}: {first.message}",
                    stalls=stalls,
                    hits=limits,
                    usage=usage,
                    signal=self._signal(stoppers),
                )
            stalls = []  # futility alone, and no reflection left to give: never a stop by itself
        if limits:
            names = ", ".join(h.rule.removeprefix("cap:") for h in limits)
            return self._stop_decision(
                i,
                limits[0].outcome,
                limits[0].rule,
                f"hard cap reached ({names}): {limits[0].message}",
                stalls=stalls,
                hits=limits,
                usage=usage,
            )
        self.budget = budget
        if stalls:
            self.reflections += 1
            self._reflected_at = i
            self._reflected = list(stalls)
            # actions requested in this same response came after the fruitless ones: they may change the world
            self._tried_new = bool(actions) and not self._detector.all_fruitless(actions)
            self._detector.rearm()
            if budget_hit is None:
                text = build_reflection(stalls, remaining_calls=self.budget - i, config=cfg.reflection)
                return Decision(
                    action=Action.REFLECT,
                    reason=stalls[0].message,
                    rule=stalls[0].rule,
                    reflection=text,
                    iteration=i,
                    turn=self.turn,
                    budget=self.budget,
                    evidence=self._evidence(stalls, limits, usage),
                )
        if budget_hit is None:
            return self._continue(i, gain)
        return self._stop_decision(
            i, Outcome.EXPIRED, "budget", budget_hit.message, stalls=stalls, hits=limits, usage=usage
        )

    def _continue(self, i: int, gain: float) -> Decision:
        return Decision(
            action=Action.CONTINUE, iteration=i, turn=self.turn, budget=self.budget, evidence={"gain": round(gain, 4)}
        )

    def _repeated_evidence(self, found: Sequence[StopHit], actions: Sequence[ActionFingerprint]) -> StopHit | None:
        """In the call after a reflection: a finding that is the reflected evidence again (the same rule about the
        same actions), when the model, having read the reflection, asks only for those same actions again and for
        no write. Returned as the stop's finding; None when the evidence is new or the model tries something else.
        A reworded request (``same_answer``) is a new action, not the same state: it is judged by its result."""
        if not actions or not self._reflected:
            return None
        if any(p[3] for p in self._pending):  # the model's response makes a write: an attempt, judged by its result
            return None
        reflected_ids = {x for g in self._reflected for x in _about(g).ids}
        for h in found:
            if not h.stops or h.rule == "same_answer" or not any(h.rule == g.rule for g in self._reflected):
                continue
            if set(_about(h).ids) & reflected_ids and all({a.exact_id, a.norm_id} & reflected_ids for a in actions):
                return replace(
                    h,
                    message=h.message + " The model, after the reflection, asked for the same again.",
                    evidence={**h.evidence, "repeated_evidence": True},
                )
        return None

    def _signal(self, stoppers: Sequence[StopHit]) -> dict[str, Any]:
        """Which signal a stall stop is: ``first`` (no reflection before it in this turn) or ``second`` (after one),
        and for a second whether it is the reflected evidence repeated (the same rule about the same actions, a
        fruitless retry, or a stop on repeated evidence) or new evidence; replay reports the split."""
        if self._reflected_at is None:
            return {"kind": "first"}
        reflected_ids = {x for g in self._reflected for x in _about(g).ids}
        same = any(
            h.rule == "fruitless_retry"
            or h.evidence.get("repeated_evidence")
            or any(
                g.rule == h.rule and (set(_about(h).ids) & reflected_ids or _about(g).tool == _about(h).tool)
                for g in self._reflected
            )
            for h in stoppers
        )
        return {
            "kind": "second",
            "reflected_at": self._reflected_at,
            "reflected_rules": [f.rule for f in self._reflected],
            "same_evidence": same,
        }

    def _evidence(self, stalls: Sequence[StopHit], hits: Sequence[StopHit], usage: UsageState | None) -> dict[str, Any]:
        if usage is None:
            usage = self._usage.state
        return {
            "flags": [h.as_dict() for h in stalls],
            "caps": [h.as_dict() for h in hits],
            "gains": [round(g, 4) for g in self.gains],
            "budget": self.budget,
            "base_budget": self.settings.base_budget,
            "hard_cap": self.settings.hard_cap,
            "reflections": self.reflections,
            "usage": usage.as_dict(),
        }

    def _stop_decision(
        self, i, outcome, rule, reason, *, stalls, hits, usage: UsageState | None, signal: dict | None = None
    ) -> Decision:
        if outcome in (Outcome.STALLED, Outcome.EXPIRED) and self.escalation.escalates(
            rule, outcome is Outcome.STALLED
        ):
            outcome = Outcome.ESCALATED
        return Decision(
            action=Action.STOP,
            reason=reason,
            rule=rule,
            outcome=outcome,
            iteration=i,
            turn=self.turn,
            budget=self.budget,
            evidence=self._evidence(stalls, hits, usage)
            if signal is None
            else {**self._evidence(stalls, hits, usage), "signal": signal},
        )

    def resume(self, budget: int, reason: str = "a human answered the escalation") -> Decision:
        """Go on after an escalation (a STOP with outcome ``escalated``): the stop is lifted and the next model call
        opens a new turn with ``budget`` model calls (capped by the hard cap), fresh stall state and reflections; caps
        go on counting across the run. Returns the CONTINUE decision (rule ``resume``) that records it."""
        if self._end is not None:
            raise BudgetError(f"run {self.run_id!r} is finished; an escalated run resumes before finish()")
        if self._stop is None or self._stop.outcome is not Outcome.ESCALATED:
            got = "running" if self._stop is None else f"stopped ({self._stop.outcome})"
            raise BudgetError(f"run {self.run_id!r} is {got}, not escalated: only an escalated run can resume")
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise BudgetError(f"resume budget {budget!r} must be a positive number of model calls")
        self._stop = None
        self._new_turn(self._iterations + 1)
        self.budget = min(self._turn_start + budget, self._hard_cap)
        decision = Decision(
            action=Action.CONTINUE,
            reason=reason,
            rule="resume",
            iteration=self._iterations,
            turn=self.turn,
            budget=self.budget,
            evidence={"granted": self.budget - self._turn_start},
        )
        self.decisions.append(decision)
        return decision

    # ---- finish -----------------------------------------------------------------------------------------------

    def finish(self, causes: Causes | None = None, /, *, notes: EndNotes | None = None, **keywords: Any) -> RunEnd:
        """End the run with exactly one outcome, from its :class:`~pyguard.ending.Causes`: the object, or its fields
        as keywords (``finish(answer="done")``; a keyword wins over the object's field; read by
        :meth:`Causes.of <pyguard.ending.Causes.of>`, an unknown cause or a bad value a ConfigError). After a STOP:
        that STOP's outcome, the answer kept beside it as the salvaged answer. Otherwise, in order
        (:func:`pyguard.ending.settle`): guard_error, cancelled, ``expired`` (a cap outside the engine ran out: the
        agent's own iteration cap, the Java fail-safe; the reason says which) -> expired, error -> failed, an answer
        (given, or the text of a final model response) that a verifier did not reject -> succeeded, else failed."""
        causes = Causes.of("RunSession.finish", causes, keywords)
        if self._end is not None:
            raise BudgetError(f"run {self.run_id!r} is already finished (outcome {self._end.outcome.value})")
        last = self._last_event
        if causes.answer is None and last is not None and last.is_final and last.text is not None:
            causes = causes.model_copy(update={"answer": last.text})
        evidence: dict[str, Any] = {
            "gains": [round(g, 4) for g in self.gains],
            "budget": self.budget,
            "reflections": self.reflections,
            "flags": [h.as_dict() for h in self.stalls],
        }
        stop = None
        if self._stop is not None:
            stop = (self._stop.outcome or Outcome.EXPIRED, self._stop.reason)
            evidence = {"rule": self._stop.rule, **self._stop.evidence, "flags": evidence["flags"]}
        settled: Settled = settle(causes, stop=stop)
        usage = self._usage.state
        reported = usage.tokens_reported
        tokens = TokenTotals(
            usage.input_tokens if reported else None,
            usage.output_tokens if reported else None,
            usage.total_tokens if reported else None,
            False,
        )
        self._end = footer(
            self.run_id,
            (),
            settled,
            answer=causes.answer,
            tokens=tokens,
            iterations=self._iterations,
            tool_calls=usage.tool_calls,
            cost=usage.cost if self.config.caps.prices and usage.model_calls > usage.unpriced_calls else None,
            wall_ms=(self.policy.clock() - self._started) * 1000.0,
            evidence=evidence,
            censored=last is not None and not last.is_final,
            notes=notes or EndNotes(),
        )
        return self._end
