"""What a stop of a live run returns (``on_stop``): the run's setting, the stop message of ``on_stop="end"``, how a
run's guarded model is told (:func:`set_up_stops`) and the wrap-up's instruction (:data:`WRAP_UP`). Raising a stop
under ``on_stop="raise"`` is :func:`pyguard.jvm.ending.raise_if_stopped` (it reads a Java exception)."""

from __future__ import annotations

from typing import Any

from pyguard.engine.config import OnStop

__all__: list[str] = []

WRAP_UP = (
    "Stop here: {reason}. Do not call any tool. Give your best final answer to the user's request now, from what you"
    " have found so far, and say plainly what you could not find out."
)
"""The wrap-up instruction (``{reason}``: why the run was stopped), sent as a user message with no tools offered."""

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


def set_up_stops(run: Any, guarded: Any) -> None:
    """Tell ``run``'s guarded model (:class:`pyguard.jvm.GuardedModel`) what a stop does: ``end``, the stop message
    with no model call; ``answer``, the wrap-up; ``raise``, the exception; and the agent's own cap
    (``run.agent_round_trips``, when known) ends the turn as such a stop too. In observe mode nothing: observe never
    acts (no wrap-up, no stop message, the agent's own cap ends the turn its own way)."""
    if run.mode == "observe":
        return
    if run.on_stop == "end":
        guarded.end_on_stop(stop_message(run.guard), run.agent_round_trips)
    else:
        guarded.answer_on_stop(WRAP_UP if run.on_stop == "answer" else None, run.agent_round_trips)
