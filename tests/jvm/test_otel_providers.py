"""Every constant of LangChain4j's own ``ModelProvider`` enum (the jar pyguard runs with) has a conventions'
``gen_ai.provider.name`` in pyguard's mapping: a LangChain4j upgrade that adds one fails here."""

from __future__ import annotations

from pyguard.otel.providers import LANGCHAIN4J_PROVIDERS


def test_every_model_provider_constant_is_mapped(jvm):
    import jpype

    names = {str(p.name()) for p in jpype.JClass("dev.langchain4j.model.ModelProvider").values()}
    assert names == set(LANGCHAIN4J_PROVIDERS)
