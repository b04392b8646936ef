"""One run's engine state (:class:`RunSession`): it observes every model call, judges it by the run's stop condition
and turns the verdict into a decision, then finishes the run with one outcome. The policy and its defaults:
:mod:`pyguard.engine.policy`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from pyguard.base.decisions import Action, Decision
from pyguard.base.ending import Causes, EndNotes, Settled, TokenTotals, footer, settle, stop_outcome
from pyguard.base.errors import BudgetError
from pyguard.base.events import IterationEvent, Observation, Outcome, RunEnd, opens_turn
from pyguard.engine import paired, verdicts
from pyguard.engine.actions import classify_action
from pyguard.engine.conditions import RunState, StopCondition, StopHit
from pyguard.engine.config import BudgetSettings, EscalationConfig, PolicyConfig, StallConfig
from pyguard.engine.fingerprint import ActionFingerprint, fingerprint
from pyguard.engine.novelty import NoveltyEstimator
from pyguard.engine.reflected import TurnReflections
from pyguard.engine.results import Pending, ResultReader
from pyguard.engine.run_shape import RunShape
from pyguard.engine.stall import StallDetector
from pyguard.engine.stall_report import StallReport
from pyguard.engine.steps import Step
from pyguard.engine.usage import UsageState, UsageTracker
from pyguard.engine.waits import is_wait

__all__: list[str] = []


class SessionPolicy(Protocol):
    """What a session needs of its policy (:class:`pyguard.engine.policy.Policy`, which makes the sessions)."""

    config: PolicyConfig
    clock: Callable[[], float]
    estimator_factory: Callable[[], NoveltyEstimator]

    def condition_for_run(self) -> StopCondition: ...

    def _run_settings(
        self, task_type: str | None
    ) -> tuple[BudgetSettings, EscalationConfig, frozenset[str], frozenset[str], StallConfig]: ...


class RunSession:
    """The engine's state for one run. ``observe`` every iteration event in order (and, where the results of a call
    reach the guard before the next call, ``observe_results`` in between: :mod:`pyguard.engine.paired`), then
    ``finish`` once."""

    def __init__(self, policy: SessionPolicy, *, run_id: str, task_type: str | None) -> None:
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
        self._reflected = TurnReflections()
        self._reader = ResultReader(
            self.config.novelty, policy.estimator_factory(), self.stall_config.failure_templates
        )
        self._detector = StallDetector(self.stall_config)
        self._usage = UsageTracker(self.config.caps.prices)
        self._condition = policy.condition_for_run()
        self._pending: list[Pending] = []
        self._shape = RunShape()
        self._judged = 0  # the last call whose results observe_results judged (0: none)
        self._judged_results: tuple[Observation, ...] = ()  # and those results
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
        self._reflected = TurnReflections()
        self._detector = StallDetector(self.stall_config)
        self._reader.estimator.reset()
        self._pending = []
        self._judged = 0

    @property
    def _hard_cap(self) -> int:
        """The hard cap as a model-call number of the run (the turn's calls count from the turn's start)."""
        return self._turn_start + self.settings.hard_cap

    # ---- public state -----------------------------------------------------------------------------------------

    @property
    def reflections(self) -> int:
        """Reflections sent in the current turn."""
        return self._reflected.count

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
        if self._judged and self._judged == i - 1 and not new_turn:
            # this request's results were judged before it was sent (observe_results): judge the response only
            self._pending = pending
            decision = paired.judge_response(self, i, event, actions)
        else:
            self._judged = 0
            report = self._detector.observe(Step(i, self._reader.read(self._pending, event), actions, writes))
            self.gains.append(report.gain)
            self._pending = pending
            decision = self._decide(i, event, report, list(report.stalls), actions)
        self.decisions.append(decision)
        if decision.action is Action.STOP:
            self._stop = decision
        return decision

    def observe_results(self, index: int, observations: Sequence[Observation]) -> Decision:
        """Judge call ``index``'s tool results before the next call is sent (:func:`paired.observe_results`)."""
        return paired.observe_results(self, index, observations)

    def results_judged(self, index: int) -> tuple[Observation, ...] | None:
        """Call ``index``'s tool results when :meth:`observe_results` judged them last (an escalation decided on
        them keeps them: no event holds them), else None."""
        return self._judged_results if self._judged == index and index else None

    def _decide(
        self,
        i: int,
        event: IterationEvent,
        report: StallReport,
        found: list[StopHit],
        actions: tuple[ActionFingerprint, ...],
    ) -> Decision:
        writes = any(p[3] for p in self._pending)
        graced, found = self._reflected.judge(
            i, found, actions, writes=writes, detector=self._detector, settings=self.settings
        )
        self.stalls.extend(graced)
        self.stalls.extend(found)
        if event.is_final:
            return verdicts.continued(self, i, report.gain, "the model answered")
        state = self._state(i, report, found)
        return verdicts.decide(self, state, self._condition(state), actions)

    def _state(self, i: int, report: StallReport, found: list[StopHit]) -> RunState:
        """The run after call ``i``, with the budget it has if it goes on: a reflection's extension when there is
        a stall and a reflection left, else what this call earned (a poll within its allowance waits, and a call
        re-prompted after a response with no tool call (a format error answered by the harness) did not use a
        tool: neither spends budget)."""
        s = self.settings
        neutral = report.only_polls or (self._reprompted and not report.acted)
        budget = self.budget
        if found and self.reflections < s.max_reflections:
            budget = min(budget + s.extension, self._hard_cap)
        elif report.gain >= s.earn_threshold or neutral:
            budget = min(budget + max(s.earn_per_iteration, int(neutral)), self._hard_cap)
        return self._run_state(i, budget, report.gain, tuple(found), s.max_reflections)

    def _run_state(
        self, i: int, budget: int, gain: float, stalls: tuple[StopHit, ...], max_reflections: int
    ) -> RunState:
        """The run after call ``i`` as the stop condition reads it, with ``budget`` if it goes on."""
        return RunState(
            run_id=self.run_id,
            iteration=i,
            turn=self.turn,
            turn_start=self._turn_start,
            usage=self._usage.state,
            budget=budget,
            hard_cap=self._hard_cap,
            hard_cap_per_turn=self.settings.hard_cap,
            gain=gain,
            stalls=stalls,
            reflections=self.reflections,
            max_reflections=max_reflections,
            reflected_at=self._reflected.at,
            reflected=tuple(self._reflected.findings),
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
        """End the run with exactly one outcome, from its :class:`~pyguard.base.ending.Causes`: the object, or its fields
        as keywords (``finish(answer="done")``; a keyword wins over the object's field; read by
        :meth:`Causes.of <pyguard.base.ending.Causes.of>`, an unknown cause or a bad value a ConfigError). After a STOP:
        that STOP's outcome, the answer kept beside it as the salvaged answer. Otherwise, in order
        (:func:`pyguard.base.ending.settle`): guard_error, cancelled, ``expired`` (a cap outside the engine ran out: the
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
            stop = (stop_outcome(self._stop.outcome), self._stop.reason)
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
