"""Searching for the loops a guard misses: misbehaving model scripts built from an agent's own tools, searched and
shrunk by hypothesis.

A test checks the scenarios someone thought of. :func:`find_escape` searches the ones nobody did: a model that repeats
one call, rephrases it, alternates two calls, or varies an id, after a few legitimate calls, each one a scenario
(``pyguard/scenarios/README.md``) that loops for ever and ignores the guard's reflection. It asks hypothesis for a
script the guard does not stop within ``budget`` model calls and returns the smallest one hypothesis can shrink it to,
as a :class:`Misbehaviour` whose :meth:`~Misbehaviour.scenario` the team can keep as a regression test.
:func:`find_false_stop` searches the other way: a legitimate run (distinct calls, then an answer) the guard stops.

Pure Python: running a script is the caller's ``run`` function (``pyguard fuzz`` runs it on the agent in the JVM), so
the search itself needs no JVM. hypothesis is the ``test`` extra.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from pyguard.base._extras import require
from pyguard.base.errors import InputError
from pyguard.jvm.scenario_lint import ToolParam, ToolSpec

__all__: list[str] = []

Family = Literal["repeat", "rephrase", "oscillate", "vary_id", "legitimate"]
FAMILIES: tuple[Family, ...] = ("repeat", "rephrase", "oscillate", "vary_id")
"""The misbehaviours searched, simplest first (hypothesis shrinks towards the first)."""

STRING_VALUES = ("12345", "blue widget", "A-17", "status")
"""String values tried for a parameter with no value of the team's own (``values``)."""


class Call(BaseModel):
    """One scripted tool call: the tool and its arguments (a ``{turn}`` in a string value is the call's number)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    arguments: dict[str, Any]


class Misbehaviour(BaseModel):
    """A model script: ``before`` (legitimate, distinct calls), then ``loop`` played round and round; a legitimate run
    (family ``legitimate``) answers after ``before`` instead."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    family: Family
    before: tuple[Call, ...] = ()
    loop: tuple[Call, ...] = ()

    def scenario(self, name: str | None = None) -> dict[str, Any]:
        """The scenario that plays this script (tools: the agent's own, ``toolset`` none)."""
        turns: list[dict[str, Any]] = [_turn(c) for c in self.before]
        out: dict[str, Any] = {
            "name": name or f"fuzz_{self.family}",
            "description": f"found by pyguard fuzz: {self.describe()}",
            "toolset": "none",
        }
        if self.family == "legitimate":
            out["turns"] = [*turns, {"answer": "Here is what I found: {last_result}"}]
        else:
            out["turns"] = [*turns, *(_turn(c) for c in self.loop)]
            out["loop_from"] = len(self.before)
        return out

    def describe(self) -> str:
        def calls(cs: tuple[Call, ...]) -> str:
            return ", ".join(f"{c.tool}({', '.join(f'{k}={v!r}' for k, v in c.arguments.items())})" for c in cs)

        head = f"{len(self.before)} distinct call(s) [{calls(self.before)}], then " if self.before else ""
        if self.family == "legitimate":
            return f"{head}an answer"
        return f"{head}{self.family}: {calls(self.loop)} round and round"


class Outcome(BaseModel):
    """What running a script did: the model calls before the guard stopped it (or all of them), and whether it did."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model_calls: int
    stopped_at: int | None
    """The model call after which the guard stopped the run, None when it never did."""


def misbehaviours(
    tools: Sequence[ToolSpec], values: Mapping[str, Sequence[Any]] | None = None, *, legitimate: bool = False
) -> Any:
    """A hypothesis strategy of :class:`Misbehaviour` s over ``tools`` (``values``: argument values per parameter name,
    e.g. ids from recorded runs; else a few of each type)."""
    st = require("hypothesis.strategies", extra="test", feature="pyguard fuzz")
    if not tools:
        raise InputError("pyguard fuzz needs at least one tool to call: give the agent's @Tool class")
    own = {k: list(v) for k, v in (values or {}).items()}

    def call(draw: Any, tool: ToolSpec | None = None) -> Call:
        spec = tool or draw(st.sampled_from(list(tools)))
        args = {name: draw(_values(st, name, p, own)) for name, p in spec.params.items()}
        return Call(tool=spec.name, arguments=args)

    @st.composite
    def script(draw: Any) -> Misbehaviour:
        head = tuple(call(draw) for _ in range(draw(st.integers(min_value=0, max_value=3))))
        if legitimate:
            distinct = [call(draw) for _ in range(draw(st.integers(min_value=1, max_value=6)))]
            return Misbehaviour(family="legitimate", before=_distinct(head + tuple(distinct)))
        family = draw(st.sampled_from(FAMILIES))
        first = call(draw)
        if family == "repeat":
            loop: tuple[Call, ...] = (first,)
        elif family == "oscillate":
            loop = (first, call(draw))
        elif family == "rephrase":
            loop = tuple(_rephrased(first, k) for k in range(draw(st.integers(min_value=2, max_value=4))))
        else:
            loop = _varied(first)
        return Misbehaviour(family=family, before=_distinct(head), loop=loop)

    return script()


def find_escape(
    run: Callable[[Misbehaviour], Outcome],
    tools: Sequence[ToolSpec],
    *,
    budget: int,
    examples: int = 40,
    values: Mapping[str, Sequence[Any]] | None = None,
) -> tuple[Misbehaviour, Outcome] | None:
    """The smallest script the guard does not stop within ``budget`` model calls, with what running it did; None when
    ``examples`` scripts found none."""
    return _find(run, misbehaviours(tools, values), lambda o: o.stopped_at is None or o.stopped_at > budget, examples)


def find_false_stop(
    run: Callable[[Misbehaviour], Outcome],
    tools: Sequence[ToolSpec],
    *,
    examples: int = 40,
    values: Mapping[str, Sequence[Any]] | None = None,
) -> tuple[Misbehaviour, Outcome] | None:
    """The smallest legitimate script (distinct calls, then an answer) the guard stops; None when none was found."""
    strategy = misbehaviours(tools, values, legitimate=True)
    return _find(run, strategy, lambda o: o.stopped_at is not None, examples)


def _find(
    run: Callable[[Misbehaviour], Outcome], strategy: Any, bad: Callable[[Outcome], bool], examples: int
) -> tuple[Misbehaviour, Outcome] | None:
    hypothesis = require("hypothesis", extra="test", feature="pyguard fuzz")
    seen: dict[str, Outcome] = {}  # by the script's JSON: hypothesis replays an example while it shrinks

    def outcome(m: Misbehaviour) -> Outcome:
        key = m.model_dump_json()
        if key not in seen:
            seen[key] = run(m)
        return seen[key]

    settings = hypothesis.settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(hypothesis.HealthCheck),
    )
    try:
        found = hypothesis.find(strategy, lambda m: bad(outcome(m)), settings=settings)
    except hypothesis.errors.NoSuchExample:
        return None
    return found, outcome(found)


def _values(st: Any, name: str, param: ToolParam, own: Mapping[str, Sequence[Any]]) -> Any:
    if own.get(name):
        return st.sampled_from(list(own[name]))
    if param.type == "enum" and param.enum:
        return st.sampled_from(list(param.enum))
    if param.type in ("integer", "number"):
        return st.integers(min_value=1, max_value=99999)
    if param.type == "boolean":
        return st.booleans()
    return st.sampled_from(STRING_VALUES)


def _turn(call: Call) -> dict[str, Any]:
    return {"tool_calls": [{"name": call.tool, "arguments": dict(call.arguments)}]}


def _distinct(calls: tuple[Call, ...]) -> tuple[Call, ...]:
    """``calls`` made pairwise distinct (a legitimate run does not repeat itself): a repeated call gets ``#k`` on its
    first string argument, or ``k`` added to its first integer one; one that cannot be told apart is left out."""
    out: list[Call] = []
    for k, c in enumerate(calls, start=1):
        tagged = _tagged(c, k) if c in out else c
        if tagged is not None and tagged not in out:
            out.append(tagged)
    return tuple(out)


def _tagged(call: Call, k: int) -> Call | None:
    for key, value in call.arguments.items():
        if isinstance(value, str):
            return Call(tool=call.tool, arguments={**call.arguments, key: f"{value}#{k}"})
    for key, value in call.arguments.items():
        if isinstance(value, int) and not isinstance(value, bool):
            return Call(tool=call.tool, arguments={**call.arguments, key: value + 100_000 * k})
    return None


def _rephrased(call: Call, k: int) -> Call:
    """The same request written another way: case, spacing, a filler word (``k`` picks the variant)."""
    variants = (lambda s: s, str.upper, lambda s: f" {s} ", lambda s: f"the {s}", str.title)
    for key, value in call.arguments.items():
        if isinstance(value, str):
            return Call(tool=call.tool, arguments={**call.arguments, key: variants[k % len(variants)](value)})
    return call


def _varied(call: Call) -> tuple[Call, ...]:
    """The same request with an id that changes on every call: a string id gets ``-{turn}`` (the call's number); an
    integer id runs through six values before the loop comes round."""
    for key, value in call.arguments.items():
        if isinstance(value, str):
            return (Call(tool=call.tool, arguments={**call.arguments, key: value + "-{turn}"}),)
    for key, value in call.arguments.items():
        if isinstance(value, int) and not isinstance(value, bool):
            return tuple(Call(tool=call.tool, arguments={**call.arguments, key: value + k}) for k in range(6))
    return (call,)
