"""A guard attached to an agent for its lifetime: wrap the model once, build the agent once, and every user turn is a
run of its own, with its own trace, budget and outcome.

::

    guard = Guard(PolicyConfig.from_toml("pyguard.toml"), trace_dir="traces")
    agent_guard = guard.attach(my_chat_model, task_type="lookup")       # once, for the agent's lifetime
    agent = MyAgents.create(agent_guard.model, agent_guard.before_tool_execution())
    agent.chat("Where is order 12345?")        # a guarded run
    agent.chat("And order 23456?")             # another one, with its own budget and trace
    agent_guard.results[-1].outcome            # each run's RunResult, in the order they ended

Calls on one agent from several threads (or for several chat-memory ids) are separate runs: Java's
``AgentGuardedChatModel`` keeps a run per thread, opened through :class:`AgentGuard` when a user turn begins and ended
when the model answers, the guard stops the run or the model call fails (see that class for the rules). pyguard's own
agent styles built once through :meth:`pyguard.live.guard.Guard.agent` bind each ``chat()`` call to its run exactly
(:class:`GuardedAgent`).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from pyguard.base.agent_options import AgentOptions
from pyguard.base.decisions import Action, Decision
from pyguard.base.ending import Causes, Ending, EndNotes, RunEnding
from pyguard.base.errors import RunError
from pyguard.base.events import Outcome
from pyguard.engine.conditions import StopHit
from pyguard.engine.conversation_budget import RULE
from pyguard.jvm import run_built
from pyguard.jvm.ending import ending_of_exception, ending_of_value, java_outcome, raise_if_stopped
from pyguard.jvm.lifetime import agent_guarded_model
from pyguard.jvm.tool_limits import limit_run_tools, limited_tools, memory_ids
from pyguard.live.conversations import (
    Conversation,
    ConversationEntry,
    Conversations,
    conversation_session,
    thread_conversation,
)
from pyguard.live.on_stop import stop_message
from pyguard.live.run import GuardedRun, RunHost, new_run_id, recorded_task
from pyguard.result import RunResult

__all__: list[str] = []

UNFINISHED_TURN = (
    "the agent ended this user turn without a final answer outside the model (its own loop cap, such as LangChain4j's"
    " maxToolCallingRoundTrips, or an exception in the agent's code)"
)
"""The reason of a run whose turn ended where the guard could not see it (read when the next turn began)."""

ResultFn = Callable[[RunResult], None]


class AgentGuard:
    """One guard for one agent's lifetime (:meth:`pyguard.live.guard.Guard.attach` makes it).

    ``model``: the Java ``ChatModel`` to build the agent with (a Java ``AgentGuardedChatModel`` around yours).
    :meth:`before_tool_execution` / :meth:`after_tool_execution`: its tool hooks for an AiServices builder (they act on
    the run of the calling thread). ``results``: the last ``keep_results`` runs' results in the order they ended;
    ``on_result`` is called with each as it ends (on the agent's thread). ``options``
    (:class:`pyguard.AgentOptions`): the runs' ``task_type``, and ``max_tool_calling_round_trips``, the agent's own cap
    on tool-calling round trips per turn (LangChain4j's ``maxToolCallingRoundTrips``) when you tell it (None:
    unknown): with the guard's ``on_stop="answer"`` that cap's end gets the wrap-up answer too instead of
    LangChain4j's exception. :meth:`close` ends the runs still open and refuses every later model call with an error
    naming the fix.
    """

    def __init__(
        self,
        host: RunHost,
        model: Any,
        options: AgentOptions | None = None,
        *,
        agent_style: str | None = None,
        on_result: ResultFn | None = None,
        keep_results: int = 1000,
    ) -> None:
        options = options if options is not None else AgentOptions()
        self.host = host
        self.task_type = options.task_type
        self.agent_style = agent_style
        self.on_result = on_result
        self.round_trips = options.max_tool_calling_round_trips
        self.counts_executions = False
        self.delegate = model
        self._lock = threading.Lock()
        self._open: dict[str, GuardedRun] = {}
        self._results: deque[RunResult] = deque(maxlen=keep_results)
        self._java_ends: set[str] = set()
        """Runs Java is ending now (``Runs.ended``): their outcome goes back as its reply, not through ``publish``."""
        self._closed = False
        self.conversations = Conversations(host)
        """The conversations of this agent (``[conversation]`` budgets): see :meth:`conversation`."""
        self._memory_ids: Any = None
        self.java = agent_guarded_model(model, self._open_implicit, self._end_implicit)
        if self.round_trips:  # a turn's end at that cap is seen at its last model call, in every mode
            self.java.agentRoundTrips(self.round_trips)

    @property
    def model(self) -> Any:
        """The Java ``ChatModel`` to build your agent with, once."""
        return self.java

    def before_tool_execution(self) -> Any:
        """A Java ``Consumer<BeforeToolExecution>`` for ``AiServices.builder(...).beforeToolExecution(hook)``: a stop
        keeps the tools of the last response from running (the run of the calling thread)."""
        return self.java.beforeToolExecutionHook()

    def tools(self, *objects: Any) -> Any:
        """Your tool objects (``@Tool`` methods) as a Java ``Map<ToolSpecification, ToolExecutor>`` for your builder's
        ``.tools(map)``: each call keeps the policy's per-tool limits (``[caps.tool_limits]``) of the run serving the
        calling thread; a call over its tool's limit is not run and the model reads why."""
        return limited_tools(self.java, objects)

    def memory_ids(self) -> Any:
        """A Java ``BiFunction<ChatRequest, Object, ChatRequest>`` for ``AiServices.builder(...)
        .chatRequestTransformer(hook)``: it tells the guard which chat memory each model call serves (the request goes
        on unchanged), so the ``[conversation]`` budgets hold per memory id. Without it, a conversation is a thread."""
        if self._memory_ids is None:
            self._memory_ids = memory_ids()
        return self._memory_ids.hook()

    def conversation(self, conversation_id: str | None = None) -> Conversation:
        """The conversation ``conversation_id`` (a chat-memory id as text; None: the calling thread's): what it spent
        across its turns, :meth:`~pyguard.conversation_runs.Conversation.reset` (a fresh budget) and
        :meth:`~pyguard.conversation_runs.Conversation.end` (forget it)."""
        return Conversation(self.conversations, conversation_id or thread_conversation())

    def after_tool_execution(self) -> Any:
        """A Java ``Consumer<ToolExecution>`` for ``afterToolExecution(hook)``: counts the tools that ran (each run's
        ``tool_calls_executed``; None without this hook)."""
        self.counts_executions = True
        return self.java.afterToolExecutionHook()

    @property
    def results(self) -> list[RunResult]:
        """The results of the runs that ended, oldest first (at most ``keep_results``)."""
        with self._lock:
            return list(self._results)

    @property
    def open_runs(self) -> list[str]:
        """The run ids of the runs open now."""
        with self._lock:
            return list(self._open)

    # -- runs ----------------------------------------------------------------------------------------------------

    def new_run(self, task: str | None) -> GuardedRun:
        """A run of this agent for one user turn (its guarded model made around the agent's model)."""
        if self._closed:
            raise RunError(self._closed_message())
        run = ConversationRun(
            self.host,
            conversation=self.conversations.entry(self._conversation_now()),
            run_id=new_run_id(),
            task=task,
            task_type=self.task_type,
            agent_style=self.agent_style,
        )
        run.agent_round_trips = self.round_trips
        run.counts_executions = self.counts_executions
        run.on_end = lambda result: self._record(run, result)
        with self._lock:
            self._open[run.run_id] = run
        run.guarded_model(self.delegate)
        run.begin()
        return run

    def _conversation_now(self) -> str:
        """The conversation of the user turn beginning on this thread: the memory id its model call serves (when the
        agent has :meth:`memory_ids`), else the thread's."""
        if self._memory_ids is not None:
            memory_id = self._memory_ids.current()
            self._memory_ids.clear()
            if memory_id is not None:
                return str(memory_id)
        return thread_conversation()

    @contextmanager
    def bound(self, run: GuardedRun) -> Iterator[GuardedRun]:
        """Every model call of the calling thread inside the block is ``run``'s (the turn's boundaries are known)."""
        self.java.bind(run.guarded_model(self.delegate).java)
        try:
            yield run
        finally:
            self.java.unbind()

    def _record(self, run: GuardedRun, result: RunResult) -> None:
        """A run of this agent ended (its :attr:`GuardedRun.on_end`, however it ended): it is no longer open, its
        result is the latest, and Java's outcome listeners hear it (a run Java is ending hears it as the reply)."""
        with self._lock:
            self._open.pop(run.run_id, None)
            self._results.append(result)
            java_ends = run.run_id in self._java_ends
        if not java_ends:
            try:
                self.java.publish(java_outcome(result))
            except Exception:  # noqa: BLE001 - Java's listeners are told as a courtesy: the run has ended either way
                pass
        if self.on_result is not None:
            self.on_result(result)

    def _open_implicit(self, user_message: str | None) -> Any:
        return self.new_run(user_message).guarded_model(self.delegate).java

    def _end_implicit(self, run_id: str, answer: str | None, error: BaseException | None) -> Any:
        """Java ended a run of this agent (the model answered, a call or hook threw, the turn ended outside the
        model, or a watched call returned): end it, and return its Java ``GuardOutcome`` (None: no such open run)."""
        with self._lock:
            run = self._open.get(run_id)
            if run is None:
                return None
            self._java_ends.add(run_id)
        try:
            if answer is not None:
                ending = ending_of_value(answer)
            elif error is not None:
                ending = ending_of_exception(error, last_text=run.last_text())
            else:
                ending = RunEnding(ending=Ending.EXHAUSTED, reason=UNFINISHED_TURN, last_text=run.last_text())
            result = run.end(ending, wrap_up=False)
            try:
                return java_outcome(result)
            except Exception:  # noqa: BLE001 - the run has ended: Java then only misses how (lastOutcome() None)
                return None
        finally:
            with self._lock:
                self._java_ends.discard(run_id)

    def watch(self, agent: Any) -> Any:
        """Your Java agent (built around :attr:`model`) as Java's ``AgentGuardedChatModel.watch`` returns it: every
        call of its methods is one run that ends when the call returns or raises, so a turn LangChain4j's own
        round-trip cap ended is recorded as itself (outcome ``expired``, no open run) without telling the guard
        ``max_tool_calling_round_trips``. Call your agent through the returned object."""
        return self.java.watch(agent)

    # -- closing ---------------------------------------------------------------------------------------------------

    def close(self) -> None:
        """End the runs still open (outcome as for a turn that ended outside the model; ``cancelled`` for one whose
        turn a Ctrl-C interrupted) and refuse later calls. Every run this guard opened is ended, whether Java still
        counts it open or not."""
        self._closed = True
        self.java.close(self._closed_message())
        with self._lock:
            left = list(self._open.values())
        for run in left:
            ending = RunEnding(ending=Ending.EXHAUSTED, reason=UNFINISHED_TURN, last_text=run.last_text())
            if run.cancelled:
                ending = RunEnding(ending=Ending.STOPPED, stop_outcome=Outcome.CANCELLED, last_text=run.last_text())
            run.end(ending, wrap_up=False)

    def _closed_message(self) -> str:
        return (
            "this agent's guard was closed (AgentGuard.close()): build the agent again around a new "
            "guard.attach(model).model to guard it"
        )

    def __enter__(self) -> AgentGuard:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class GuardedAgent:
    """One of pyguard's agent styles (aiservices, agentic, executor), built once around an :class:`AgentGuard`'s
    model: each :meth:`chat` is one guarded run (its ``RunResult``), from any thread. Made by
    :meth:`pyguard.live.guard.Guard.agent`."""

    def __init__(self, agent_guard: AgentGuard, java_agent: Any, style: str) -> None:
        self.agent_guard = agent_guard
        self.java = java_agent
        self.style = style

    def chat(self, task: str | Sequence[str]) -> RunResult:
        """Run one user turn (or, aiservices only, a list of user messages in one run) and return its result; its
        outcome says how it ended. Under ``on_stop="raise"`` a stop raises Java's ``GuardStopException``
        (``pyguard.jvm.GuardStopException``) once the run has ended (its result is ``agent_guard.results[-1]``), as
        an attached agent's ``chat()`` does; nothing else about the run raises."""
        ag = self.agent_guard
        run = ag.new_run(recorded_task(task))

        def turn(_: Any) -> Any:
            with ag.bound(run):
                return run_built(self.java, task, run.guarded)

        result = run.drive(turn)
        raise_if_stopped(run)
        return result

    def close(self) -> None:
        self.agent_guard.close()


class ConversationRun(GuardedRun):
    """One user turn of an attached agent, charged to its conversation (:mod:`pyguard.live.conversations`): its engine
    session judges the policy's stop condition OR the conversation's ``[conversation]`` budget."""

    in_conversation = True

    def __init__(self, guard: RunHost, *, conversation: ConversationEntry, **run: Any) -> None:
        super().__init__(guard, **run)
        self.conversation = conversation.ledger
        self._conversation_tools = conversation.java_limits
        if self.conversation.limits.enabled:  # else the policy's own session: nothing more to judge
            self.session = conversation_session(guard.policy, self.conversation, self.run_id, self.task_type)
        self.conversation.add_run(self.run_id)
        self.turn_in_conversation = self.conversation.spend.runs
        self.spent_before: StopHit | None = None
        """The conversation's limit that was spent before this turn began (it then made no model call)."""

    @property
    def conversation_id(self) -> str:
        return self.conversation.id

    def begin(self) -> None:
        """After the run's model is wrapped: its per-tool limits (``[caps.tool_limits]``) within its conversation's
        (``[conversation.tool_limits]``), and a turn of a spent conversation stopped before its first model call (the
        stop recorded as the run's decision)."""
        guarded = self.guarded
        if self._conversation_tools is not None:  # the run's limits (set as it was wrapped) within its conversation's
            limit_run_tools(guarded.java, {}, stop_message(self.guard), self.mode)
            guarded.java.toolLimits().within(self._conversation_tools)
        hit = self.conversation.exhausted()
        if hit is None:
            return
        self.spent_before = hit
        decision = Decision(
            action=Action.STOP, reason=hit.message, rule=hit.rule, outcome=Outcome.EXPIRED, evidence=dict(hit.evidence)
        )
        with self._lock:
            self.decisions.append(decision)
            if self._writer is not None:
                self._writer.decision(self.run_id, decision)
            if self.mode != "enforce":  # observe and reflect never stop a run: the stop is recorded, the turn runs
                self.observed_stop = decision.model_copy(update={"iteration": 0})  # before its first model call
                return
        guarded.request_stop(Outcome.EXPIRED, hit.message, hit.rule)

    def observe(self, event: Any) -> Decision | None:
        """Charge the model call to the conversation, then judge it (the conversation's budget among the rules)."""
        self.conversation.charge_event(event)
        return super().observe(event)

    def _notes(self, causes: Causes) -> EndNotes:
        """The run's notes with its conversation: id, limits, spend after this turn, which turn it was, and the rule
        when the conversation's budget stopped it; calls blocked by the conversation's tool limits among the run's."""
        notes = super()._notes(causes)
        if notes.wrap_up_tokens is not None and notes.wrap_up_tokens.total:
            self.conversation.charge_tokens(notes.wrap_up_tokens.total)
        evidence = dict(notes.evidence)
        summary = self.conversation.summary()
        summary["turn"] = self.turn_in_conversation
        stop = self.spent_before or self.session.stopped
        if stop is not None and (stop.rule or "").startswith(RULE):
            # observe and reflect did not stop the turn: the budget's stop is what would have happened
            summary["stopped_by" if self.mode == "enforce" else "would_stop_by"] = stop.rule
            if self.spent_before is not None:
                summary["spent_before_turn"] = True
        evidence["conversation"] = summary
        if self._conversation_tools is not None and self._guarded is not None:
            limits = dict((evidence.get("tool_limits") or {}).get("limits") or {})
            evidence["tool_limits"] = self._tool_limit_counts(limits)
        return replace(notes, evidence=evidence)
