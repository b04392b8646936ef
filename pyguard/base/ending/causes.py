"""What a writer of a footer knows about how a run ended, declared once: :class:`Causes`.

:func:`pyguard.base.ending.finish_arguments` reads an agent's ending as causes; :func:`pyguard.base.ending.settle` orders them
into the one outcome; :func:`pyguard.base.ending.end_from_events`, the engine's ``RunSession.finish`` and the guarded run
take them. The engine's own STOP is not a cause: it is the engine's decision, and ``settle`` takes it beside them.

``RunSession.finish`` (public) still takes the causes as keywords, ``session.finish(answer="done")``: they are read
into a :class:`Causes` here, by :meth:`Causes.of`, the one place keywords become causes (an unknown cause or a bad
value is a :class:`~pyguard.base.errors.ConfigError` naming it).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from pyguard.base.errors import ConfigError, did_you_mean, value_shown

__all__: list[str] = []


class Causes(BaseModel):
    """How a run ended, as its writer knows it (frozen, strict, unknown causes refused, round-trips through
    ``model_dump``). Every cause is optional and has one name; :func:`pyguard.base.ending.settle` says which one wins.

    Deprecated names, still read with a :class:`DeprecationWarning` (:data:`DEPRECATED`): ``error`` (now ``failed``,
    the reason "the run failed: {error}"), ``guard_failed`` (now ``engine_gave_up``), ``answered`` and ``succeeded``
    (now ``ended``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    answer: str | None = None
    """The run's answer; beside another outcome, the last text the model wrote (a salvaged answer)."""
    failed: str | None = None
    """The run failed: why, the reason as given ("the run failed: ..." for an exception, "recorded as failed" for a
    recording labelled so). An exception is read as "the run failed: {its text}"."""
    verified: bool | None = None
    """A verifier's judgement of the answer (None: no verifier was asked)."""
    cancelled: bool = False
    """The run was cancelled."""
    guard_error: str | None = None
    """The guard itself failed: how (a guard callback failing, a stop without an outcome). An exception is read as
    its text."""
    expired: str | None = None
    """A cap outside the engine ran out: which, as the reason (the agent's own loop cap, the Java fail-safe, a recording
    cut off)."""
    engine_gave_up: str | None = None
    """The engine gave up on the run (its decision missed the deadline): why. Noted on every reason but a stop's."""
    ended: str | None = None
    """The run ended on its own: the reason of its success, as given (default, when an ``answer`` is given: "the
    model answered")."""

    @model_validator(mode="before")
    @classmethod
    def _deprecated_names(cls, data: Any) -> Any:
        if not isinstance(data, Mapping) or not DEPRECATED.keys() & data.keys():
            return data
        return _renamed(dict(data))

    @field_validator("failed", mode="before")
    @classmethod
    def _failure_of_exception(cls, value: Any) -> Any:
        return f"the run failed: {value}" if isinstance(value, BaseException) else value

    @field_validator("guard_error", mode="before")
    @classmethod
    def _text_of_exception(cls, value: Any) -> Any:
        return str(value) if isinstance(value, BaseException) else value

    @classmethod
    def of(cls, where: str, causes: Causes | None, keywords: Mapping[str, Any]) -> Causes:
        """The causes of one call to ``where``: ``causes`` (None: none) with ``keywords`` on top (a keyword wins over
        the object's field). Raises :class:`ConfigError` naming ``where`` and each unknown cause or bad value."""
        if causes is not None and not isinstance(causes, Causes):
            raise ConfigError(
                f"{where}: {causes!r:.80} is not a pyguard.base.ending.Causes (or give the causes as keywords)"
            )
        if not keywords:
            return causes if causes is not None else _NONE
        base = {} if causes is None else causes.model_dump()
        try:
            return cls.model_validate({**base, **keywords})
        except ValidationError as exc:
            raise ConfigError(f"{where}: " + "; ".join(_refusal(err) for err in exc.errors())) from None


def _refusal(err: Any) -> str:
    """One refused cause, said: its name and value, what is wrong, what to do."""
    name = ".".join(str(p) for p in err.get("loc", ()))
    if err.get("type") == "extra_forbidden":
        hint = did_you_mean(name, Causes.model_fields)
        return f"unknown cause {name!r}{hint}; the causes are {', '.join(Causes.model_fields)} (pyguard.base.ending.Causes)"
    return f"{name}={value_shown(err.get('input'))} is refused: {str(err.get('msg')).lower()}"


DEPRECATED = {
    "error": "failed (its reason: 'the run failed: {error}')",
    "guard_failed": "engine_gave_up",
    "answered": "ended (the reason of the run's success; an answer alone says it ended on its own)",
    "succeeded": "ended",
}
"""The old names of causes, read with a DeprecationWarning, and what to say instead."""


def _renamed(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the deprecated names of causes in their new ones (a warning names each)."""
    for old in DEPRECATED.keys() & data.keys():
        warnings.warn(
            f"pyguard.base.ending.Causes: the cause {old!r} is deprecated, say {DEPRECATED[old]}",
            DeprecationWarning,
            stacklevel=6,
        )
    error = data.pop("error", None)
    if error is not None and data.get("failed") is None:
        data["failed"] = f"the run failed: {error}"
    late = data.pop("guard_failed", None)
    if late is not None and data.get("engine_gave_up") is None:
        data["engine_gave_up"] = late
    answered, succeeded = data.pop("answered", None), data.pop("succeeded", None)
    if answered is False and data.get("failed") is None:
        data["failed"] = "the run ended without an answer"
    elif (answered or succeeded is not None) and data.get("ended") is None:
        data["ended"] = succeeded or "the model answered"
    return data


_NONE = Causes()
