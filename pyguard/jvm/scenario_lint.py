"""Scenario lint: every tool call a scenario scripts, checked against the agent's real tools.

A scenario is written by hand; the agent's tools are Java ``@Tool`` methods. A call whose tool name or argument name is
misspelt (``{"nme": "blue widget"}``) gives the tool ``null`` and the run goes on with a ``NullPointerException``'s text
as an ordinary tool result: the test passes while testing nothing. :func:`lint_scenario` finds such calls before the
scenario is played, from the tools' LangChain4j ``ToolSpecification`` s (read in the JVM by
:func:`pyguard.jvm.tool_specs.tool_specs`): unknown tools, unknown and missing arguments, and values of the wrong JSON
type, each named with where it is in the file and the closest existing name.

Pure Python: the specifications come in as :class:`ToolSpec` values, so the checks need no JVM.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from pyguard.base.errors import InputError, did_you_mean, value_shown

__all__: list[str] = []

JsonType = Literal["string", "integer", "number", "boolean", "array", "object", "enum", "any"]
"""A parameter's JSON type, as LangChain4j's JSON schema elements give it (``any`` when pyguard cannot tell)."""


class ToolParam(BaseModel):
    """One parameter of a tool: its JSON type and, for an enum, its values."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: JsonType = "any"
    enum: tuple[str, ...] = ()


class ToolSpec(BaseModel):
    """A tool as the model sees it: its name, its parameters and which of them are required."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    params: dict[str, ToolParam] = {}
    required: tuple[str, ...] = ()


class LintProblem(BaseModel):
    """One scripted call that does not fit the agent's tools."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    where: str
    """Where the call is in the scenario, as a JSON path (``turns[2].tool_calls[0]``)."""
    tool: str
    message: str

    def __str__(self) -> str:
        return f"{self.where} ({self.tool}): {self.message}"


class ScenarioLintError(InputError):
    """A scenario scripts calls the agent's tools would not accept; the message lists each, with where it is."""

    def __init__(self, source: str, problems: Sequence[LintProblem]) -> None:
        self.problems = tuple(problems)
        lines = "\n".join(f"  {p}" for p in self.problems)
        super().__init__(
            f"scenario {source} scripts {len(self.problems)} tool call(s) the agent's tools would not accept:\n{lines}\n"
            "Fix the scenario (tool and argument names are the @Tool method's and its parameters')."
        )


_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def lint_scenario(scenario: Mapping[str, Any], tools: Sequence[ToolSpec]) -> list[LintProblem]:
    """Every problem of every tool call scripted anywhere in ``scenario`` (turns, conversations, branches,
    ``try_first``), checked against ``tools``. Arguments taken from earlier results (``arguments_from``) are left
    to the player."""
    by_name = {t.name: t for t in tools}
    problems: list[LintProblem] = []
    for where, call in _scripted_calls(scenario, "$"):
        problems.extend(_check_call(where, call, by_name))
    return problems


def check_scenario(scenario: Mapping[str, Any], tools: Sequence[ToolSpec], *, source: str = "(dict)") -> None:
    """Raise :class:`ScenarioLintError` when :func:`lint_scenario` finds anything."""
    problems = lint_scenario(scenario, tools)
    if problems:
        raise ScenarioLintError(source, problems)


def _scripted_calls(node: Any, where: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each scripted tool call (an object in a ``tool_calls`` list) with its JSON path, depth first, in file order."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            path = f"{where}.{key}"
            if key == "tool_calls" and isinstance(value, list):
                for i, call in enumerate(value):
                    if isinstance(call, Mapping):
                        yield f"{path}[{i}]", call
            elif key != "tools":  # a scenario's own tool definitions are not calls
                yield from _scripted_calls(value, path)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _scripted_calls(item, f"{where}[{i}]")


def _check_call(where: str, call: Mapping[str, Any], tools: Mapping[str, ToolSpec]) -> list[LintProblem]:
    name = str(call.get("name", ""))
    spec = tools.get(name)
    if spec is None:
        known = ", ".join(sorted(tools)) or "none"
        return [LintProblem(where=where, tool=name, message=f"no such tool{did_you_mean(name, tools)}; tools: {known}")]
    arguments = call.get("arguments", {})
    if not isinstance(arguments, Mapping):  # a raw JSON string is the player's business
        return []
    problems = []
    for arg, value in arguments.items():
        param = spec.params.get(arg)
        if param is None:
            hint = did_you_mean(arg, spec.params)
            params = ", ".join(spec.params) or "none"
            problems.append(
                LintProblem(where=where, tool=name, message=f"unknown argument {arg!r}{hint}; parameters: {params}")
            )
        elif not _fits(value, param):
            expected = f"one of {', '.join(param.enum)}" if param.enum else f"a JSON {param.type}"
            problems.append(
                LintProblem(
                    where=where, tool=name, message=f"argument {arg!r} = {value_shown(value)} is not {expected}"
                )
            )
    from_results = call.get("arguments_from")
    taken = list(from_results) if isinstance(from_results, Mapping) else []
    for arg in taken:
        if arg not in spec.params:
            hint = did_you_mean(arg, spec.params)
            problems.append(
                LintProblem(where=where, tool=name, message=f"arguments_from names unknown argument {arg!r}{hint}")
            )
    supplied = set(arguments) | set(taken)
    for arg in spec.required:
        if arg not in supplied:
            problems.append(LintProblem(where=where, tool=name, message=f"required argument {arg!r} is missing"))
    return problems


def _fits(value: Any, param: ToolParam) -> bool:
    if param.type == "any" or value is None:
        return True
    if param.type == "enum":
        return not param.enum or str(value) in param.enum
    if isinstance(value, bool) and param.type in ("integer", "number"):
        return False
    if param.type == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _PY_TYPES[param.type])
