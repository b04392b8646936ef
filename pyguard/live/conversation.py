"""Guarded AiServices runs whose conversation pyguard keeps: streaming or blocking, escalated and resumed.

:meth:`pyguard.live.guard.Guard.run_streaming` and :meth:`pyguard.live.guard.Guard.resume` are built here. A run of pyguard's
AiServices agent (blocking or streaming) that the policy escalates returns a :class:`~pyguard.result.RunResult` with
an :class:`~pyguard.escalation.EscalationHandle`; :func:`resume_run` goes on from it with a human's message as the
next user turn, in this process or another one (the handle is JSON).

How a resumption rebuilds the guard's state: a new engine session replays the handle's events (and the earlier
resumptions) under the resuming guard's policy, which must escalate where the handle says, then
:meth:`pyguard.engine.RunSession.resume` lifts the stop and grants the policy's ``resume_budget``. The resumed run
gets its own run id (``<origin>-r<n>``) and trace, holding the whole run: the earlier iterations and decisions (the
escalation among them), the ``resume`` decision, then the new iterations, the first with the human's message as a
user observation.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from pyguard.base.agent_options import AgentOptions
from pyguard.base.decisions import Decision
from pyguard.base.errors import HandleError
from pyguard.base.events import IterationEvent, Observation, Outcome
from pyguard.escalation import AgentRef, EscalationHandle, ResumePoint
from pyguard.jvm import run_built
from pyguard.jvm.streaming import conversation_agent, is_streaming_model
from pyguard.live.resumption import rebuild
from pyguard.live.run import GuardedRun, RunHost
from pyguard.result import RunResult
from pyguard.trace.writer import trace_file_name

if TYPE_CHECKING:  # pragma: no cover
    from pyguard.engine import RunSession

__all__: list[str] = []


class ConversationHost(RunHost, Protocol):
    """What a kept conversation needs of its guard (:class:`pyguard.live.guard.Guard` is one): a run host that opens runs.
    Typed here, so this module, which the guard imports, imports nothing of the guard."""

    def start_run(
        self,
        *,
        task: str | None = None,
        task_type: str | None = None,
        run_id: str | None = None,
        agent_style: str | None = None,
    ) -> GuardedRun: ...


PartialFn = Callable[[str], None]

_resumed: set[str] = set()
"""Digests of the handles resumed in this process: a handle resumes once."""
_resumed_lock = threading.Lock()


STREAMING_OPTIONS = ("tools", "task_type", "run_id", "max_tool_calling_round_trips", "system_message")
"""The agent options a kept conversation uses (pyguard's AiServices agent: no loop of its own beyond the round
trips)."""


def run_chat(
    run: GuardedRun,
    model: Any,
    task: str | Sequence[str],
    options: AgentOptions,
    *,
    on_partial: PartialFn | None = None,
    agent: str | None = None,
) -> RunResult:
    """Run ``task`` in ``run`` (started by its guard, :meth:`pyguard.live.guard.Guard.start_run`) on pyguard's
    AiServices agent around ``model`` (a ``ChatModel``, or a ``StreamingChatModel``: then the agent's method returns a
    ``TokenStream``, and ``on_partial`` gets each text chunk) with ``options`` (its :data:`STREAMING_OPTIONS`). Never
    raises for the run itself. An escalated run's result carries its :class:`EscalationHandle`; ``agent`` names the
    agent in it."""
    ref = AgentRef(streaming=_streams(model), name=agent, options=options)
    return _run(run, model, task, ref, options, on_partial=on_partial, memory_json=None, chain=None)


def resume_run(
    guard: ConversationHost,
    handle: EscalationHandle | str,
    message: str,
    model: Any,
    *,
    tools: Any = None,
    on_partial: PartialFn | None = None,
    agent: str | None = None,
) -> RunResult:
    """Resume an escalated run: ``message`` (the human's answer) is the next user turn of the same agent (its
    conversation from the handle), rebuilt around ``model`` and ``tools`` (give the ones the run had), with the
    resume budget of ``guard``'s policy. ``handle`` may be the JSON text. :class:`HandleError` when the handle cannot
    be resumed (malformed, another version, edited, another agent, already resumed, or this guard's policy does not
    escalate the run where the handle says)."""
    if isinstance(handle, (str, bytes)):
        handle = EscalationHandle.from_json(handle)
    elif isinstance(handle, EscalationHandle):
        handle = handle.check()
    else:
        raise HandleError(f"handle must be an EscalationHandle or its JSON text, not {type(handle).__name__}")
    if not isinstance(message, str) or not message.strip():
        raise HandleError(f"the human's message must be a non-empty string, got {message!r:.80}")
    if agent is not None and handle.agent.name is not None and agent != handle.agent.name:
        raise HandleError(
            f"the handle of run {handle.run_id!r} is for agent {handle.agent.name!r}, not {agent!r}: resume it with "
            "the agent that escalated"
        )
    new_id = handle.next_run_id
    with _resumed_lock:
        if handle.digest in _resumed:
            raise HandleError(
                f"the handle of run {handle.run_id!r} was already resumed in this process (as run {new_id!r}); "
                "resume from the handle of that run's latest escalation instead"
            )
    if guard.trace_dir is not None:
        done = guard.trace_dir / trace_file_name(new_id)
        if done.exists():
            raise HandleError(
                f"the handle of run {handle.run_id!r} was already resumed: the resumed run's trace {str(done)!r} "
                "exists; resume from the handle of that run's latest escalation instead"
            )
    budget = guard.config.escalation_for(handle.task_type).resume_budget
    events, decisions, session = _replay(guard, handle, new_id)
    reason = f"resumed after escalation: a human answered ({len(message)} characters); {budget} model calls granted"
    decisions.append(session.resume(budget, reason=reason))
    with _resumed_lock:
        if handle.digest in _resumed:
            raise HandleError(f"the handle of run {handle.run_id!r} was already resumed in this process")
        _resumed.add(handle.digest)
    run = _ResumedRun(guard, handle, new_id, session, events, decisions)
    ref = handle.agent.model_copy(update={"streaming": _streams(model)})
    options = ref.options.model_copy(update={"tools": tools})  # the handle keeps no tools: these are given again
    point = ResumePoint(after=len(handle.events), budget=budget, message=message, results=handle.results)
    chain = (handle, point)
    return _run(run, model, message, ref, options, on_partial=on_partial, memory_json=handle.conversation, chain=chain)


def _streams(model: Any) -> bool:
    return is_streaming_model(model)


def _run(
    run: GuardedRun,
    model: Any,
    task: str | Sequence[str],
    ref: AgentRef,
    options: AgentOptions,
    *,
    on_partial: PartialFn | None,
    memory_json: str | None,
    chain: tuple[EscalationHandle, ResumePoint] | None,
) -> RunResult:
    run.agent_round_trips = options.round_trips()  # its end gets the wrap-up too (on_stop="answer")
    built: list[Any] = []

    def build() -> Any:
        guarded = run.guarded_streaming_model(model) if ref.streaming else run.guarded_model(model)
        built.append(conversation_agent(guarded, options, memory_json=memory_json, on_partial=on_partial))
        return built[0]

    result = run.drive(lambda agent: run_built(agent, task, run.guarded), build=build)
    [agent] = built
    stop = run.session.stopped
    if result.outcome is not Outcome.ESCALATED or stop is None or stop.outcome is not Outcome.ESCALATED:
        return result
    previous, point = chain if chain is not None else (None, None)
    handle = EscalationHandle(
        run_id=run.run_id,
        origin_run_id=previous.origin_run_id if previous is not None else run.run_id,
        resumptions=previous.resumptions + 1 if previous is not None else 0,
        task=run.start.task,
        task_type=run.task_type,
        agent=ref,
        escalation=stop,
        resume_budget=run.guard.config.escalation_for(run.task_type).resume_budget,
        events=tuple(result.record.events),
        results=run.session.results_judged(stop.iteration or 0),
        resumes=(*previous.resumes, point) if previous is not None and point is not None else (),
        conversation=str(agent.memoryJson()),
    ).sealed()
    return result.model_copy(update={"escalation": handle})


def _replay(
    guard: ConversationHost, handle: EscalationHandle, run_id: str
) -> tuple[list[IterationEvent], list[Decision], RunSession]:
    """A session of ``guard``'s policy that has seen the handle's run (:func:`pyguard.live.resumption.rebuild`)."""
    return rebuild(handle, guard.policy, run_id)


class _ResumedRun(GuardedRun):
    """A run that goes on from a handle: the handle's events and the replayed decisions first (in the result and the
    trace), then the new model calls, numbered after them (Java numbers its events from 1 again)."""

    def __init__(
        self,
        guard: ConversationHost,
        handle: EscalationHandle,
        run_id: str,
        session: RunSession,
        events: list[IterationEvent],
        decisions: list[Decision],
    ) -> None:
        super().__init__(guard, run_id=run_id, task=handle.task, task_type=handle.task_type, agent_style="aiservices")
        self.session = session
        self._offset = len(events)
        self.events = list(events)
        self.decisions = list(decisions)
        if self._writer is not None:
            by_iteration: dict[int | None, list[Decision]] = {}
            for d in decisions:
                by_iteration.setdefault(d.iteration, []).append(d)
            for e in events:
                self._writer.iteration(e)
                for d in by_iteration.get(e.index, ()):
                    self._writer.decision(run_id, d)

    def observe(self, event: IterationEvent) -> Decision | None:
        return super().observe(event.model_copy(update={"index": event.index + self._offset}))

    def observe_results(self, index: int, observations: list[Observation]) -> Decision | None:
        return super().observe_results(index + self._offset, observations)

    def _claim(self, index: int) -> bool:
        return super()._claim(index - self._offset)
