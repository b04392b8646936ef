"""What a stop of a live run returns (``on_stop``): the run's setting, and the stop message of ``on_stop="end"``."""

from __future__ import annotations

from typing import Any

from pyguard.engine.config import OnStop

__all__: list[str] = []

STOP_MESSAGE = "[pyguard] The run was stopped ({outcome}, rule {rule}): {reason}. Last tool result: {found}"
"""The default stop message of ``on_stop="end"``: ``{outcome}``, ``{rule}``, ``{reason}`` of the stop and ``{found}``,
the run's last tool result (cut to 2,000 characters; a note saying it is not shown with
``Guard(stop_message_content=False)``)."""


def on_stop_for(guard: Any, task_type: str | None) -> OnStop:
    """What a stop of a run of ``task_type`` does: the guard's explicit ``on_stop``, else the policy's
    (``PolicyConfig.on_stop_for``: its task type's, else the policy's own)."""
    chosen: OnStop = guard.on_stop if getattr(guard, "on_stop_set", True) else guard.config.on_stop_for(task_type)
    return chosen


def stop_message(guard: Any) -> str:
    """The guard's stop message template (:data:`STOP_MESSAGE` by default), ``{found}`` emptied without content."""
    template: str = getattr(guard, "stop_message", None) or STOP_MESSAGE
    if not getattr(guard, "stop_message_content", True):
        template = template.replace("{found}", "(not shown: stop_message_content=False)")
    return template
