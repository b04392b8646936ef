"""The handle of an escalated run: what a human needs to see and what pyguard needs to go on later.

A policy can escalate instead of stopping (``[escalation]`` in the policy, :class:`pyguard.engine.EscalationConfig`):
the run then ends ``escalated``, and its :class:`~pyguard.result.RunResult` carries an :class:`EscalationHandle` —
the evidence, the conversation so far (LangChain4j's chat-memory JSON) and the guard's state (the run's events and
where earlier resumptions happened, from which the engine's state is rebuilt). The handle is plain JSON, so it can be
stored and resumed in another process::

    Path("esc.json").write_text(result.escalation.to_json())
    ...
    handle = EscalationHandle.from_json(Path("esc.json").read_text())
    result = guard.resume(handle, "The order id is SO-12345.", model)   # the same agent, a new turn

A handle is checked before it is used (:meth:`EscalationHandle.from_json`, :meth:`EscalationHandle.check`): its
format version, its digest (a handle edited by hand is refused), and that its events belong to its run.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_serializer, model_validator

from pyguard.base.agent_options import AgentOptions
from pyguard.base.decisions import Decision
from pyguard.base.errors import HandleError, TraceFormatError
from pyguard.base.events import IterationEvent, Observation, Outcome
from pyguard.base.safe_reader import check_depth, loads

__all__: list[str] = []

HANDLE_VERSION = 1
"""The handle format this pyguard writes and reads."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


KEPT = ("system_message", "max_tool_calling_round_trips")
"""The agent options an escalation handle keeps (:attr:`AgentRef.options`), flat in its JSON."""


class AgentRef(_Model):
    """Which agent the run was: what :meth:`pyguard.live.guard.Guard.resume` rebuilds around the model it is given.

    Its JSON is what it was before the agent options had a type (``system_message`` and
    ``max_tool_calling_round_trips`` beside ``style``, ``streaming`` and ``name``), so handles written by earlier
    versions are read, and their digests still match."""

    style: str = "aiservices"
    """Only pyguard's AiServices agent keeps its conversation (chat memory), so only it can be resumed."""
    streaming: bool = False
    """True when the run streamed (a ``StreamingChatModel`` and a ``TokenStream``)."""
    name: str | None = None
    """The caller's name for the agent, if given (``agent=`` when running and resuming must agree)."""
    options: AgentOptions = Field(default_factory=AgentOptions, validate_default=True)
    """What the handle keeps of the agent's options: its system message and round trips (resolved: None becomes
    the AiServices default). The tools are given again on resumption; the run id and task type are the handle's."""

    @model_validator(mode="before")
    @classmethod
    def _from_json(cls, data: Any) -> Any:
        """The JSON's flat ``system_message`` / ``max_tool_calling_round_trips`` into :attr:`options`."""
        if not isinstance(data, dict) or not any(k in data for k in KEPT):
            return data
        if "options" in data:
            raise ValueError(f"give options or {' and '.join(KEPT)}, not both")
        kept = {k: data[k] for k in KEPT if k in data}
        return {**{k: v for k, v in data.items() if k not in KEPT}, "options": kept}

    @field_validator("options", mode="after")
    @classmethod
    def _kept(cls, options: AgentOptions) -> AgentOptions:
        return AgentOptions(system_message=options.system_message, max_tool_calling_round_trips=options.round_trips())

    @model_serializer(mode="plain")
    def _to_json(self) -> dict[str, Any]:
        return {
            "style": self.style,
            "streaming": self.streaming,
            "name": self.name,
            "system_message": self.options.system_message,
            "max_tool_calling_round_trips": self.options.round_trips(),
        }


class ResumePoint(_Model):
    """An earlier resumption: after iteration ``after``, the run went on with ``budget`` model calls."""

    after: int = Field(ge=1)
    budget: int = Field(ge=1)
    message: str
    """The human's message."""
    results: tuple[Observation, ...] | None = None
    """The escalated handle's :attr:`EscalationHandle.results`: the tool results its escalation was decided on."""


class EscalationHandle(_Model):
    """Everything needed to resume an escalated run, as JSON (versioned, checked by a digest)."""

    kind: Literal["pyguard.escalation"] = "pyguard.escalation"
    version: int = HANDLE_VERSION
    run_id: str
    """The run (segment) that escalated."""
    origin_run_id: str
    """The first run of the chain (equal to ``run_id`` before any resumption)."""
    resumptions: int = Field(default=0, ge=0)
    """How often the chain was resumed before this escalation."""
    task: str | None = None
    task_type: str | None = None
    agent: AgentRef
    escalation: Decision
    """The decision that escalated (reason, rule, evidence)."""
    resume_budget: int = Field(ge=1)
    """Model calls the policy in force granted on resumption (the resuming guard's policy decides in the end)."""
    events: tuple[IterationEvent, ...]
    """The run so far, one event per model call: the guard's state is rebuilt from them."""
    results: tuple[Observation, ...] | None = None
    """The last call's tool results when the escalation was decided on them, before the next call was sent
    (``judge_results_early``): no event holds them, since that call was never made. None: the escalation followed
    the last call's event (the results of each earlier call are in the next event's observations)."""
    resumes: tuple[ResumePoint, ...] = ()
    conversation: str
    """The agent's chat memory, LangChain4j's ``ChatMessageSerializer`` JSON."""
    digest: str = ""
    """blake2b of the rest of the handle: a handle changed after it was written is refused."""

    # -- JSON -------------------------------------------------------------------------------------------------------

    def to_json(self) -> str:
        """The handle as one JSON object (``from_json`` of it gives an equal, checked handle)."""
        return self.sealed().model_dump_json()

    @classmethod
    def from_json(cls, text: str | bytes) -> EscalationHandle:
        """Read and check a handle; :class:`HandleError` naming what is wrong otherwise."""
        try:
            raw = loads(text, source="the escalation handle")  # the one safe reader: depth and integer size
            check_depth(raw, source="the escalation handle", error=HandleError)
        except TraceFormatError as exc:
            raise HandleError(f"{exc}; pass the text EscalationHandle.to_json() wrote") from None
        except (ValueError, TypeError) as exc:
            raise HandleError(
                f"the escalation handle is not JSON ({exc}); pass the text EscalationHandle.to_json() wrote"
            ) from None
        if not isinstance(raw, dict) or raw.get("kind") != "pyguard.escalation":
            raise HandleError(
                'this JSON is not a pyguard escalation handle (no "kind": "pyguard.escalation"); pass the text '
                "EscalationHandle.to_json() wrote"
            )
        version = raw.get("version")
        if version != HANDLE_VERSION:
            raise HandleError(
                f"escalation handle version {version!r} is not supported: this pyguard reads version {HANDLE_VERSION}; "
                "resume it with the pyguard version that wrote it"
            )
        try:
            handle = cls.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            raise HandleError(
                f"the escalation handle is malformed at {where or '<root>'!r}: {first.get('msg')}; "
                "pass the text EscalationHandle.to_json() wrote, unchanged"
            ) from None
        if raw.get("digest") == _digest({k: v for k, v in raw.items() if k != "digest"}):
            # the JSON is as it was written; a pyguard since then may read more fields into it (their defaults), so
            # the digest of what it read differs: seal that (an edited handle still fails the check below)
            handle = handle.sealed()
        return handle.check()

    # -- integrity --------------------------------------------------------------------------------------------------

    def compute_digest(self) -> str:
        return _digest(self.model_dump(mode="json", exclude={"digest"}))

    def sealed(self) -> EscalationHandle:
        """This handle with its digest set."""
        digest = self.compute_digest()
        return self if self.digest == digest else self.model_copy(update={"digest": digest})

    def check(self) -> EscalationHandle:
        """Raise :class:`HandleError` unless the handle is whole and consistent; return it."""
        if self.version != HANDLE_VERSION:
            raise HandleError(
                f"escalation handle version {self.version} is not supported: this pyguard reads {HANDLE_VERSION}"
            )
        if self.digest != self.compute_digest():
            raise HandleError(
                f"the escalation handle of run {self.run_id!r} was changed after it was written (its digest does not "
                "match): resume from the handle as the run wrote it"
            )
        strangers = sorted({e.run_id for e in self.events if e.run_id != self.run_id})
        if strangers:
            raise HandleError(
                f"the escalation handle names run {self.run_id!r} but its events belong to {strangers}: the handle "
                "was pieced together from different runs; resume from the handle the run wrote"
            )
        if self.escalation.outcome is not Outcome.ESCALATED or self.escalation.iteration != len(self.events):
            raise HandleError(
                f"the escalation handle of run {self.run_id!r} does not end in an escalation after its last event "
                f"(decision after iteration {self.escalation.iteration}, outcome {self.escalation.outcome}, "
                f"{len(self.events)} events)"
            )
        if self.agent.style != "aiservices":
            raise HandleError(
                f"agent style {self.agent.style!r} cannot be resumed: only pyguard's AiServices agent keeps its "
                "conversation; run the agent with style 'aiservices'"
            )
        return self

    @property
    def next_run_id(self) -> str:
        """The run id the resumed run gets."""
        return resumed_run_id(self.origin_run_id, self.resumptions + 1)

    def summary(self) -> dict[str, Any]:
        """What a human reads first: the run, why it escalated, what it did."""
        return {
            "run_id": self.run_id,
            "task": self.task,
            "reason": self.escalation.reason,
            "rule": self.escalation.rule,
            "model_calls": len(self.events),
            "tool_calls": [f"{c.name}({c.arguments})" for e in self.events for c in e.tool_calls],
            "resume_budget": self.resume_budget,
        }


def _digest(body: dict[str, Any]) -> str:
    """blake2b of a handle's JSON body (everything but its digest), keys sorted."""
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def resumed_run_id(origin: str, n: int) -> str:
    """The id of the ``n``-th resumption of run ``origin``: ``<origin>-r<n>``."""
    return f"{origin}-r{n}"
