"""The :class:`pyguard.live.guard.Guard`'s own settings, checked: the fail-safe, the callback deadline, trace permissions,
``on_stop`` and its message, and the rollout ``mode`` merged with the policy's.

How ``Guard(mode=...)`` meets the policy file's modes (:func:`with_mode`): it replaces the file's top-level ``mode``;
a task type whose own ``mode`` says the same is kept; a task type whose own ``mode`` says otherwise is refused
(:class:`pyguard.base.errors.ConfigError` naming it). A mode given in code is a rollout switch ("observe everything"):
letting a task type keep ``enforce`` would act where the caller said observe, and silently replacing the file's
per-type mode would hide what the file says. Remove ``mode`` from those task types, or leave ``Guard(mode=...)``
out and let the file decide.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyguard.base.agent_options import OPTIONS
from pyguard.base.errors import ConfigError
from pyguard.base.limits import JAVA_INT_MAX
from pyguard.engine import PolicyConfig

if TYPE_CHECKING:  # pragma: no cover
    from pyguard.engine.config import Mode

__all__: list[str] = []

MODES = ("observe", "reflect", "enforce")

ATTACH_OPTIONS = ("task_type", "max_tool_calling_round_trips")
"""The agent options :meth:`Guard.attach` uses (your agent is built by you: its tools and loop are yours)."""

AGENT_OPTIONS = tuple(name for name in OPTIONS if name != "run_id")
"""The agent options :meth:`Guard.agent` uses: all but the run id (each ``chat()`` is a run with an id of its own)."""


def with_mode(config: PolicyConfig, mode: Mode) -> PolicyConfig:
    """``config`` with ``mode`` for every run: its top-level mode replaced; a task type whose own ``mode`` differs is
    refused (see the module docstring for why)."""
    if mode not in MODES:
        raise ConfigError(f"mode={mode!r} must be 'observe', 'reflect' or 'enforce'")
    clashes = sorted(
        f"[task_types.{name}] mode = {t.mode!r}"
        for name, t in config.task_types.items()
        if t.mode is not None and t.mode != mode
    )
    if clashes:
        raise ConfigError(
            f"Guard(mode={mode!r}) conflicts with the policy's {', '.join(clashes)}: a mode given to the Guard is for"
            " every run. Remove `mode` from those task types (or set it to the same), or leave Guard(mode=...) out"
            " so that the policy file decides per task type"
        )
    return PolicyConfig.model_validate({**config.model_dump(), "mode": mode})


def check_guard_settings(
    *,
    fail_safe_calls: object,
    callback_timeout_ms: object,
    trace_file_mode: object,
    on_stop: object,
    stop_message: object,
) -> None:
    """Raise :class:`ConfigError` naming the first bad value of a Guard's settings, and what it must be."""
    if not is_int(fail_safe_calls) or not 1 <= fail_safe_calls <= JAVA_INT_MAX:  # type: ignore[operator]
        raise ConfigError(
            f"fail_safe_calls={fail_safe_calls!r} must be an integer from 1 to {JAVA_INT_MAX} (the Java fail-safe"
            " cap on model calls per user turn)"
        )
    if not is_int(callback_timeout_ms) or not 0 <= callback_timeout_ms <= 86_400_000:  # type: ignore[operator]
        raise ConfigError(
            f"callback_timeout_ms={callback_timeout_ms!r} must be 0 (no deadline) or a number of milliseconds up to"
            " 86400000 (a day)"
        )
    if not is_int(trace_file_mode) or not 0 <= trace_file_mode <= 0o777:  # type: ignore[operator]
        raise ConfigError(f"trace_file_mode={trace_file_mode!r} must be permission bits such as 0o600")
    if on_stop not in (None, "answer", "raise", "end"):
        raise ConfigError(
            f"on_stop={on_stop!r} must be 'answer' (a last model call with no tools), 'raise' (the Java exception),"
            " 'end' (the stop message, no model call) or None (the policy's)"
        )
    if stop_message is not None and (not isinstance(stop_message, str) or not stop_message.strip()):
        raise ConfigError(
            f"stop_message={stop_message!r} must be a non-empty text (placeholders: {{outcome}},"
            " {rule}, {reason}, {found}) or None for pyguard.live.run.STOP_MESSAGE"
        )


def is_int(value: object) -> bool:
    """True for an int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)
