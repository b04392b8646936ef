"""A user's Java agent factory, found by name and checked before any run: ``public static <Agent> create(ChatModel)``.

    factory = load_factory("com.example.logistics.LogisticsAgentFactory", "create", call="chat")
    agent = factory.build(chat_model)           # the user's agent around any Java LangChain4j ChatModel
    answer = factory.ask(agent, "Where is order 12345?")

Every way a name can be wrong gets an :class:`~pyguard.base.errors.InputError` naming the value and what to do: a class
that is not on the classpath, a method that does not exist, is not static, or does not take a ``ChatModel``, an
agent without a ``call(String)`` method.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyguard.base.errors import InputError
from pyguard.jvm._java import jclass

__all__: list[str] = []


@dataclass(frozen=True)
class UserFactory:
    """A checked factory: :meth:`build` makes the agent, :meth:`ask` sends it one user message."""

    class_name: str
    method: str
    call: str
    java_class: Any
    agent_type: str

    def build(self, model: Any) -> Any:
        return getattr(self.java_class, self.method)(model)

    def ask(self, agent: Any, message: str) -> str | None:
        out = getattr(agent, self.call)(message)
        return None if out is None else str(out)


def _signature(m: Any) -> str:
    params = ", ".join(str(p.getSimpleName()) for p in m.getParameterTypes())
    static = "static " if jclass("java.lang.reflect.Modifier").isStatic(m.getModifiers()) else ""
    return f"{static}{m.getReturnType().getSimpleName()} {m.getName()}({params})"


def load_factory(class_name: str, method: str = "create", *, call: str = "chat") -> UserFactory:
    """Find ``class_name.method`` on the running JVM's classpath and check its signature and the agent's ``call``."""
    import jpype

    try:
        cls = jpype.JClass(class_name)
    except (TypeError, ImportError, jpype.JException):
        raise InputError(
            f"factory class {class_name!r} is not on the classpath; check the name, build your "
            "agent (e.g. `mvn package`) and list its jar or target/classes directory and its dependencies in the task "
            "file's classpath"
        ) from None
    Modifier = jclass("java.lang.reflect.Modifier")
    ChatModel = jclass("dev.langchain4j.model.chat.ChatModel")
    jcls = cls.class_
    named = [m for m in jcls.getMethods() if str(m.getName()) == method]
    if not named:
        statics = sorted({str(m.getName()) for m in jcls.getMethods() if Modifier.isStatic(m.getModifiers())})
        raise InputError(
            f"factory method {class_name}.{method} does not exist (public methods only); set factory.method to one of"
            f" its public static methods: {', '.join(statics) or 'none'}"
        )
    fits = [
        m
        for m in named
        if Modifier.isStatic(m.getModifiers())
        and m.getParameterCount() == 1
        and m.getParameterTypes()[0].isAssignableFrom(ChatModel.class_)
    ]
    if not fits:
        found = "; ".join(_signature(m) for m in named)
        raise InputError(
            f"factory method {class_name}.{method} has the wrong signature ({found}): it must be"
            f" `public static <Agent> {method}(ChatModel model)`; add such a method (it may call your other factory"
            " methods)"
        )
    agent_type = fits[0].getReturnType()
    string = jclass("java.lang.String").class_
    calls = [
        m
        for m in agent_type.getMethods()
        if str(m.getName()) == call and m.getParameterCount() == 1 and m.getParameterTypes()[0].isAssignableFrom(string)
    ]
    if not calls:
        methods = sorted({str(m.getName()) for m in agent_type.getMethods() if m.getParameterCount() == 1})
        raise InputError(
            f"the agent {class_name}.{method} returns ({agent_type.getName()}) has no public method {call}(String);"
            f" set factory.call to the method that takes the user's message (one-argument methods: "
            f"{', '.join(methods) or 'none'})"
        )
    return UserFactory(class_name, method, call, cls, str(agent_type.getName()))
