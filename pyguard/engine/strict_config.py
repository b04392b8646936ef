"""The base of every engine config model (:class:`StrictConfig`) and the one way a validation error becomes a
:class:`~pyguard.base.errors.ConfigError` naming each bad key and value (:func:`config_error`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from pyguard.base.errors import ConfigError, value_shown
from pyguard.base.limits import JAVA_INT_MAX

__all__: list[str] = []


def _items(exc: ValidationError, prefix: tuple = ()) -> list[tuple[str, Any, str]]:
    """(key, value, message) for every error, flattening errors raised by nested config models."""
    out: list[tuple[str, Any, str]] = []
    for err in exc.errors():
        loc = prefix + tuple(err.get("loc", ()))
        inner = (err.get("ctx") or {}).get("error")
        nested = getattr(inner, "items", None)
        if isinstance(inner, ConfigError) and isinstance(nested, list):
            for key, value, msg in nested:
                out.append(
                    (
                        ".".join(str(p) for p in loc + tuple(key.split("."))) if key else ".".join(map(str, loc)),
                        value,
                        msg,
                    )
                )
            continue
        msg = err.get("msg", "invalid")
        if err.get("type") == "extra_forbidden":
            msg = "unknown key; remove it or check its spelling"
        elif msg.startswith("Value error, "):
            msg = msg[len("Value error, ") :]
        out.append((".".join(str(p) for p in loc), err.get("input"), msg))
    return out


def config_error(exc: ValidationError, *, model: str, source: str | None = None) -> ConfigError:
    """Turn a pydantic ValidationError into a ConfigError naming every bad key and value."""
    items = _items(exc)
    lines = []
    for key, value, msg in items:
        lines.append(f"key {key or '<root>'!r} = {value_shown(value)}: {msg}" if key else f"{msg}")
    where = f" in {source}" if source else ""
    err = ConfigError(f"invalid {model}{where}: " + "; ".join(lines) + ". Fix the value(s) and retry.")
    err.items = items  # type: ignore[attr-defined]
    return err


def _check_bounds(value: Any) -> None:
    if isinstance(value, bool):
        return
    if isinstance(value, int) and not -JAVA_INT_MAX <= value <= JAVA_INT_MAX:
        raise ValueError(f"{value} is out of range: at most {JAVA_INT_MAX} (counts reach the Java bridge as an int)")
    if isinstance(value, dict):
        for v in value.values():
            _check_bounds(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _check_bounds(v)


class StrictConfig(BaseModel):
    """Base: frozen, extra keys forbidden, strict types (``"8"`` or ``true`` is not an integer), finite numbers,
    integers within a Java int, validation errors raised as ConfigError. Checked when the config is built or loaded,
    never later at run time."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    @field_validator("*", mode="after")
    @classmethod
    def _within_bounds(cls, value: Any) -> Any:
        _check_bounds(value)
        return value

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise config_error(exc, model=type(self).__name__) from None

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any):
        return cls._validate(obj, source=None, **kwargs)

    @classmethod
    def _validate(cls, obj: Any, *, source: str | None, **kwargs: Any):
        try:
            return BaseModel.model_validate.__func__(cls, obj, **kwargs)  # type: ignore[attr-defined]
        except ValidationError as exc:
            raise config_error(exc, model=cls.__name__, source=source) from None
