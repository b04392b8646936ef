"""An agent's options, in one type: what pyguard builds and runs an agent with (its tools, its run, its own caps).

::

    from pyguard import AgentOptions, Guard

    options = AgentOptions(tools="logistics", max_tool_calling_round_trips=12, task_type="lookup")
    guard.run("aiservices", model, task, options=options)       # the object
    guard.run("aiservices", model, task, tools="logistics")     # or the same options as keywords, as before
    guard.run("aiservices", model, task, options=options, run_id="r2")   # both: the keyword wins

Every function that takes an agent's options (``Guard.run``, ``Guard.run_streaming``, ``Guard.agent``,
``Guard.attach``, ``Guard.resume``, :func:`pyguard.live.guard.run_unguarded`, :func:`pyguard.jvm.build_agent`,
:func:`pyguard.jvm.run_agent`, :func:`pyguard.live.nested.run_nested`, :func:`pyguard.live.nested.run_nested_unguarded`) settles
them here, once (:func:`agent_options`): an ``options`` object and keywords combine, a keyword winning over the
object's field (a keyword given as None is not set); an unknown keyword, or one the function does not use, is a
:class:`~pyguard.base.errors.ConfigError` naming it, and so is a bad value; the deprecated keywords (``max_iterations``,
``round_trips``) still work, with a ``DeprecationWarning``. The functions below them (the conversation, the escalation
handle's :class:`~pyguard.escalation.AgentRef`, the JVM builders) take the settled object. Every default is
:mod:`pyguard.base.limits`'.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Mapping
from typing import Any, TypedDict

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from pyguard.base.errors import ConfigError, did_you_mean, value_shown
from pyguard.base.limits import DEFAULT_LOOP_ITERATIONS, JAVA_INT_MAX, LANGCHAIN4J_ROUND_TRIPS

__all__: list[str] = []


class AgentOptions(BaseModel):
    """How an agent is built and run (frozen, strict, unknown fields refused, round-trips through ``model_dump``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, arbitrary_types_allowed=True)

    tools: Any = None
    """The agent's tools: anything :func:`pyguard.jvm.tool_set` takes (``"logistics"``, ``"hazards"``, a Java
    ``ToolSet``, Java ``@Tool`` objects or a list of them, a local server); None: a scripted model's own scenario
    tools, else none."""
    task_type: str | None = None
    """The run's task type: the policy's ``[task_types.<name>]`` applies to it, and its trace records it."""
    run_id: str | None = None
    """The run's id (its trace is ``<run_id>.jsonl``); None: a new one."""
    max_loop_iterations: int | None = None
    """The agent loop's own cap: the agentic loop's iterations, the explicit executor's model calls, a nested loop
    workflow's iterations. None: the default of the agent it is used with (:meth:`loop_iterations`:
    :data:`pyguard.base.limits.DEFAULT_LOOP_ITERATIONS`, a nested loop's :data:`pyguard.base.limits.NESTED_LOOP_ITERATIONS`).
    It was ``max_iterations``, which now means only the pytest marker's cap on model calls."""
    max_tool_calling_round_trips: int | None = None
    """LangChain4j AiServices' own cap on tool-calling round trips per ``chat()`` (``maxToolCallingRoundTrips``; also
    the agentic loop's and a nested system's sub-agents'). None: the default of the agent it is used with
    (:meth:`round_trips`): LangChain4j's own for pyguard's agents, :data:`pyguard.base.limits.NESTED_ROUND_TRIPS` for a
    nested system's sub-agents, unknown to ``Guard.attach`` (your agent's cap is yours)."""
    exit_when_answer_contains: str | None = None
    """The agentic style only: None exits the loop on the first answer, ``""`` never early, any other text when an
    answer contains it."""
    system_message: str | None = None
    """The agent's system message (pyguard's agent styles); None: none."""

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _config_error(exc) from None

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> AgentOptions:
        try:
            return super().model_validate(obj, **kwargs)
        except ValidationError as exc:
            raise _config_error(exc) from None

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, **kwargs: Any) -> AgentOptions:
        try:
            return super().model_validate_json(json_data, **kwargs)
        except ValidationError as exc:
            raise _config_error(exc) from None

    @field_validator("max_loop_iterations", mode="before")
    @classmethod
    def _loop_cap(cls, value: Any) -> Any:
        return None if value is None else _positive(value)

    @field_validator("max_tool_calling_round_trips", mode="before")
    @classmethod
    def _round_trips(cls, value: Any) -> Any:
        return None if value is None else _positive(value)

    def loop_iterations(self, default: int = DEFAULT_LOOP_ITERATIONS) -> int:
        """:attr:`max_loop_iterations`, or ``default`` (the agent's) when it is None."""
        return default if self.max_loop_iterations is None else self.max_loop_iterations

    def round_trips(self, default: int = LANGCHAIN4J_ROUND_TRIPS) -> int:
        """:attr:`max_tool_calling_round_trips`, or ``default`` (the agent's) when it is None."""
        return default if self.max_tool_calling_round_trips is None else self.max_tool_calling_round_trips


class AgentKeywords(TypedDict, total=False):
    """:class:`AgentOptions`' fields as keywords (``**keywords: Unpack[AgentKeywords]``), and the deprecated names."""

    tools: Any
    task_type: str | None
    run_id: str | None
    max_loop_iterations: int | None
    max_tool_calling_round_trips: int | None
    exit_when_answer_contains: str | None
    system_message: str | None
    max_iterations: int | None
    """Deprecated: ``max_loop_iterations``."""
    round_trips: int | None
    """Deprecated: ``max_tool_calling_round_trips`` (``Guard.attach``'s old keyword)."""


OPTIONS: tuple[str, ...] = tuple(AgentOptions.model_fields)
"""Every agent option's name, in declaration order."""

DEPRECATED: dict[str, tuple[str, str]] = {
    "max_iterations": (
        "max_loop_iterations",
        "(the agent loop's own cap); max_iterations means the pytest marker's cap on model calls per run",
    ),
    "round_trips": ("max_tool_calling_round_trips", "(one name for the agent's own cap on tool-calling round trips)"),
}
"""Each deprecated keyword: the option it is the old name of, and why the name changed."""


def agent_options(
    where: str,
    options: AgentOptions | None,
    keywords: Mapping[str, Any],
    *,
    uses: Collection[str] = OPTIONS,
) -> AgentOptions:
    """The agent options of one call to ``where``: ``options`` (None: the defaults) with ``keywords`` on top (a
    keyword wins over the object's field; a keyword given as None is not set: None is every option's default, so a
    wrapper may pass its own None defaults on). ``uses``: the options ``where`` reads; a keyword outside them is
    refused (the object's other fields are kept and not used). A deprecated keyword is renamed here, with a
    ``DeprecationWarning`` pointing at the caller of ``where``.

    Raises :class:`ConfigError` naming the offender: ``options`` not an :class:`AgentOptions`, an unknown keyword,
    one ``where`` does not use, an old and a new name both given, a bad value."""
    if options is not None and not isinstance(options, AgentOptions):
        raise ConfigError(
            f"{where}: options={options!r:.80} must be a pyguard.AgentOptions (or give the options as keywords)"
        )
    for name in keywords:
        if name not in OPTIONS and name not in DEPRECATED:
            raise ConfigError(
                f"{where}: unknown option {name!r}{_did_you_mean(name)}; the agent options are {_listed()}"
            )
    given = {name: value for name, value in keywords.items() if value is not None}  # None: not set here
    for old, (new, why) in DEPRECATED.items():
        if old not in given:
            continue
        if new in given:
            raise ConfigError(f"{where}: give {new} only ({old} is its old name)")
        warnings.warn(f"{where}({old}=...) is now {new}=... {why}", DeprecationWarning, stacklevel=3)
        given[new] = given.pop(old)
    for name in given:
        if name not in uses:
            raise ConfigError(
                f"{where}: the option {name!r} does not apply here; {where} uses {', '.join(uses) or 'none'}"
            )
    if not given:
        return options if options is not None else _DEFAULT
    base = {} if options is None else {name: getattr(options, name) for name in OPTIONS}
    try:
        return AgentOptions(**{**base, **given})
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _positive(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= JAVA_INT_MAX:
        raise ValueError(f"must be a positive integer (at most {JAVA_INT_MAX}, a Java int)")
    return value


def _config_error(exc: ValidationError) -> ConfigError:
    """One ConfigError naming every bad option and value, and what to do."""
    parts = []
    for err in exc.errors():
        name = ".".join(str(p) for p in err.get("loc", ())) or "<root>"
        if err.get("type") == "extra_forbidden":
            parts.append(f"unknown option {name!r}{_did_you_mean(name)}; the agent options are {_listed()}")
            continue
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        if err.get("type") == "string_type":
            msg = "must be a string (or None)"
        parts.append(f"{name}={value_shown(err.get('input'))} {msg}")
    return ConfigError("invalid agent options: " + "; ".join(parts))


def _did_you_mean(name: str) -> str:
    return did_you_mean(name, [*OPTIONS, *DEPRECATED])


def _listed() -> str:
    return ", ".join(OPTIONS) + " (pyguard.AgentOptions)"


_DEFAULT = AgentOptions()
