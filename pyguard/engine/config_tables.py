"""The tables of a policy config (:class:`pyguard.engine.config.PolicyConfig`): ``[caps]`` and their prices,
``[novelty]``, ``[stall]``, ``[tools]``, ``[reflection]`` and ``[escalation]``. Re-exported by
:mod:`pyguard.engine.config`, the one place to import them from."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from pyguard.engine.stop_config import (
    CostConfig,
    IdenticalActionsConfig,
    ModelCallsConfig,
    StopConfig,
    TokensConfig,
    ToolCallsConfig,
    WallClockConfig,
)
from pyguard.engine.strict_config import StrictConfig

__all__: list[str] = []


class Price(StrictConfig):
    """Price of one model, in currency units (e.g. USD) per million tokens."""

    input_per_mtok: float = Field(ge=0)
    """Price per million input (prompt) tokens."""
    output_per_mtok: float = Field(ge=0)
    """Price per million output (completion) tokens."""


class ToolLimitConfig(StrictConfig):
    """A limit on one tool's executions per run, with its exit behaviour: ``continue`` (LangChain v1's
    ``ToolCallLimitMiddleware`` default): a call over the limit is not executed, the model gets a tool result saying
    the limit was reached and why, and the run goes on (its other tools still run). The live guard enforces it in the
    tools' executors (``GuardedRun.tools(...)``, ``AgentGuard.tools(...)``); the blocked calls are counted apart
    (``RunResult.tool_calls_blocked``). ``end``: the call over the limit is not executed and the run ends with the
    stop message, no model call after it (as ``on_stop="end"``); ``error``: it is not executed and the agent's call
    raises the guard's stop exception (as ``on_stop="raise"``); both whatever the run's ``on_stop``, outcome
    ``expired``, rule ``tool_limit:<tool>``."""

    limit: int = Field(ge=1)
    """Executions of the tool a run may make."""
    exit: Literal["continue", "end", "error"] = "continue"


class CapsConfig(StrictConfig):
    """Hard limits, independent of the dynamic budget. ``None`` disables a limit. Any limit reached stops the run
    (outcome ``expired``). A limit of N means "at most N": the run stops once N is reached."""

    max_model_calls: int | None = Field(default=None, ge=1)
    """Model calls (iterations) per run."""
    max_tool_calls: int | None = Field(default=None, ge=1)
    """Tool calls requested per run, all tools together."""
    max_tool_calls_per_tool: dict[str, int] = Field(default_factory=dict)
    """Tool calls per tool name, e.g. ``{"send_email": 3}``: the run ends (``expired``) when one is reached."""
    tool_limits: dict[str, ToolLimitConfig] = Field(default_factory=dict)
    """Per-tool limits that block only that tool's calls over the limit (``[caps.tool_limits] send_email =
    { limit = 2, exit = "continue" }``): see :class:`ToolLimitConfig`."""
    max_input_tokens: int | None = Field(default=None, ge=1)
    max_output_tokens: int | None = Field(default=None, ge=1)
    max_total_tokens: int | None = Field(default=None, ge=1)
    max_cost: float | None = Field(default=None, gt=0)
    """Cost per run, computed with ``prices``. Calls of unpriced models count as 0 and are reported in evidence."""
    prices: dict[str, Price] = Field(default_factory=dict)
    """Price table by model name; the key ``"*"`` prices any model not listed."""
    max_wall_s: float | None = Field(default=None, gt=0)
    """Wall-clock seconds since the run started, measured with the policy's (injectable) clock."""
    max_identical_actions: int | None = Field(default=None, ge=1)
    """Times the very same action (tool + canonical arguments) may be requested, whatever it returned."""

    @model_validator(mode="after")
    def _check_per_tool(self) -> CapsConfig:
        for tool, n in self.max_tool_calls_per_tool.items():
            if n < 1:
                raise ValueError(f"max_tool_calls_per_tool[{tool!r}] = {n} must be >= 1")
        return self

    def conditions(self) -> list[StopConfig]:
        """The caps as the stop conditions they are, in this order: ``max_<name> = N`` is ``{ kind = "<name>",
        limit = N }`` (:mod:`pyguard.engine.stop_config`; ``max_tool_calls_per_tool`` a ``tool_calls`` per tool,
        ``max_wall_s`` a ``wall_clock`` of that many seconds); the table is the OR of them."""
        out: list[StopConfig] = []
        if self.max_model_calls is not None:
            out.append(ModelCallsConfig(limit=self.max_model_calls))
        if self.max_tool_calls is not None:
            out.append(ToolCallsConfig(limit=self.max_tool_calls))
        out += [ToolCallsConfig(limit=n, tool=tool) for tool, n in sorted(self.max_tool_calls_per_tool.items())]
        for which in ("input", "output", "total"):
            limit = getattr(self, f"max_{which}_tokens")
            if limit is not None:
                out.append(TokensConfig(kind=f"{which}_tokens", limit=limit))  # type: ignore[arg-type]
        if self.max_cost is not None:
            out.append(CostConfig(limit=self.max_cost))
        if self.max_wall_s is not None:
            out.append(WallClockConfig(seconds=self.max_wall_s))
        if self.max_identical_actions is not None:
            out.append(IdenticalActionsConfig(limit=self.max_identical_actions))
        return out


class NoveltyConfig(StrictConfig):
    """The default information-gain estimator: hashed character shingles (numpy)."""

    kind: Literal["shingles"] = "shingles"
    shingle_size: int = Field(default=8, ge=3, le=8)
    """Characters per shingle (at most 8: a shingle is packed into one 64-bit word)."""
    mask_volatile: bool = True
    """Mask timestamps, dates, clock times, UUIDs, long hex ids and durations before comparing."""
    absolute_chars: int = Field(default=5000, ge=1)
    """New characters that count as a wholly new result: an iteration's gain is at least its new characters
    divided by this, so a 10 KB page of which 14% is new (1,400 characters, gain 0.28) is productive although
    its share of new content is modest."""
    window_shingles: int = Field(default=1 << 19, ge=1 << 10)
    """Memory of the estimator: it remembers at least this many distinct shingles (about as many bytes of
    observation text; the default ~512 KB is more than a 128k-token context) and forgets older ones."""


class StallConfig(StrictConfig):
    """Stall detection thresholds."""

    low_gain_threshold: float = Field(default=0.1, ge=0, le=1)
    """An iteration whose gain is below this is a low-gain iteration."""
    low_gain_streak: int = Field(default=4, ge=1)
    """This many consecutive low-gain iterations is a stall (rule ``low_gain_streak``)."""
    low_gain_streak_after_reflection: int = Field(default=3, ge=1)
    """The same, once the turn has had a reflection (counted from the first iteration after the grace call): the
    model was told it is learning nothing. Either streak waits one iteration when the model's latest response makes
    a write with new content (an edit): the attempt is judged by what it brings, not stopped unexecuted. On recorded
    runs of coding agents 2 dull results in a row after a reflection are common in work that succeeds; 3 stopped
    none of them once new edits were waited for."""
    empty_streak: int = Field(default=3, ge=1)
    """A low-gain streak in which every tool result was empty (:func:`pyguard.engine.result_kinds.is_empty_result`:
    ``[]``, "No matching records found.") is a stall at this length, when shorter than ``low_gain_streak``: an
    empty answer holds nothing at all, where a dull one (a re-read, a grep with few hits) may still hold a clue.
    Three queries in a row that find nothing are a search coming up empty."""
    empty_streak_after_reflection: int = Field(default=2, ge=1)
    """The same once the turn has had a reflection (``low_gain_streak_after_reflection`` for empty answers): the
    model was told its queries find nothing; two more that find nothing stop the run."""
    empty_results_no_gain: bool = True
    """Score a result that is only an empty container (``[]``, ``{"items": [], "total": 0}``) or a short no-data
    phrase ("No matching records found.", "0 rows returned.", "order not found") as zero gain: an empty answer
    is not new information, even the first time (see :func:`pyguard.engine.result_kinds.is_empty_result`)."""
    changed_result_gain: float = Field(default=0.3, ge=0, le=1)
    """Gain credited to a repeated action whose (masked) result changed: polling, re-run after a change."""
    normalised_repeats: bool = True
    """Also treat trivially rewritten arguments (``12345`` vs ``SO-12345``, case, punctuation) as repeats."""
    error_storm_length: int = Field(default=3, ge=2)
    """This many consecutive errors of the same kind from the same tool with unchanged inputs is a stall."""
    cycle_max_period: int = Field(default=4, ge=2)
    """Longest action cycle (A, B, ..., A, B, ...) reported as a cycle rather than a plain repeat."""
    new_write_gain: float = Field(default=0.3, ge=0, le=1)
    """Gain credited to an iteration that made a write with new content (an edit, a created file, a changed
    command): an attempt is progress whatever the tool answers ("The file has been edited")."""
    max_fruitless_attempts: int = Field(default=6, ge=2)
    """A read re-run after each of this many new writes in a row that returns the very same result every time is
    a stall (rule ``fruitless_attempts``): the attempts change nothing where the agent checks them. Before that,
    a re-run after a new write is a check, never a repeat."""
    polling_allowance: int = Field(default=10, ge=0)
    """A read repeated whose result changed only in volatile fields (timestamps, ids, durations) is a poll: it
    neither earns nor spends budget and is not a stall, up to this many polls in a row (then rule
    ``polling_limit``). 0 treats polls as plain repeats."""
    polling_allowance_chars: int = Field(default=8000, ge=0)
    """The polls in a row may also bring back at most this many characters of results in all (every poll adds its
    result to the model's context): a status check of 250 characters gets the whole ``polling_allowance``, a 10 KB
    page re-fetched with only its footer's request id changed is over it at once, and judged like a repeat."""
    failure_templates: bool = True
    """Score a result whose template (:mod:`pyguard.engine.templates`) matches an earlier result of the same tool
    for another request as zero gain, and flag ``same_answer_streak`` of them since the last real progress (rule
    ``same_answer``): a rephrased lookup failing again brings nothing, wherever it falls in the turn."""
    same_answer_streak: int | None = Field(default=None, ge=2)
    """Results in a row whose template matches an earlier one of the same tool that make a stall (rule
    ``same_answer``); None: ``error_storm_length``."""
    cycle_progress: bool = True
    """Judge a repeat over the whole cycle: an action that returns the same result again is a stall only when
    nothing since its last result brought anything (no write with new content, no changed check output, no new
    result); a cleanup (``rm file``) repeated exactly between attempts with new content is progress."""
    waits_make_polls: bool = True
    """An identical read with a wait since (a tool that sleeps or waits: :mod:`pyguard.engine.waits`), a read that
    waits itself, or a result that says "pending" is a poll (within ``polling_allowance``), not a repeat."""
    futility_stops: bool = False
    """Whether ``fruitless_attempts`` (new attempts leaving a check's output unchanged) may stop a run; by default
    it earns a reflection, never a stop by itself (attempts are not a repeated state), and stops only when it
    persists right after its reflection (:mod:`pyguard.engine.answered`)."""
    read_run_shape: bool = True
    """Read the run's shape (:mod:`pyguard.engine.run_shape`): where it says states are revisited as a matter of
    course (one step tool, a small action vocabulary, revisits amid new observations), stalls are reflected on only
    and the budget does not bind (the caps stop the run). False judges such runs like any other: set it for a task
    type (``[task_types.X.stall]``) whose labelled runs show the stall rules safe there."""
    nothing_new_window: int = Field(default=35, ge=2)
    """Tool-using calls in a row the ``nothing_new`` rule (:mod:`pyguard.engine.nothing_new`) looks back over: a
    window this long in which at most ``nothing_new_max_new`` calls brought a result new to the run earns a
    reflection, and stops the run when the window already holds one (for runs of any shape, those whose states
    recur included). Long, because productive stretches of an environment-step agent bring little that is new."""
    nothing_new_max_new: int = Field(default=2, ge=0)
    """Most calls in the ``nothing_new`` window with a result new to the run for it still to be a stall; below
    ``nothing_new_window``."""

    @model_validator(mode="after")
    def _check_nothing_new(self) -> StallConfig:
        if self.nothing_new_max_new >= self.nothing_new_window:
            raise ValueError(
                f"nothing_new_max_new {self.nothing_new_max_new} is not below nothing_new_window "
                f"{self.nothing_new_window}: every full window would be a stall; lower nothing_new_max_new or raise "
                "nothing_new_window"
            )
        return self


class ToolsConfig(StrictConfig):
    """Which tools change the world (writes) and which only read; inferred when not named
    (:mod:`pyguard.engine.actions`)."""

    write_tools: list[str] = Field(default_factory=list)
    """Tools that are always writes (side effects: edits, orders, messages)."""
    read_tools: list[str] = Field(default_factory=list)
    """Tools that are always reads, whatever their names suggest."""
    wait_tools: list[str] = Field(default_factory=list)
    """Tools that wait (their descriptions say so, their names do not): a read repeated after one is a poll."""

    @model_validator(mode="after")
    def _check_disjoint(self) -> ToolsConfig:
        both = sorted(set(self.write_tools) & set(self.read_tools))
        if both:
            raise ValueError(f"tools {both} are named both in write_tools and read_tools; keep each in one list")
        return self


class ReflectionConfig(StrictConfig):
    """How the reflection message is written."""

    max_quote_chars: int = Field(default=300, ge=0)
    """Longest tool output quoted (as data) in the reflection; longer outputs are cut with a marker."""
    max_items: int = Field(default=3, ge=1)
    """Most stall findings listed in one reflection."""
    mention_budget: bool = True
    """Tell the model how many model calls it has left."""


EscalationChoice = Literal["stop", "escalate"]


class EscalationConfig(StrictConfig):
    """What the guard does when it would stop a run: stop it, or escalate it to a human (outcome ``escalated``, with
    its evidence and a handle the run can be resumed from once the human answered; see :mod:`pyguard.escalation`).

    TOML::

        [escalation]
        on_stall = "escalate"            # stall rules: repeat_no_gain, cycle, low_gain_streak, error_storm, ...
        on_expire = "stop"               # the dynamic budget (rule "budget") or a hard cap ("cap:<name>")
        rules = { "cap:total_tokens" = "escalate", "cycle" = "stop" }   # per rule, over the two above
        resume_budget = 6                # model calls granted when a human resumes the run
        [task_types.refund.escalation]   # a task type's table replaces this one for that type
        on_stall = "escalate"
    """

    on_stall: EscalationChoice = "stop"
    """A run stopped by a stall (outcome ``stalled``): ``escalate`` hands it to a human instead."""
    on_expire: EscalationChoice = "stop"
    """A run stopped by its budget or a hard cap (outcome ``expired``): ``escalate`` hands it to a human instead."""
    rules: dict[str, EscalationChoice] = Field(default_factory=dict)
    """Per rule (``Decision.rule``: ``cycle``, ``budget``, ``cap:total_tokens``, ...), overriding the two above."""
    resume_budget: int = Field(default=8, ge=1)
    """Model calls a resumed run may make (its new turn's budget) before it has earned more."""

    def escalates(self, rule: str | None, stalled: bool) -> bool:
        """True when a stop by ``rule`` (a stall when ``stalled``, else a budget or cap) escalates instead."""
        choice = self.rules.get(rule) if rule is not None else None
        if choice is None:
            choice = self.on_stall if stalled else self.on_expire
        return choice == "escalate"
