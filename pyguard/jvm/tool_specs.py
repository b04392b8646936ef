"""The agent's tools as the model sees them: LangChain4j's ``ToolSpecification`` s of ``@Tool`` classes or objects,
read into :class:`pyguard.jvm.scenario_lint.ToolSpec` values (name, parameters with their JSON types, required).

``ToolSpecifications.toolSpecificationsFrom`` is what AiServices itself calls on the objects given to ``.tools(...)``,
so the names and parameters are exactly those the model is offered.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pyguard.base.errors import InputError
from pyguard.jvm._java import jclass
from pyguard.jvm.scenario_lint import JsonType, ToolParam, ToolSpec

__all__: list[str] = []

_SCHEMA_TYPES: dict[str, JsonType] = {
    "JsonStringSchema": "string",
    "JsonIntegerSchema": "integer",
    "JsonNumberSchema": "number",
    "JsonBooleanSchema": "boolean",
    "JsonArraySchema": "array",
    "JsonObjectSchema": "object",
    "JsonEnumSchema": "enum",
}


def tool_specs(tools: Any | Iterable[Any]) -> list[ToolSpec]:
    """The ``ToolSpec`` of every ``@Tool`` method of ``tools``: a Java object, a Java class, a fully qualified class
    name, or a list of them. Needs the JVM (``pyguard.start_jvm()``)."""
    items = list(tools) if isinstance(tools, (list, tuple)) else [tools]
    specifications = jclass("dev.langchain4j.agent.tool.ToolSpecifications")
    out: list[ToolSpec] = []
    for item in items:
        target = jclass(item) if isinstance(item, str) else item
        found = list(specifications.toolSpecificationsFrom(target))
        if not found:
            raise InputError(f"{item!r} has no @Tool method: give the class or object your agent passes to tools(...)")
        out.extend(_spec(s) for s in found)
    return out


def _spec(specification: Any) -> ToolSpec:
    schema = specification.parameters()
    params: dict[str, ToolParam] = {}
    required: tuple[str, ...] = ()
    if schema is not None:
        for name, element in dict(schema.properties()).items():
            params[str(name)] = _param(element)
        required = tuple(str(r) for r in (schema.required() or []))
    return ToolSpec(name=str(specification.name()), params=params, required=required)


def _param(element: Any) -> ToolParam:
    kind = _SCHEMA_TYPES.get(str(element.getClass().getSimpleName()), "any")
    if kind == "enum":
        return ToolParam(type="enum", enum=tuple(str(v) for v in element.enumValues()))
    return ToolParam(type=kind)
