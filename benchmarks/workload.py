"""A seeded generator of task scenarios for the frontier benchmark, modelled on what is reported from production.

Each :class:`Task` is one scenario dict in the format the Java ``ScriptedChatModel`` plays (see
``java/src/main/java/dev/pyguard/bridge/scripted/Scenario.java``) plus what the benchmark needs to judge it: its
kind, its correct answer (a unique key such as ``ANS-3f2a9c01``) and where its loop starts, if it loops.

The mix (:class:`WorkloadSpec` defaults; counts are allocated exactly, then shuffled):

- 70% tasks that converge, every call bringing new information:
  - ``converge`` (56%): ``n`` productive model calls, ``n`` lognormal with median 5 and sigma 0.8 (about 3% past 20,
    0.5% past 40), 20% of them with two tool calls at once; records with shared field names, new values, and a
    volatile ``fetched_at`` time; then the answer;
  - ``poll`` (7%): start a job, then poll the same call with identical arguments, its result changing every time
    (progress, rows, a volatile check time) until ``DONE`` (2 + geometric polls, median ~6, up to 40), then answer;
  - ``paginate`` (7%): the same listing tool, page 1..P (P = 2 + geometric, median ~5), new rows each page, then answer.
- 30% low-information tasks, each after a productive prefix of 0-3 calls; they never answer on their own:
  - ``oscillate`` (10%): the same lookup again and again, identical arguments, then arguments equal once normalised
    (``12345`` / ``SO-12345``), or two lookups alternating (a cycle); the result never changes;
  - ``diverge`` (10%): a new search query every call, bringing back near-identical boilerplate;
  - ``stall`` (10%): new queries every call, every result empty.

How agents react to a reflection (``on_reflection``): with probability ``recover_probability`` (0.6) the agent
answers at once with what it has. For a looping task that answer is the correct one (it already has what it needs:
the status it keeps re-reading, the facts of its prefix, or "nothing can be found"). For a task still making
progress (converge, poll, paginate) an answer "with what it has" is premature, so it is *wrong*: a false reflection
costs a task. :func:`no_recovery` gives the same tasks with agents that never react to a reflection (probability 0).

Success (:func:`is_success`): the run ended ``succeeded`` and its answer contains the task's answer key. A looping
task therefore succeeds only if it recovered after a reflection; a stopped or capped run never succeeds.
"""

from __future__ import annotations

import json
from enum import Enum
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pyguard.engine.config import config_error
from pyguard.errors import ConfigError

__all__ = ["TaskKind", "LEGITIMATE", "LOOPING", "WorkloadSpec", "Task", "generate", "no_recovery", "is_success", "describe"]


class TaskKind(str, Enum):
    CONVERGE = "converge"
    POLL = "poll"
    PAGINATE = "paginate"
    OSCILLATE = "oscillate"
    DIVERGE = "diverge"
    STALL = "stall"


LEGITIMATE = (TaskKind.CONVERGE, TaskKind.POLL, TaskKind.PAGINATE)
LOOPING = (TaskKind.OSCILLATE, TaskKind.DIVERGE, TaskKind.STALL)

_DEFAULT_MIX = {
    TaskKind.CONVERGE: 0.56, TaskKind.POLL: 0.07, TaskKind.PAGINATE: 0.07,
    TaskKind.OSCILLATE: 0.10, TaskKind.DIVERGE: 0.10, TaskKind.STALL: 0.10,
}


class WorkloadSpec(BaseModel):
    """What to generate. Every field is recorded in the benchmark's JSON (:func:`describe`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_tasks: int = Field(default=1000, ge=1)
    seed: int = 20240601
    """Master seed: task i gets the i-th child of ``numpy.random.SeedSequence(seed)``."""
    mix: dict[TaskKind, float] = Field(default_factory=lambda: dict(_DEFAULT_MIX))
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
    def _check_mix(self) -> "WorkloadSpec":
        total = sum(self.mix.values())
        if abs(total - 1.0) > 1e-6 or any(v < 0 for v in self.mix.values()):
            raise ValueError(f"workload mix {self.mix!r} must be non-negative shares summing to 1 (they sum to {total})")
        return self


class Task(BaseModel):
    """One generated task: its scenario and how to judge it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    kind: TaskKind
    seed: int
    """The Java player's seed (its random choices: reflection recovery)."""
    expected: str
    """The answer key: a run succeeded only if its answer contains it."""
    answer_at: int | None
    """For legitimate tasks, the model call that answers (1-based); None for looping tasks (they never answer alone)."""
    loop_from_call: int | None
    """For looping tasks, the model call whose response starts the loop (1-based); None otherwise."""
    scenario: dict[str, Any]

    @property
    def looping(self) -> bool:
        return self.kind in LOOPING


# ---- text generation ----------------------------------------------------------------------------------------------

_WORDS = (
    "alpha amber atlas birch cedar cobalt delta ember falcon garnet harbor indigo juniper kepler lumen maple nectar "
    "onyx pixel quartz raven sable tundra umber vector willow xenon yarrow zephyr basalt canyon dune estuary fjord "
    "glacier heath island jetty karst lagoon mesa nebula oasis prairie quarry ridge savanna terrace upland valley"
).split()
_CITIES = ["Newark", "Memphis", "Louisville", "Reno", "Dallas", "Ontario", "Allentown", "Indianapolis", "Atlanta", "Tacoma"]
_STATUS = ["IN_TRANSIT", "HELD", "DELIVERED", "PENDING", "EXCEPTION", "RETURNED", "PICKED", "PACKED"]
_TOOLS = {
    "get_order": "orderId", "get_customer": "customerId", "get_invoice": "invoiceId", "search_docs": "query",
    "query_inventory": "sku", "get_shipment": "trackingNumber", "read_file": "path", "get_ticket": "ticketId",
}
_FIELDS = ["owner", "region", "status", "amount", "carrier", "warehouse", "note", "priority", "sku", "qty", "due",
           "contact", "tier", "channel", "batch", "reason"]


def _words(rng: np.random.Generator, n: int) -> str:
    return " ".join(rng.choice(_WORDS, size=n))


def _iso(rng: np.random.Generator) -> str:
    return f"2024-{rng.integers(1, 13):02d}-{rng.integers(1, 29):02d}T{rng.integers(0, 24):02d}:{rng.integers(0, 60):02d}:{rng.integers(0, 60):02d}Z"


def _ident(rng: np.random.Generator, prefix: str) -> str:
    return f"{prefix}{rng.integers(10000, 99999)}"


def _record(rng: np.random.Generator, key: str) -> str:
    """A JSON-ish record: fixed field names, new values, a volatile fetch time; 150-900 characters."""
    fields = rng.choice(_FIELDS, size=int(rng.integers(4, 10)), replace=False)
    body = {"id": key}
    for f in fields:
        if f in ("amount", "qty"):
            body[str(f)] = int(rng.integers(1, 5000))
        elif f == "status":
            body[str(f)] = str(rng.choice(_STATUS))
        elif f in ("region", "warehouse"):
            body[str(f)] = str(rng.choice(_CITIES))
        else:
            body[str(f)] = _words(rng, int(rng.integers(2, 14)))
    body["fetched_at"] = _iso(rng)
    return json.dumps(body)


def _geometric_extra(rng: np.random.Generator, base: int, p: float, cap: int) -> int:
    return int(min(cap, base + rng.geometric(p) - 1))


# ---- task builders ------------------------------------------------------------------------------------------------


class _Builder:
    """Accumulates turns and tools of one scenario."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.turns: list[dict] = []
        self.tools: dict[str, dict] = {}

    def _tool(self, name: str, param: str, **how: Any) -> dict:
        t = self.tools.get(name)
        if t is None:
            t = {"name": name, "description": f"{name.replace('_', ' ')} by {param}", "parameters": {param: "string"}, **how}
            self.tools[name] = t
        return t

    def productive(self, n_calls: int, parallel_share: float) -> None:
        """``n_calls`` model calls, each requesting 1 (or 2) lookups with fresh arguments and fresh results."""
        for _ in range(n_calls):
            calls = []
            for _ in range(2 if self.rng.random() < parallel_share else 1):
                name = str(self.rng.choice(list(_TOOLS)))
                param = _TOOLS[name]
                t = self._tool(name, param, by_argument={"name": param, "values": {}, "default": "not found"})
                key = _ident(self.rng, name.split("_")[-1][:3].upper() + "-")
                while key in t["by_argument"]["values"]:
                    key = _ident(self.rng, name.split("_")[-1][:3].upper() + "-")
                t["by_argument"]["values"][key] = _record(self.rng, key)
                calls.append({"name": name, "arguments": {param: key}})
            self.turns.append({"tool_calls": calls})


def _converge(b: _Builder, spec: WorkloadSpec, expected: str) -> tuple[int, None]:
    n = int(np.clip(round(b.rng.lognormal(np.log(spec.converge_median_calls), spec.converge_sigma)), 1, spec.max_productive_calls))
    b.productive(n, spec.parallel_call_share)
    b.turns.append({"answer": f"Done: I checked {n} sources. Final answer {expected}.", "output_tokens": 60})
    return n + 1, None


def _poll(b: _Builder, spec: WorkloadSpec, expected: str) -> tuple[int, None]:
    rng = b.rng
    polls = _geometric_extra(rng, 2, 0.22, 40)
    job = _ident(rng, "exp-")
    total = int(rng.integers(500, 50000))
    cuts = np.sort(rng.choice(np.arange(1, 99), size=polls - 1, replace=False)) if polls > 1 else np.array([], int)
    results = [f"job {job}: RUNNING {p}% ({total * p // 100} of {total} rows), checked at {_iso(rng)}" for p in cuts]
    results.append(f"job {job}: DONE, {total} rows written to exports/{_words(rng, 1)}.csv, checked at {_iso(rng)}")
    b.tools["start_export"] = {"name": "start_export", "description": "start an export job", "parameters": {"query": "string"},
                               "results": [f"export job {job} started for {total} rows"]}
    b.tools["check_export"] = {"name": "check_export", "description": "check an export job", "parameters": {"jobId": "string"},
                               "results": results}
    b.turns.append({"tool_calls": [{"name": "start_export", "arguments": {"query": _words(rng, 3)}}]})
    b.turns.append({"tool_calls": [{"name": "check_export", "arguments": {"jobId": job}}],
                    "on_result": [{"contains": "DONE", "then": {"answer": f"The export finished: {{last_result}}. Final answer {expected}."}}]})
    return polls + 2, None


def _paginate(b: _Builder, spec: WorkloadSpec, expected: str) -> tuple[int, None]:
    rng = b.rng
    pages = _geometric_extra(rng, 2, 0.25, 40)
    values = {}
    for p in range(1, pages + 1):
        rows = "; ".join(f"{_ident(rng, '')} {rng.choice(_STATUS).lower()} {_words(rng, 2)}" for _ in range(int(rng.integers(3, 9))))
        values[str(p)] = f"page {p}/{pages}: {rows}"
    b.tools["list_orders"] = {"name": "list_orders", "description": "list delayed orders", "parameters": {"page": "integer"},
                              "by_argument": {"name": "page", "values": values, "default": "no such page"}}
    for p in range(1, pages + 1):
        b.turns.append({"tool_calls": [{"name": "list_orders", "arguments": {"page": p}}]})
    b.turns.append({"answer": f"I read all {pages} pages. Final answer {expected}.", "output_tokens": 60})
    return pages + 1, None


def _prefix(b: _Builder, spec: WorkloadSpec) -> int:
    n = int(b.rng.choice([0, 1, 2, 3], p=[0.25, 0.35, 0.25, 0.15]))
    b.productive(n, spec.parallel_call_share)
    return n


def _oscillate(b: _Builder, spec: WorkloadSpec, expected: str) -> tuple[None, int]:
    rng = b.rng
    start = _prefix(b, spec)
    oid = str(rng.integers(10000, 99999))
    status = f"Order {oid}: status {rng.choice(_STATUS)}, last scan {rng.choice(_CITIES)} hub, carrier {_words(rng, 1)}."
    b.tools["get_status"] = {"name": "get_status", "description": "shipment status", "parameters": {"orderId": "string"}, "results": [status]}
    pattern = rng.choice(["identical", "normalised", "cycle"])
    if pattern == "identical":
        b.turns.append({"tool_calls": [{"name": "get_status", "arguments": {"orderId": oid}}]})
    elif pattern == "normalised":
        r = int(rng.integers(1, 4))
        b.turns.append({"tool_calls": [{"name": "get_status", "arguments": {"orderId": oid}}], "repeat": r})
        b.turns.append({"tool_calls": [{"name": "get_status", "arguments": {"orderId": f"SO-{oid}"}}], "repeat": r})
    else:
        eta = f"Carrier ETA for {oid}: {rng.integers(1, 9)} days, route via {rng.choice(_CITIES)}."
        b.tools["get_eta"] = {"name": "get_eta", "description": "carrier ETA", "parameters": {"orderId": "string"}, "results": [eta]}
        b.turns.append({"tool_calls": [{"name": "get_status", "arguments": {"orderId": oid}}]})
        b.turns.append({"tool_calls": [{"name": "get_eta", "arguments": {"orderId": oid}}]})
    return None, start + 1


def _diverge(b: _Builder, spec: WorkloadSpec, expected: str) -> tuple[None, int]:
    rng = b.rng
    start = _prefix(b, spec)
    titles = [f"'{_words(rng, 2).title()} ({rng.choice(['general', 'faq', 'policy'])})'" for _ in range(5)]
    results = [f"No article matches {{args}} exactly. Related: {', '.join(rng.choice(titles, size=2, replace=False))}."
               for _ in range(120)]
    b.tools["search_kb"] = {"name": "search_kb", "description": "search the knowledge base", "parameters": {"query": "string"},
                            "results": results}
    topic = _words(rng, 2)
    for phrasing in ("why is {t} failing case {{turn}}", "{t} root cause attempt {{turn}}", "{t} known issue {{turn}}",
                     "how to fix {t} variant {{turn}}"):
        b.turns.append({"tool_calls": [{"name": "search_kb", "arguments": {"query": phrasing.format(t=topic)}}]})
    return None, start + 1


def _stall(b: _Builder, spec: WorkloadSpec, expected: str) -> tuple[None, int]:
    rng = b.rng
    start = _prefix(b, spec)
    empty = str(rng.choice(['{"items": [], "total": 0}', "No matching records found.", "[]", "0 rows returned."]))
    b.tools["query_logs"] = {"name": "query_logs", "description": "query logs in a time window", "parameters": {"window": "string"},
                             "results": [empty]}
    b.tools["query_events"] = {"name": "query_events", "description": "query events by filter", "parameters": {"filter": "string"},
                               "results": [empty]}
    svc = _words(rng, 1)
    b.turns.append({"tool_calls": [{"name": "query_logs", "arguments": {"window": "last {turn} hours " + svc}}]})
    b.turns.append({"tool_calls": [{"name": "query_events", "arguments": {"filter": f"service={svc} page={{turn}}"}}]})
    return None, start + 1


_BUILD = {
    TaskKind.CONVERGE: _converge, TaskKind.POLL: _poll, TaskKind.PAGINATE: _paginate,
    TaskKind.OSCILLATE: _oscillate, TaskKind.DIVERGE: _diverge, TaskKind.STALL: _stall,
}


def _allocate(spec: WorkloadSpec, rng: np.random.Generator) -> list[TaskKind]:
    """Exactly ``round(share * n)`` tasks per kind (largest remainders), in a shuffled order."""
    kinds = list(spec.mix)
    raw = np.array([spec.mix[k] * spec.n_tasks for k in kinds])
    counts = np.floor(raw).astype(int)
    for i in np.argsort(-(raw - counts))[: spec.n_tasks - counts.sum()]:
        counts[i] += 1
    out = [k for k, c in zip(kinds, counts) for _ in range(c)]
    rng.shuffle(out)
    return out


def _task(i: int, kind: TaskKind, spec: WorkloadSpec, seq: np.random.SeedSequence) -> Task:
    rng = np.random.default_rng(seq)
    seed = int(rng.integers(1, 2**62))
    expected = f"ANS-{rng.integers(0, 2**32):08x}"
    b = _Builder(rng)
    answer_at, loop_from = _BUILD[kind](b, spec, expected)
    looping = kind in LOOPING
    answer = (f"I have what I can get; I will stop here. Final answer {expected}." if looping
              else "Based on what I found so far: {last_result}")
    scenario = {
        "name": f"{kind.value}-{i:05d}",
        "description": f"frontier workload task {i} ({kind.value}), seed {spec.seed}",
        "seed": seed,
        "toolset": "scenario",
        "tools": list(b.tools.values()),
        "usage": {"report": True, "base_input_tokens": spec.base_input_tokens, "chars_per_token": spec.chars_per_token,
                  "output_tokens": spec.output_tokens},
        "turns": b.turns,
        "on_reflection": {"recover_probability": spec.recover_probability, "answer": answer},
    }
    if looping:
        scenario["loop_from"] = _loop_turn_index(b.turns, loop_from)
    elif kind is TaskKind.POLL:
        scenario["loop_from"] = len(b.turns) - 1
    return Task(id=f"t{i:05d}", kind=kind, seed=seed, expected=expected, answer_at=answer_at, loop_from_call=loop_from,
                scenario=scenario)


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


def no_recovery(tasks: list[Task]) -> list[Task]:
    """The same tasks played by agents that never react to a reflection (``recover_probability`` 0)."""
    out = []
    for t in tasks:
        sc = json.loads(json.dumps(t.scenario))
        sc["on_reflection"]["recover_probability"] = 0.0
        out.append(t.model_copy(update={"scenario": sc}))
    return out


def is_success(task: Task, outcome: str, answer: str | None) -> bool:
    """The correct answer was delivered: the run ended ``succeeded`` and its answer holds the task's key."""
    return outcome == "succeeded" and answer is not None and task.expected in answer


def describe(spec: WorkloadSpec, tasks: list[Task]) -> dict[str, Any]:
    """The spec, the realised mix, and the distribution of model calls of legitimate tasks (for the JSON)."""
    counts: dict[str, int] = {k.value: 0 for k in TaskKind}
    for t in tasks:
        counts[t.kind.value] += 1
    legit = np.array([t.answer_at for t in tasks if t.answer_at is not None], dtype=float)
    calls: dict[str, Any] = {}
    if legit.size:
        calls = {
            "median": float(np.median(legit)), "p90": float(np.percentile(legit, 90)), "p99": float(np.percentile(legit, 99)),
            "max": int(legit.max()), **{f"share_over_{n}": round(float((legit > n).mean()), 4) for n in (10, 15, 20, 25, 40)},
        }
    return {
        "spec": json.loads(spec.model_dump_json()),
        "counts": counts,
        "legitimate_answer_call": calls,
        "success": "outcome succeeded and the answer contains the task's answer key; looping tasks answer only after a reflection",
    }
