"""Configuration of the dynamic budget engine: pydantic models, TOML and pyproject loading.

Every model is frozen, forbids unknown keys and round-trips (``M.model_validate(m.model_dump()) == m``).
Invalid values raise :class:`pyguard.errors.ConfigError` naming the key, the value and what is expected,
whether the config comes from Python, a dict or a TOML file.

TOML layout (a plain file, or ``[tool.pyguard]`` in a ``pyproject.toml``)::

    base_budget = 8
    hard_cap = 40
    [stall]
    low_gain_streak = 3
    [caps]
    max_total_tokens = 200000
    max_cost = 2.0
    [caps.prices."gpt-4o"]
    input_per_mtok = 2.5
    output_per_mtok = 10.0
    [task_types.lookup]
    base_budget = 4
    hard_cap = 12
    [task_types.lookup.stall]           # replaces [stall] for runs of this task type
    low_gain_streak = 2
    [stop]                              # more stop conditions (pyguard.engine.stop_config)
    kind = "any"
    of = [{ kind = "model_calls", limit = 60 }, { kind = "tool_calls", limit = 3, tool = "send_email" }]

Tables named in :data:`OTHER_SECTIONS` (``check``, ``calibrate``, ...) belong to other pyguard components
sharing ``[tool.pyguard]`` and are skipped here. A ``[tool.pyguard.policy]`` table, if present, is used instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from pyguard.config_search import find_config_file, read_policy_table
from pyguard.engine.stop_config import StopConfig
from pyguard.engine.strict_config import StrictConfig
from pyguard.errors import ConfigError

__all__ = [
    "Price",
    "CapsConfig",
    "NoveltyConfig",
    "StallConfig",
    "ReflectionConfig",
    "EscalationConfig",
    "TaskTypeConfig",
    "BudgetSettings",
    "PolicyConfig",
]

OTHER_SECTIONS: frozenset[str] = frozenset(
    {"check", "calibrate", "replay", "demo", "jvm", "trace", "guard", "testing", "pytest", "bench"}
)
"""Sub-tables of ``[tool.pyguard]`` owned by other components; the policy loader skips them."""


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
    (``RunResult.tool_calls_blocked``). To end the whole run at a tool's limit, use ``max_tool_calls_per_tool``."""

    limit: int = Field(ge=1)
    """Executions of the tool a run may make."""
    exit: Literal["continue"] = "continue"


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
    for another request as zero gain, and flag ``same_answer_streak`` of them in a row (rule ``same_answer``): a
    rephrased lookup failing again brings nothing."""
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
    it earns a reflection, never a stop by itself (attempts are not a repeated state)."""


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


Mode = Literal["observe", "reflect", "enforce"]
"""How a live guard acts on its decisions (the engine decides the same in every mode; replay ignores the mode):
``enforce`` applies them; ``reflect`` sends reflections and turns a stop into one last reflection, so it never stops
the run; ``observe`` acts on none. Every decision is recorded in the trace either way."""


OnStop = Literal["answer", "raise", "end"]
"""What a live guard does when it stops a run: ``answer`` (one wrap-up model call with no tools), ``raise`` (the
agent's call raises Java's ``GuardStopException``) or ``end`` (no model call: the agent returns the stop message)."""


class TaskTypeConfig(StrictConfig):
    """Per-task-type overrides of the budget, stall settings and escalation; unset fields fall back to the
    policy's."""

    base_budget: int | None = Field(default=None, ge=1)
    hard_cap: int | None = Field(default=None, ge=1)
    extension: int | None = Field(default=None, ge=0)
    earn_threshold: float | None = Field(default=None, ge=0, le=1)
    earn_per_iteration: int | None = Field(default=None, ge=0)
    max_reflections: int | None = Field(default=None, ge=0)
    stop_on_fruitless_retry: bool | None = None
    stop_on_repeated_evidence: bool | None = None
    escalation: EscalationConfig | None = None
    """Replaces the policy's ``escalation`` table for this task type."""
    stall: StallConfig | None = None
    """Replaces the policy's ``[stall]`` table for this task type (a whole table: unset keys take the
    :class:`StallConfig` defaults, not the policy's ``[stall]`` values)."""
    mode: Mode | None = None
    """Replaces the policy's ``mode`` for this task type."""
    on_stop: OnStop | None = None
    """Replaces the policy's ``on_stop`` for this task type."""


class BudgetSettings(StrictConfig):
    """The budget numbers and reflection settings in force for one run (the policy's, with its task type's
    overrides applied)."""

    task_type: str | None = None
    base_budget: int = Field(ge=1)
    hard_cap: int = Field(ge=1)
    extension: int = Field(ge=0)
    earn_threshold: float = Field(ge=0, le=1)
    earn_per_iteration: int = Field(ge=0)
    max_reflections: int = Field(default=1, ge=0)
    stop_on_fruitless_retry: bool = True
    stop_on_repeated_evidence: bool = True

    @model_validator(mode="after")
    def _check(self) -> BudgetSettings:
        if self.base_budget > self.hard_cap:
            raise ValueError(
                f"base_budget {self.base_budget} exceeds hard_cap {self.hard_cap} "
                f"(task type {self.task_type!r}); lower base_budget or raise hard_cap"
            )
        return self


class PolicyConfig(StrictConfig):
    """The dynamic budget policy. See :mod:`pyguard.engine.policy` for the defaults and why."""

    base_budget: int = Field(default=8, ge=1)
    """Model calls a run may make before it has earned anything."""
    hard_cap: int = Field(default=150, ge=1)
    """The budget never exceeds this, however much the run earns."""
    earn_threshold: float = Field(default=0.2, ge=0, le=1)
    """An iteration with at least this gain (and no stall flag) earns budget."""
    earn_per_iteration: int = Field(default=2, ge=0)
    """Model calls earned by each productive iteration: with 2, a run stays within budget as long as about one
    iteration in three is productive (1 would keep the remaining budget level only while every call progresses)."""
    extension: int = Field(default=4, ge=0)
    """Model calls added when a reflection is injected (only then), capped by hard_cap."""
    max_reflections: int = Field(default=1, ge=0)
    """Reflections before a stall stops the run (0: the first stall stops it)."""
    stall_outcome: Literal["stalled", "escalated"] = "stalled"
    """Outcome of a run stopped by a stall: ``escalated`` hands it on (with the evidence) instead."""
    stop_on_fruitless_retry: bool = True
    """After a reflection, stop at once when the model's next actions only repeat actions already found fruitless."""
    stop_on_repeated_evidence: bool = True
    """After a reflection, stop in the next call when its results bring the reflected evidence again (the same rule,
    the same actions or tool) and the model, having read the reflection, asks for more of the same: the second
    signal is the first one repeated, so waiting for its result buys nothing."""
    mode: Mode = "enforce"
    """How the live guard acts on its decisions: ``observe``, ``reflect`` or ``enforce`` (see :data:`Mode`); a rollout
    goes observe -> ``pyguard replay``/``tune`` on the recorded traces -> enforce."""
    on_stop: OnStop = "answer"
    """What a live guard does when it stops a run (see :data:`OnStop`); ``Guard(on_stop=...)`` replaces it and the
    task types'."""
    budget_per_turn: bool = True
    """A conversation's budget, stall state and reflections are per turn (a user message after the model's
    answer opens a new turn), as LangChain4j's own cap is per ``chat()`` call; ``caps`` hold across the run."""
    stall: StallConfig = Field(default_factory=StallConfig)
    novelty: NoveltyConfig = Field(default_factory=NoveltyConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    caps: CapsConfig = Field(default_factory=CapsConfig)
    reflection: ReflectionConfig = Field(default_factory=ReflectionConfig)
    escalation: EscalationConfig = Field(default_factory=EscalationConfig)
    """Stop or escalate to a human, per rule (see :class:`EscalationConfig`); by default every stop stops."""
    task_types: dict[str, TaskTypeConfig] = Field(default_factory=dict)
    """Overrides by task type name."""
    stop: StopConfig | None = None
    """More stop conditions, OR-ed with the built-in ones (the stall rules, ``caps``, the hard cap and the budget):
    one condition of :mod:`pyguard.engine.stop_config` (``any``/``all`` nest), or from Python a composed condition
    (``ModelCallCap(60) | (TokenCap(200_000) & WallClockCap(300))``), kept as its config. A run's trace header
    records it, and replay rebuilds it from there."""

    @field_validator("stop", mode="before")
    @classmethod
    def _condition_to_config(cls, value: Any) -> Any:
        """A stop condition object given from Python is kept as its configuration (``condition.config()``)."""
        to_config = getattr(value, "config", None)
        if callable(to_config) and not isinstance(value, (dict, StrictConfig)):
            return to_config()
        return value

    @model_validator(mode="after")
    def _check_budgets(self) -> PolicyConfig:
        if self.base_budget > self.hard_cap:
            raise ValueError(
                f"base_budget {self.base_budget} exceeds hard_cap {self.hard_cap}; lower base_budget or raise hard_cap"
            )
        for name, over in self.task_types.items():
            base = over.base_budget if over.base_budget is not None else self.base_budget
            cap = over.hard_cap if over.hard_cap is not None else self.hard_cap
            if base > cap:
                raise ValueError(
                    f"task_types.{name}: base_budget {base} exceeds hard_cap {cap}; lower base_budget or raise hard_cap"
                )
        return self

    def escalation_for(self, task_type: str | None) -> EscalationConfig:
        """The escalation settings for ``task_type`` (its own table, else the policy's)."""
        over = self.task_types.get(task_type) if task_type is not None else None
        return over.escalation if over is not None and over.escalation is not None else self.escalation

    def mode_for(self, task_type: str | None) -> Mode:
        """The mode for ``task_type`` (its own ``mode``, else the policy's)."""
        over = self.task_types.get(task_type) if task_type is not None else None
        return over.mode if over is not None and over.mode is not None else self.mode

    def on_stop_for(self, task_type: str | None) -> OnStop:
        """What a stop does for ``task_type`` (its own ``on_stop``, else the policy's)."""
        over = self.task_types.get(task_type) if task_type is not None else None
        return over.on_stop if over is not None and over.on_stop is not None else self.on_stop

    def stall_for(self, task_type: str | None) -> StallConfig:
        """The stall settings for ``task_type`` (its own ``[task_types.X.stall]`` table, else the policy's)."""
        over = self.task_types.get(task_type) if task_type is not None else None
        return over.stall if over is not None and over.stall is not None else self.stall

    def budget_for(self, task_type: str | None) -> BudgetSettings:
        """The budget numbers for ``task_type`` (policy defaults where the task type sets nothing)."""
        over = self.task_types.get(task_type) if task_type is not None else None
        values: dict[str, Any] = {
            "task_type": task_type,
            "base_budget": self.base_budget,
            "hard_cap": self.hard_cap,
            "extension": self.extension,
            "earn_threshold": self.earn_threshold,
            "earn_per_iteration": self.earn_per_iteration,
            "max_reflections": self.max_reflections,
            "stop_on_fruitless_retry": self.stop_on_fruitless_retry,
            "stop_on_repeated_evidence": self.stop_on_repeated_evidence,
        }
        if over is not None:
            values.update(
                {
                    k: v
                    for k, v in over.model_dump().items()
                    if v is not None and k not in ("escalation", "stall", "mode", "on_stop")
                }
            )
        return BudgetSettings.model_validate(values)

    # ---- loading and saving -------------------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, source: str | None = None) -> PolicyConfig:
        """Build from a plain dict (e.g. a TOML table), skipping :data:`OTHER_SECTIONS`."""
        if not isinstance(data, dict):
            raise ConfigError(f"policy config{' in ' + source if source else ''} must be a table, got {data!r}")
        if isinstance(data.get("policy"), dict):
            data = data["policy"]
        table = {k: v for k, v in data.items() if k not in OTHER_SECTIONS}
        return cls._validate(table, source=source)

    @classmethod
    def from_toml(cls, path: str | Path) -> PolicyConfig:
        """Load a TOML file: the whole file, or its ``[tool.pyguard]`` table (pyproject.toml)
        (:func:`pyguard.config_search.read_policy_table`)."""
        data, source = read_policy_table(path)
        return cls.from_dict(data, source=source)

    @classmethod
    def from_file(cls, path: str | Path | None) -> PolicyConfig:
        """The policy in ``path`` (:meth:`from_toml`), or the defaults when there is none: the one "a named file, else
        the default policy"."""
        return cls() if path is None else cls.from_toml(path)

    @classmethod
    def discover(cls, start: str | Path | None = None) -> tuple[PolicyConfig, Path | None]:
        """The policy in the nearest ``pyguard.toml`` or ``pyproject.toml`` with ``[tool.pyguard]``, in ``start``
        (default: the current directory) or a parent up to the repository root, with that file's path; the defaults
        and None when there is none (:func:`pyguard.config_search.find_config_file`)."""
        path = find_config_file(start)
        return cls.from_file(path), path

    def to_toml(self) -> str:
        """This config as TOML text (``from_toml`` of it gives an equal config)."""
        import tomli_w

        return tomli_w.dumps(self.model_dump(mode="json", exclude_none=True))
