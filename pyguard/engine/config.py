"""Configuration of the dynamic budget engine: pydantic models, TOML and pyproject loading.

Every model is frozen, forbids unknown keys and round-trips (``M.model_validate(m.model_dump()) == m``).
Invalid values raise :class:`pyguard.base.errors.ConfigError` naming the key, the value and what is expected,
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

import warnings
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from pyguard.base.config_search import find_config_file, read_policy_table
from pyguard.base.errors import ConfigError
from pyguard.engine.config_tables import (
    CapsConfig,
    EscalationConfig,
    NoveltyConfig,
    Price,
    ReflectionConfig,
    StallConfig,
    ToolLimitConfig,
    ToolsConfig,
)
from pyguard.engine.conversation_limits import ConversationLimits
from pyguard.engine.stop_config import StopConfig
from pyguard.engine.strict_config import StrictConfig

__all__ = [
    "ToolsConfig",
    "ToolLimitConfig",
    "Price",
    "CapsConfig",
    "NoveltyConfig",
    "StallConfig",
    "ReflectionConfig",
    "EscalationConfig",
]

OTHER_SECTIONS: frozenset[str] = frozenset(
    {"check", "calibrate", "replay", "demo", "jvm", "trace", "guard", "testing", "pytest", "bench"}
)
"""Sub-tables of ``[tool.pyguard]`` owned by other components; the policy loader skips them."""


def _get(table: Any, key: str) -> Any:
    return table.get(key) if isinstance(table, dict) else getattr(table, key, None)


def _with(table: Any, **update: Any) -> Any:
    return {**table, **update} if isinstance(table, dict) else table.model_copy(update=update)


def _on_stall_escalates(escalation: Any) -> Any:
    """An escalation table (a dict, a model or None) with ``on_stall = "escalate"``."""
    if escalation is None:
        return {"on_stall": "escalate"}
    if isinstance(escalation, EscalationConfig):
        return escalation.model_copy(update={"on_stall": "escalate"})
    return _with(escalation, on_stall="escalate")


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
    judge_results_early: bool = True
    """Judge each call's tool results before the next call is sent (``RunSession.observe_results``; live, in the
    guarded model's request path; replay, from the next recorded request): a stop then replaces that call instead of
    following it, a reflection answers one stall (:mod:`pyguard.engine.answered`) and a run whose shape says states
    are revisited is reflected on only (:mod:`pyguard.engine.run_shape`). An escalation decided so keeps the results
    it was judged on in its handle (``EscalationHandle.results``), so ``Guard.resume`` rebuilds it, and ``pyguard
    tune``'s budget simulation models the same moment. False: each call's results are judged with the next call's
    event, one call later, and a stall after ``max_reflections`` reflections stops (the engine before issue 30)."""
    budget_per_turn: bool = True
    """A conversation's budget, stall state and reflections are per turn (a user message after the model's
    answer opens a new turn), as LangChain4j's own cap is per ``chat()`` call; ``caps`` hold across the run."""
    stall: StallConfig = Field(default_factory=StallConfig)
    novelty: NoveltyConfig = Field(default_factory=NoveltyConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    caps: CapsConfig = Field(default_factory=CapsConfig)
    conversation: ConversationLimits = Field(default_factory=ConversationLimits)
    """Budgets across every turn of one conversation of an attached agent (``[conversation]``; see
    :mod:`pyguard.engine.conversation_limits`): none by default."""
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

    @model_validator(mode="before")
    @classmethod
    def _stall_outcome(cls, data: Any) -> Any:
        """``stall_outcome``, deprecated: ``"escalated"`` is ``[escalation] on_stall = "escalate"`` (and in each task
        type's own escalation table), ``"stalled"`` the default; read so, with a DeprecationWarning."""
        if not isinstance(data, dict) or "stall_outcome" not in data:
            return data
        data = dict(data)
        value = data.pop("stall_outcome")
        if value not in ("stalled", "escalated"):
            raise ValueError(f"'stall_outcome' {value!r} is not 'stalled' or 'escalated'; write [escalation] on_stall")
        warnings.warn(
            'stall_outcome is deprecated: write [escalation] on_stall = "escalate" (or "stop")',
            DeprecationWarning,
            stacklevel=2,
        )
        if value == "escalated":
            data["escalation"] = _on_stall_escalates(data.get("escalation"))
            data["task_types"] = {
                name: over
                if _get(over, "escalation") is None
                else _with(over, escalation=_on_stall_escalates(_get(over, "escalation")))
                for name, over in (data.get("task_types") or {}).items()
            }
        return data

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
        (:func:`pyguard.base.config_search.read_policy_table`)."""
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
        and None when there is none (:func:`pyguard.base.config_search.find_config_file`)."""
        path = find_config_file(start)
        return cls.from_file(path), path

    def to_toml(self) -> str:
        """This config as TOML text (``from_toml`` of it gives an equal config)."""
        import tomli_w

        return tomli_w.dumps(self.model_dump(mode="json", exclude_none=True))
