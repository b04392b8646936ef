"""A seeded generator of task scenarios for the frontier benchmark, modelled on what is reported from production and
on the patterns of real agents' recorded runs (issue 10).

Each :class:`Task` is one scenario dict in the format the Java ``ScriptedChatModel`` plays (see
``pyguard/scenarios/README.md``) plus what the benchmark needs to judge it: its kind and family, its user messages,
its correct answer keys (unique keys such as ``ANS-3f2a9c01``, one per user message), where its loop starts if it
loops, and for a looping task the loop-free scenario an oracle would play (the token floor).

The default mix (:data:`DEFAULT_MIX`; counts are allocated exactly, then shuffled) is 70% legitimate, 30% looping, as
before the families of issue 10 were added (so a policy's best expected success stays 0.70 + 0.30 x 0.6 = 0.88):

- the classic families (54%): ``converge`` (33%: ``n`` productive calls, ``n`` lognormal with median 5 and sigma 0.8,
  20% of them with two tool calls at once), ``poll`` (4%: the same call, a result that changes every time until
  ``DONE``), ``paginate`` (4%: page 1..P); ``oscillate`` (5%: the same lookup, identical or equal once normalised, or
  a two-call cycle), ``diverge`` (5%: a new query every call, near-identical boilerplate back), ``stall`` (5%: new
  queries, every result empty). Looping tasks start with a productive prefix of 0-3 calls.
- ``conversation`` (8%) / ``conversation_loop`` (3%): 3-6 user messages to a retail customer-service agent, each a few
  tool calls and an answer; in the looping variant one message's turn loops (:mod:`workload_conversation`).
- ``edit_rerun`` (6%) / ``edit_loop`` (3%), ``rephrase_found`` (4%) / ``rephrase_loop`` (3%), ``poll_volatile`` (4%) /
  ``poll_stuck`` (2%), ``large_pages`` (4%) / ``large_loop`` (2%), ``long_work`` (3%) / ``long_loop`` (2%): see
  :mod:`workload_patterns`.

How agents react to a reflection (``on_reflection``): with probability ``recover_probability`` (0.6) the agent
answers with what it has, some (edit_loop, half of rephrase_loop) after trying something new first. For a looping task
(or message) that answer is the correct one. For a task still making progress an answer "with what it has" is
premature, so it is *wrong*: a false reflection costs a task. :func:`no_recovery` gives the same tasks with agents that
never react to a reflection.

Success (:func:`is_success`): the run ended ``succeeded`` and its answers hold every answer key of the task (one per
user message). A looping task therefore succeeds only if it recovered after a reflection; a stopped or capped run never
succeeds.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

import numpy as np
import workload_paging as paging
import workload_patterns as patterns
import workload_waiting as waiting
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from workload_common import CITIES, STATUS, Builder, geometric_extra, ident, iso, words
from workload_conversation import conversation

from pyguard.base.errors import ConfigError
from pyguard.engine.strict_config import config_error

__all__ = [
    "TaskKind",
    "LEGITIMATE",
    "LOOPING",
    "FAMILIES",
    "WAITING_MIX",
    "WAITING_TASKS",
    "DEFAULT_MIX",
    "WorkloadSpec",
    "Task",
    "generate",
    "no_recovery",
    "with_recovery",
    "is_success",
    "describe",
    "family_of",
]


class TaskKind(StrEnum):
    CONVERGE = "converge"
    POLL = "poll"
    PAGINATE = "paginate"
    OSCILLATE = "oscillate"
    DIVERGE = "diverge"
    STALL = "stall"
    CONVERSATION = "conversation"
    CONVERSATION_LOOP = "conversation_loop"
    EDIT_RERUN = "edit_rerun"
    EDIT_LOOP = "edit_loop"
    REPHRASE_FOUND = "rephrase_found"
    REPHRASE_LOOP = "rephrase_loop"
    POLL_VOLATILE = "poll_volatile"
    POLL_STUCK = "poll_stuck"
    LARGE_PAGES = "large_pages"
    LARGE_LOOP = "large_loop"
    LONG_WORK = "long_work"
    LONG_LOOP = "long_loop"
    WAIT_POLL = "wait_poll"
    PENDING_POLL = "pending_poll"
    PENDING_SLEEP_POLL = "pending_sleep_poll"
    JSON_PAGES = "json_pages"
    AB_OSCILLATION = "ab_oscillation"


K = TaskKind
LEGITIMATE = (
    K.CONVERGE,
    K.POLL,
    K.PAGINATE,
    K.CONVERSATION,
    K.EDIT_RERUN,
    K.REPHRASE_FOUND,
    K.POLL_VOLATILE,
    K.LARGE_PAGES,
    K.LONG_WORK,
    K.WAIT_POLL,
    K.PENDING_POLL,
    K.PENDING_SLEEP_POLL,
    K.JSON_PAGES,
)
LOOPING = (
    K.OSCILLATE,
    K.DIVERGE,
    K.STALL,
    K.CONVERSATION_LOOP,
    K.EDIT_LOOP,
    K.REPHRASE_LOOP,
    K.POLL_STUCK,
    K.LARGE_LOOP,
    K.LONG_LOOP,
    K.AB_OSCILLATION,
)

FAMILIES: dict[str, tuple[TaskKind, ...]] = {
    "classic": (K.CONVERGE, K.POLL, K.PAGINATE, K.OSCILLATE, K.DIVERGE, K.STALL),
    "conversation": (K.CONVERSATION, K.CONVERSATION_LOOP),
    "edit_rerun": (K.EDIT_RERUN, K.EDIT_LOOP),
    "rephrase": (K.REPHRASE_FOUND, K.REPHRASE_LOOP),
    "poll_volatile": (K.POLL_VOLATILE, K.POLL_STUCK),
    "large_results": (K.LARGE_PAGES, K.LARGE_LOOP),
    "long_work": (K.LONG_WORK, K.LONG_LOOP),
    "waiting": (K.WAIT_POLL, K.PENDING_POLL, K.PENDING_SLEEP_POLL, K.JSON_PAGES, K.AB_OSCILLATION),
}
"""Each family: its kinds (the classic six, then one legitimate and one looping kind per pattern of issue 10, then
issue 22's waiting kinds, both legitimate and outside :data:`DEFAULT_MIX`: see :data:`WAITING_MIX`)."""


def family_of(kind: TaskKind | str) -> str:
    kind = TaskKind(kind)
    return next(f for f, kinds in FAMILIES.items() if kind in kinds)


DEFAULT_MIX = {
    K.CONVERGE: 0.33,
    K.POLL: 0.04,
    K.PAGINATE: 0.04,
    K.OSCILLATE: 0.05,
    K.DIVERGE: 0.05,
    K.STALL: 0.05,
    K.CONVERSATION: 0.08,
    K.CONVERSATION_LOOP: 0.03,
    K.EDIT_RERUN: 0.06,
    K.EDIT_LOOP: 0.03,
    K.REPHRASE_FOUND: 0.04,
    K.REPHRASE_LOOP: 0.03,
    K.POLL_VOLATILE: 0.04,
    K.POLL_STUCK: 0.02,
    K.LARGE_PAGES: 0.04,
    K.LARGE_LOOP: 0.02,
    K.LONG_WORK: 0.03,
    K.LONG_LOOP: 0.02,
}


WAITING_MIX = {
    K.WAIT_POLL: 0.2,
    K.PENDING_POLL: 0.2,
    K.PENDING_SLEEP_POLL: 0.2,
    K.JSON_PAGES: 0.2,
    K.AB_OSCILLATION: 0.2,
}
"""The waiting families' own workload (the frontier's ``waiting`` block): identical status reads until done, with a
``sleep`` between them, saying "pending", or both; a large JSON result paged to its last page; and one looping kind,
an A/B oscillation (:mod:`workload_paging`)."""
WAITING_TASKS = 40


class WorkloadSpec(BaseModel):
    """What to generate. Every field is recorded in the benchmark's JSON (:func:`describe`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_tasks: int = Field(default=1000, ge=1)
    seed: int = 20240601
    """Master seed: task i gets the i-th child of ``numpy.random.SeedSequence(seed)``."""
    mix: dict[TaskKind, float] = Field(default_factory=lambda: dict(DEFAULT_MIX))
    """Share of each kind (sums to 1)."""
    recover_probability: float = Field(default=0.6, ge=0, le=1)
    """Probability that an agent answers at once with what it has when it reads a reflection."""
    converge_median_calls: float = Field(default=5.0, gt=0)
    converge_sigma: float = Field(default=0.8, ge=0)
    max_productive_calls: int = Field(default=60, ge=1)
    parallel_call_share: float = Field(default=0.2, ge=0, le=1)
    base_input_tokens: int = Field(default=350, ge=0)
    """Prompt tokens of every call besides the conversation (system message, tool specifications)."""
    chars_per_token: float = Field(default=4.0, gt=0)
    output_tokens: int = Field(default=30, ge=1)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise config_error(exc, model="WorkloadSpec") from None

    @model_validator(mode="after")
    def _check_mix(self) -> WorkloadSpec:
        total = sum(self.mix.values())
        if abs(total - 1.0) > 1e-6 or any(v < 0 for v in self.mix.values()):
            raise ValueError(
                f"workload mix {self.mix!r} must be non-negative shares summing to 1 (they sum to {total})"
            )
        return self


class Task(BaseModel):
    """One generated task: its scenario and how to judge it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    kind: TaskKind
    family: str
    seed: int
    """The Java player's seed (its random choices: reflection recovery)."""
    user_turns: list[str]
    """The user messages: one for a single task, 3-6 for a conversation (each answered before the next)."""
    keys: list[str]
    """One answer key per user message: a run succeeded only if its answers hold every one."""
    answer_at: int | None
    """For legitimate tasks, the model call that answers the last message (1-based); None for looping tasks."""
    loop_from_call: int | None
    """For looping tasks, the model call whose response starts the loop (1-based, counted over the whole run)."""
    scenario: dict[str, Any]
    oracle: dict[str, Any] | None = None
    """For looping tasks, the loop-free scenario: the same run answering where its loop would start (after what it
    tries on a reflection, when it tries something first). Its tokens are the task's share of the oracle floor."""

    @property
    def expected(self) -> str:
        """The key of the last user message (the only one of a single task)."""
        return self.keys[-1]

    @property
    def looping(self) -> bool:
        return self.kind in LOOPING

    @property
    def task(self) -> str | list[str]:
        """What to hand the agent: the message of a single task, the list of a conversation."""
        return self.user_turns[0] if len(self.user_turns) == 1 else list(self.user_turns)


# ---- the classic families ---------------------------------------------------------------------------------------


def _converge(b: Builder, spec: WorkloadSpec, expected: str) -> tuple[int, None]:
    n = int(
        np.clip(
            round(b.rng.lognormal(np.log(spec.converge_median_calls), spec.converge_sigma)),
            1,
            spec.max_productive_calls,
        )
    )
    b.productive(n, spec.parallel_call_share)
    b.turns.append({"answer": f"Done: I checked {n} sources. Final answer {expected}.", "output_tokens": 60})
    return n + 1, None


def _poll(b: Builder, spec: WorkloadSpec, expected: str) -> tuple[int, None]:
    rng = b.rng
    polls = geometric_extra(rng, 2, 0.22, 40)
    job = ident(rng, "exp-")
    total = int(rng.integers(500, 50000))
    cuts = np.sort(rng.choice(np.arange(1, 99), size=polls - 1, replace=False)) if polls > 1 else np.array([], int)
    results = [f"job {job}: RUNNING {p}% ({total * p // 100} of {total} rows), checked at {iso(rng)}" for p in cuts]
    results.append(f"job {job}: DONE, {total} rows written to exports/{words(rng, 1)}.csv, checked at {iso(rng)}")
    b.tools["start_export"] = {
        "name": "start_export",
        "description": "start an export job",
        "parameters": {"query": "string"},
        "results": [f"export job {job} started for {total} rows"],
    }
    b.tools["check_export"] = {
        "name": "check_export",
        "description": "check an export job",
        "parameters": {"jobId": "string"},
        "results": results,
    }
    b.turns.append({"tool_calls": [{"name": "start_export", "arguments": {"query": words(rng, 3)}}]})
    b.turns.append(
        {
            "tool_calls": [{"name": "check_export", "arguments": {"jobId": job}}],
            "on_result": [
                {
                    "contains": "DONE",
                    "then": {"answer": f"The export finished: {{last_result}}. Final answer {expected}."},
                }
            ],
        }
    )
    return polls + 2, None


def _paginate(b: Builder, spec: WorkloadSpec, expected: str) -> tuple[int, None]:
    rng = b.rng
    pages = geometric_extra(rng, 2, 0.25, 40)
    values = {}
    for p in range(1, pages + 1):
        rows = "; ".join(
            f"{ident(rng, '')} {rng.choice(STATUS).lower()} {words(rng, 2)}" for _ in range(int(rng.integers(3, 9)))
        )
        values[str(p)] = f"page {p}/{pages}: {rows}"
    b.tools["list_orders"] = {
        "name": "list_orders",
        "description": "list delayed orders",
        "parameters": {"page": "integer"},
        "by_argument": {"name": "page", "values": values, "default": "no such page"},
    }
    for p in range(1, pages + 1):
        b.turns.append({"tool_calls": [{"name": "list_orders", "arguments": {"page": p}}]})
    b.turns.append({"answer": f"I read all {pages} pages. Final answer {expected}.", "output_tokens": 60})
    return pages + 1, None


def _prefix(b: Builder, spec: WorkloadSpec) -> int:
    n = int(b.rng.choice([0, 1, 2, 3], p=[0.25, 0.35, 0.25, 0.15]))
    b.productive(n, spec.parallel_call_share)
    return n


def _oscillate(b: Builder, spec: WorkloadSpec, expected: str) -> tuple[None, int]:
    rng = b.rng
    start = _prefix(b, spec)
    oid = str(rng.integers(10000, 99999))
    status = f"Order {oid}: status {rng.choice(STATUS)}, last scan {rng.choice(CITIES)} hub, carrier {words(rng, 1)}."
    b.tools["get_status"] = {
        "name": "get_status",
        "description": "shipment status",
        "parameters": {"orderId": "string"},
        "results": [status],
    }
    pattern = rng.choice(["identical", "normalised", "cycle"])
    if pattern == "identical":
        b.turns.append({"tool_calls": [{"name": "get_status", "arguments": {"orderId": oid}}]})
    elif pattern == "normalised":
        r = int(rng.integers(1, 4))
        b.turns.append({"tool_calls": [{"name": "get_status", "arguments": {"orderId": oid}}], "repeat": r})
        b.turns.append({"tool_calls": [{"name": "get_status", "arguments": {"orderId": f"SO-{oid}"}}], "repeat": r})
    else:
        eta = f"Carrier ETA for {oid}: {rng.integers(1, 9)} days, route via {rng.choice(CITIES)}."
        b.tools["get_eta"] = {
            "name": "get_eta",
            "description": "carrier ETA",
            "parameters": {"orderId": "string"},
            "results": [eta],
        }
        b.turns.append({"tool_calls": [{"name": "get_status", "arguments": {"orderId": oid}}]})
        b.turns.append({"tool_calls": [{"name": "get_eta", "arguments": {"orderId": oid}}]})
    return None, start + 1


def _diverge(b: Builder, spec: WorkloadSpec, expected: str) -> tuple[None, int]:
    rng = b.rng
    start = _prefix(b, spec)
    titles = [f"'{words(rng, 2).title()} ({rng.choice(['general', 'faq', 'policy'])})'" for _ in range(5)]
    results = [
        f"No article matches {{args}} exactly. Related: {', '.join(rng.choice(titles, size=2, replace=False))}."
        for _ in range(120)
    ]
    b.tools["search_kb"] = {
        "name": "search_kb",
        "description": "search the knowledge base",
        "parameters": {"query": "string"},
        "results": results,
    }
    topic = words(rng, 2)
    for phrasing in (
        "why is {t} failing case {{turn}}",
        "{t} root cause attempt {{turn}}",
        "{t} known issue {{turn}}",
        "how to fix {t} variant {{turn}}",
    ):
        b.turns.append({"tool_calls": [{"name": "search_kb", "arguments": {"query": phrasing.format(t=topic)}}]})
    return None, start + 1


def _stall(b: Builder, spec: WorkloadSpec, expected: str) -> tuple[None, int]:
    rng = b.rng
    start = _prefix(b, spec)
    empty = str(rng.choice(['{"items": [], "total": 0}', "No matching records found.", "[]", "0 rows returned."]))
    b.tools["query_logs"] = {
        "name": "query_logs",
        "description": "query logs in a time window",
        "parameters": {"window": "string"},
        "results": [empty],
    }
    b.tools["query_events"] = {
        "name": "query_events",
        "description": "query events by filter",
        "parameters": {"filter": "string"},
        "results": [empty],
    }
    svc = words(rng, 1)
    b.turns.append({"tool_calls": [{"name": "query_logs", "arguments": {"window": "last {turn} hours " + svc}}]})
    b.turns.append({"tool_calls": [{"name": "query_events", "arguments": {"filter": f"service={svc} page={{turn}}"}}]})
    return None, start + 1


_BUILD = {
    K.CONVERGE: _converge,
    K.POLL: _poll,
    K.PAGINATE: _paginate,
    K.OSCILLATE: _oscillate,
    K.DIVERGE: _diverge,
    K.STALL: _stall,
    K.EDIT_RERUN: patterns.edit_rerun,
    K.EDIT_LOOP: patterns.edit_loop,
    K.REPHRASE_FOUND: patterns.rephrase_found,
    K.REPHRASE_LOOP: patterns.rephrase_loop,
    K.POLL_VOLATILE: patterns.poll_volatile,
    K.POLL_STUCK: patterns.poll_stuck,
    K.LARGE_PAGES: patterns.large_pages,
    K.LARGE_LOOP: patterns.large_loop,
    K.LONG_WORK: patterns.long_work,
    K.LONG_LOOP: patterns.long_loop,
    K.WAIT_POLL: waiting.wait_poll,
    K.PENDING_POLL: waiting.pending_poll,
    K.PENDING_SLEEP_POLL: waiting.pending_sleep_poll,
    K.JSON_PAGES: paging.json_pages,
    K.AB_OSCILLATION: paging.ab_oscillation,
}

TASK_TEXT = "Task {id}: find the answer and report it."
_TASK_TEXTS = {
    K.EDIT_RERUN: "The reproduction script /testbed/reproduce.py fails with a ValueError. Fix the bug so that it passes.",
    K.EDIT_LOOP: "The reproduction script /testbed/reproduce.py fails with a ValueError. Fix the bug so that it passes.",
    K.REPHRASE_FOUND: "Question: where was the artist I am thinking of born? Look them up in the encyclopedia.",
    K.REPHRASE_LOOP: "Question: where was the artist I am thinking of born? Look them up in the encyclopedia.",
    K.POLL_VOLATILE: "Export the orders report and tell me where the file is.",
    K.POLL_STUCK: "Export the invoices report and tell me where the file is.",
    K.LARGE_PAGES: "Go through the listing (or the log) page by page and summarise it.",
    K.LARGE_LOOP: "Go through the store's search results for cables and summarise them.",
    K.LONG_WORK: "Work through the whole backlog and report when everything is done.",
    K.LONG_LOOP: "Work through the whole backlog and report when everything is done.",
    K.WAIT_POLL: "Rebuild the index and tell me when it is complete.",
    K.PENDING_POLL: "Export the table and tell me where the file is.",
    K.PENDING_SLEEP_POLL: "Export the partition and tell me where the file is.",
    K.JSON_PAGES: "Read every page of the inventory records and give me the reconciliation key.",
    K.AB_OSCILLATION: "Find out who is handling the support ticket and report it.",
}


def _allocate(spec: WorkloadSpec, rng: np.random.Generator) -> list[TaskKind]:
    """Exactly ``round(share * n)`` tasks per kind (largest remainders), in a shuffled order."""
    kinds = list(spec.mix)
    raw = np.array([spec.mix[k] * spec.n_tasks for k in kinds])
    counts = np.floor(raw).astype(int)
    for i in np.argsort(-(raw - counts))[: spec.n_tasks - counts.sum()]:
        counts[i] += 1
    out = [k for k, c in zip(kinds, counts, strict=False) for _ in range(c)]
    rng.shuffle(out)
    return out


def _key(rng: np.random.Generator) -> str:
    return f"ANS-{rng.integers(0, 2**32):08x}"


def _task(i: int, kind: TaskKind, spec: WorkloadSpec, seq: np.random.SeedSequence) -> Task:
    rng = np.random.default_rng(seq)
    seed = int(rng.integers(1, 2**62))
    expected = _key(rng)
    usage = {
        "report": True,
        "base_input_tokens": spec.base_input_tokens,
        "chars_per_token": spec.chars_per_token,
        "output_tokens": spec.output_tokens,
    }
    base = {
        "name": f"{kind.value}-{i:05d}",
        "description": f"frontier workload task {i} ({kind.value}), seed {spec.seed}",
        "seed": seed,
        "toolset": "scenario",
    }
    common = dict(id=f"t{i:05d}", kind=kind, family=family_of(kind), seed=seed)
    if kind in (K.CONVERSATION, K.CONVERSATION_LOOP):
        n = int(rng.integers(3, 7))
        keys = [expected] + [_key(rng) for _ in range(n - 1)]
        keys = keys[1:] + keys[:1]  # the last message's key is the task's `expected`
        tools: dict[str, dict] = {}
        loop_in = int(rng.integers(0, n)) if kind is K.CONVERSATION_LOOP else None
        c = conversation(rng, tools, keys, loop_in, spec.recover_probability)
        scenario = {**base, "tools": list(tools.values()), "usage": usage, "conversation": c.segments}
        oracle = None if c.oracle_segments is None else {**scenario, "conversation": c.oracle_segments}
        return Task(
            **common,
            user_turns=[sg["user"] for sg in c.segments],
            keys=keys,
            answer_at=None if loop_in is not None else c.answer_at,
            loop_from_call=c.loop_from_call,
            scenario=scenario,
            oracle=oracle,
        )
    b = Builder(rng)
    answer_at, loop_from = _BUILD[kind](b, spec, expected)
    looping = kind in LOOPING
    recovery = b.recovery or f"I have what I can get; I will stop here. Final answer {expected}."
    reflection: dict[str, Any] = {
        "recover_probability": spec.recover_probability,
        "answer": recovery if looping else "Based on what I found so far: {last_result}",
    }
    if looping and b.try_first:
        reflection["try_first"] = b.try_first
    scenario = {**base, "tools": list(b.tools.values()), "usage": usage, "turns": b.turns, "on_reflection": reflection}
    oracle = None
    if looping:
        loop_idx = b.loop_at if b.loop_at is not None else _loop_turn_index(b.turns, loop_from)
        scenario["loop_from"] = loop_idx
        b.loop_at = loop_idx
        oracle = {
            **scenario,
            "turns": b.oracle_turns(recovery),
            "on_reflection": {**reflection, "recover_probability": 0.0},
        }
        oracle.pop("loop_from")
    elif kind is K.POLL:
        scenario["loop_from"] = len(b.turns) - 1
    elif b.loop_at is not None:  # a legitimate task that goes round its turns until a result ends it (wait_poll)
        scenario["loop_from"] = b.loop_at
    text = _TASK_TEXTS.get(kind, TASK_TEXT).format(id=f"t{i:05d}")
    return Task(
        **common,
        user_turns=[text],
        keys=[expected],
        answer_at=answer_at,
        loop_from_call=loop_from,
        scenario=scenario,
        oracle=oracle,
    )


def _loop_turn_index(turns: list[dict], loop_from_call: int) -> int:
    """The index in ``turns`` of the turn played at model call ``loop_from_call`` (turns may repeat)."""
    call = 0
    for idx, t in enumerate(turns):
        call += t.get("repeat", 1)
        if call >= loop_from_call:
            return idx
    raise ConfigError(f"loop start at model call {loop_from_call} is past the scenario's {call} calls")


def generate(spec: WorkloadSpec | None = None) -> list[Task]:
    """The tasks of ``spec`` (default: 1000 tasks, the default mix), the same for the same spec."""
    spec = spec or WorkloadSpec()
    master = np.random.SeedSequence(spec.seed)
    children = master.spawn(spec.n_tasks + 1)
    kinds = _allocate(spec, np.random.default_rng(children[0]))
    return [_task(i, k, spec, children[i + 1]) for i, k in enumerate(kinds)]


def with_recovery(tasks: list[Task], probability: float) -> list[Task]:
    """The same tasks played by agents that react to a reflection with ``probability`` (0: never, 1: always)."""
    if not 0.0 <= probability <= 1.0:
        raise ConfigError(f"recover probability {probability!r} must be in [0, 1]")
    out = []
    for t in tasks:
        sc = json.loads(json.dumps(t.scenario))
        for holder in [sc] + sc.get("conversation", []):
            if "on_reflection" in holder:
                holder["on_reflection"]["recover_probability"] = probability
        out.append(t.model_copy(update={"scenario": sc}))
    return out


def no_recovery(tasks: list[Task]) -> list[Task]:
    """The same tasks played by agents that never react to a reflection (``recover_probability`` 0)."""
    return with_recovery(tasks, 0.0)


def is_success(task: Task, outcome: str, answers: str | list[str] | tuple[str, ...] | None) -> bool:
    """The correct answers were delivered: the run ended ``succeeded`` and its answers (the last answer, or every
    answer of a conversation) hold every answer key of the task."""
    if outcome != "succeeded" or answers is None:
        return False
    text = answers if isinstance(answers, str) else "\n".join(a for a in answers if a)
    return all(k in text for k in task.keys)


def describe(spec: WorkloadSpec, tasks: list[Task]) -> dict[str, Any]:
    """The spec, the realised mix, and the distribution of model calls of legitimate tasks (for the JSON)."""
    counts: dict[str, int] = {k.value: 0 for k in TaskKind}
    for t in tasks:
        counts[t.kind.value] += 1
    legit = np.array([t.answer_at for t in tasks if t.answer_at is not None], dtype=float)
    calls: dict[str, Any] = {}
    if legit.size:
        calls = {
            "median": float(np.median(legit)),
            "p90": float(np.percentile(legit, 90)),
            "p99": float(np.percentile(legit, 99)),
            "max": int(legit.max()),
            **{f"share_over_{n}": round(float((legit > n).mean()), 4) for n in (10, 15, 20, 25, 40)},
        }
    return {
        "spec": json.loads(spec.model_dump_json()),
        "counts": counts,
        "families": {f: [k.value for k in kinds] for f, kinds in FAMILIES.items()},
        "legitimate_answer_call": calls,
        "success": (
            "outcome succeeded and the answers hold every answer key of the task (one per user message); looping "
            "tasks answer only after a reflection"
        ),
    }
