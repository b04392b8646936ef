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

That is the flow when each call's results are judged with the next call (``judge_results_early = false``). By
default they are judged when they exist, before the next call is sent (:mod:`pyguard.engine.paired`): a stop then
replaces that call, a first stall earns a reflection, and a stop needs that stall to persist right after it
(:mod:`pyguard.engine.answered`); the response of the next call is judged apart (caps, the budget, a fruitless
retry).

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
``SO-`` prefix) is reflected on before its 3rd model call (on the 2nd identical result) and stopped after its 3rd,
when the model asks for the same shipment again: 3 model calls instead of 11 (judged one call later, 4).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable

from pyguard.base.errors import ConfigError
from pyguard.engine.conditions import StopCondition
from pyguard.engine.config import BudgetSettings, EscalationConfig, PolicyConfig, StallConfig
from pyguard.engine.novelty import NoveltyEstimator, make_estimator
from pyguard.engine.session import RunSession
from pyguard.engine.stop import policy_condition

__all__: list[str] = []

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
        state), and a condition of your own that keeps state between checks gets one copy per run, reset before the
        run's first check (:meth:`StopCondition.reset`): runs on many threads never share it, a run starting never
        resets another's, and what the given object counted before (a check in a test) does not carry over."""
        extra = self.extra_stop
        if extra is not None:
            extra = copy.deepcopy(extra) if isinstance(extra, StopCondition) else extra()
            if not isinstance(extra, StopCondition):
                raise ConfigError(f"extra_stop made {extra!r}, not a StopCondition")
            extra.reset()  # the run starts from nothing, whatever the given object had counted before
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
