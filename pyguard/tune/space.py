"""The search space of ``pyguard tune``: which policy parameters are searched, over which values.

Two kinds of parameter, searched differently (see :mod:`pyguard.tune.search` for why):

- **stall parameters** (``[stall]`` of the policy, shared; a task type may take another screened candidate as its
  own ``[task_types.X.stall]`` table and reflection settings, :func:`build_policy`): each value changes which iterations the engine flags, so each candidate costs one engine pass over
  the runs. They are screened one at a time around the starting policy (:func:`stall_candidates`).
- **budget parameters** (``base_budget``, ``hard_cap``, ``extension``, ``earn_threshold``, ``earn_per_iteration``;
  per task type, written as ``[task_types.X]``): they only decide *when the budget runs out* given the engine's
  per-iteration gains and flags, so they are evaluated exactly and cheaply from one pass
  (:mod:`pyguard.tune.simulate`).

Two top-level engine settings are screened the same way, only in the lenient direction: ``max_reflections`` never
below the start (a recording cannot show what a reflection would have changed: replay counts it as "continue",
so it would always favour stopping at the first stall), and ``stop_on_fruitless_retry`` off. They let a source
whose successful runs trip the stall rules (long multi-turn conversations) meet a tight bound.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from pyguard.base.errors import ConfigError
from pyguard.engine.config import PolicyConfig, StallConfig, TaskTypeConfig

__all__: list[str] = []

BUDGET_KEYS: tuple[str, ...] = ("base_budget", "hard_cap", "extension", "earn_threshold", "earn_per_iteration")
STALL_KEYS: tuple[str, ...] = (
    "low_gain_threshold",
    "low_gain_streak",
    "low_gain_streak_after_reflection",
    "error_storm_length",
    "polling_allowance",
    "max_fruitless_attempts",
    "nothing_new_window",
    "nothing_new_max_new",
)
ENGINE_KEYS: tuple[str, ...] = ("max_reflections", "stop_on_fruitless_retry")
"""Top-level policy settings screened with the stall settings (in the lenient direction only)."""
TOP_KEYS: tuple[str, ...] = (*ENGINE_KEYS, "stop_on_repeated_evidence")
"""Top-level policy settings a stall candidate may set: :data:`ENGINE_KEYS`, and ``stop_on_repeated_evidence``,
which only :func:`reflect_only` turns off (with the results judged early, a stall persisting after its reflection
stops however many reflections are left)."""


class Budget(BaseModel):
    """One point of the budget grid (a task type's budget numbers)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_budget: int = Field(ge=1)
    hard_cap: int = Field(ge=1)
    extension: int = Field(ge=0)
    earn_threshold: float = Field(ge=0, le=1)
    earn_per_iteration: int = Field(ge=0)

    @property
    def valid(self) -> bool:
        return self.base_budget <= self.hard_cap

    def as_tuple(self) -> tuple:
        return tuple(getattr(self, k) for k in BUDGET_KEYS)


class SearchSpace(BaseModel):
    """Values searched for each parameter. The starting policy's own value is always added to each list."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_budget: tuple[int, ...] = (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 25, 30, 40, 60)
    hard_cap: tuple[int, ...] = (6, 8, 10, 12, 15, 20, 25, 30, 40, 60, 80, 120, 200)
    extension: tuple[int, ...] = (0, 1, 2, 4, 6, 8)
    earn_threshold: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3, 0.5)
    earn_per_iteration: tuple[int, ...] = (0, 1, 2)
    low_gain_threshold: tuple[float, ...] = (0.05, 0.1, 0.15)
    low_gain_streak: tuple[int, ...] = (2, 3, 4, 6)
    low_gain_streak_after_reflection: tuple[int, ...] = (1, 2, 4)
    error_storm_length: tuple[int, ...] = (2, 3, 4)
    polling_allowance: tuple[int, ...] = (5, 10, 20)
    max_fruitless_attempts: tuple[int, ...] = (4, 6, 10)
    nothing_new_window: tuple[int, ...] = (20, 35, 50)
    nothing_new_max_new: tuple[int, ...] = (1, 2, 4)
    max_reflections: tuple[int, ...] = (1, 2, 4)
    stop_on_fruitless_retry: tuple[bool, ...] = (True, False)

    @model_validator(mode="after")
    def _check(self) -> SearchSpace:
        for key in BUDGET_KEYS + STALL_KEYS + ENGINE_KEYS:
            if not getattr(self, key):
                raise ValueError(f"search space {key!r} is empty; give at least one value")
        return self

    def values(self, key: str, start: Any) -> tuple:
        """The sorted values searched for ``key``, the starting value included."""
        return tuple(sorted(set(getattr(self, key)) | {start}))

    @classmethod
    def quick(cls) -> SearchSpace:
        """A smaller space for quick runs (tests, ``--quick``): fewer stall candidates, a coarser budget grid."""
        return cls(
            base_budget=(3, 4, 6, 8, 12, 20),
            hard_cap=(8, 12, 20, 40, 60),
            extension=(0, 2, 4),
            earn_threshold=(0.1, 0.2, 0.3),
            earn_per_iteration=(0, 1),
            low_gain_threshold=(0.1,),
            low_gain_streak=(2, 3, 4),
            low_gain_streak_after_reflection=(2,),
            error_storm_length=(3,),
            polling_allowance=(10,),
            max_fruitless_attempts=(6,),
            nothing_new_window=(35,),
            nothing_new_max_new=(2,),
            max_reflections=(1,),
            stop_on_fruitless_retry=(True,),
        )


def stall_key(overrides: dict[str, Any]) -> tuple:
    """A hashable, order-independent key of a set of stall overrides."""
    return tuple(sorted(overrides.items()))


def stall_candidates(base: PolicyConfig, space: SearchSpace) -> list[dict[str, Any]]:
    """The starting stall settings (``{}``) and every one-parameter change of them, in a fixed order; then the
    lenient changes of :data:`ENGINE_KEYS` (more reflections; no stop on a fruitless retry)."""
    out: list[dict[str, Any]] = [{}]
    for key in STALL_KEYS:
        start = getattr(base.stall, key)
        for value in space.values(key, start):
            if value != start and _valid_stall(base, key, value):
                out.append({key: value})
    for value in space.values("max_reflections", base.max_reflections):
        if value > base.max_reflections:
            out.append({"max_reflections": value})
    if base.stop_on_fruitless_retry and False in space.stop_on_fruitless_retry:
        out.append({"stop_on_fruitless_retry": False})
    return out


def _valid_stall(base: PolicyConfig, key: str, value: Any) -> bool:
    """Whether ``[stall]`` with ``key = value`` is a valid table (e.g. ``nothing_new_max_new`` below the start's
    ``nothing_new_window``): a candidate that is not is left out, not screened."""
    try:
        StallConfig.model_validate({**base.stall.model_dump(), key: value})
    except ConfigError:
        return False
    return True


def apply_engine(data: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """A dumped PolicyConfig with ``overrides`` applied: :data:`TOP_KEYS` at the top level, the rest to
    ``[stall]``."""
    top = {k: v for k, v in overrides.items() if k in TOP_KEYS}
    stall = {k: v for k, v in overrides.items() if k not in TOP_KEYS}
    return {**data, **top, "stall": {**data["stall"], **stall}}


def build_policy(
    base: PolicyConfig,
    stall: dict[str, Any],
    budgets: dict[str | None, Budget],
    type_stall: dict[str | None, dict[str, Any]] | None = None,
) -> PolicyConfig:
    """``base`` with the stall overrides and per-type budgets applied. The budget of type ``None`` (runs with no task
    type) goes to the top level; every other type to ``[task_types.X]``. ``type_stall[X]``: a task type's own stall
    overrides, where they differ from ``stall`` (both relative to ``base``): its ``[stall]`` keys become a whole
    ``[task_types.X.stall]`` table (``base``'s with them applied) and its :data:`TOP_KEYS` the type's own
    ``max_reflections``, ``stop_on_fruitless_retry`` and ``stop_on_repeated_evidence``, so its runs see exactly
    ``base`` with those overrides (what its probe pass saw). Type ``None`` has no table of its own: when it has its own overrides, they become the top
    level and every named type that has none of its own gets ``stall`` as its own table."""
    own_types = dict(type_stall or {})
    untyped = own_types.pop(None, None)
    if untyped is not None and stall_key(untyped) != stall_key(stall):
        for name in budgets:
            if name is not None:
                own_types.setdefault(name, stall)
        stall = untyped
    type_stall = own_types
    data = apply_engine(base.model_dump(), stall)
    types: dict[str, Any] = dict(data.get("task_types") or {})
    for name, budget in budgets.items():
        values = budget.model_dump()
        if name is None:
            data.update(values)
        else:
            types[name] = TaskTypeConfig(**values).model_dump()
    for name, own in (type_stall or {}).items():
        if name is None or stall_key(own) == stall_key(stall):
            continue
        applied = apply_engine(base.model_dump(), own)
        entry = dict(types.get(name) or {})
        entry.update({k: applied[k] for k in TOP_KEYS}, stall=applied["stall"])
        types[name] = entry
    data["task_types"] = types
    try:
        return PolicyConfig.model_validate(data)
    except ConfigError as exc:  # a search bug, not the user's input
        raise ConfigError(f"tune built an invalid policy: {exc}") from None


def budget_of(config: PolicyConfig, task_type: str | None) -> Budget:
    """The budget numbers ``config`` gives ``task_type``."""
    s = config.budget_for(task_type)
    return Budget(**{k: getattr(s, k) for k in BUDGET_KEYS})


def reflect_only(cap: int) -> dict[str, Any]:
    """The stall overrides of a reflect-only policy for a hard cap of ``cap`` model calls per turn: every stall is
    reflected on and none stops the run (more reflections allowed than the turn has model calls, no stop on a
    fruitless retry nor on a reflected stall found again). With a budget whose ``base_budget`` is the hard cap, only
    the hard caps stop the run."""
    return {"max_reflections": cap, "stop_on_fruitless_retry": False, "stop_on_repeated_evidence": False}
