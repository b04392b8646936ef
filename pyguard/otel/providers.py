"""``gen_ai.provider.name`` as the GenAI semantic conventions spell it, from LangChain4j's ``ModelProvider`` names.

The sensor reports LangChain4j's enum name (``OPEN_AI``, ``AMAZON_BEDROCK``, ...). The conventions list well-known
values (``openai``, ``anthropic``, ``aws.bedrock``, ``azure.ai.openai``, ``azure.ai.inference``, ``gcp.gemini``,
``gcp.vertex_ai``, ``gcp.gen_ai``, ``mistral_ai``, ``cohere``, ``ibm.watsonx.ai``, ...) that MUST be used for those
providers, and let others report a custom value. Choices where LangChain4j's name is not one of them:

- ``GOOGLE_AI_GEMINI`` (the Gemini API) -> ``gcp.gemini``; ``GOOGLE_VERTEX_AI_GEMINI`` and
  ``GOOGLE_VERTEX_AI_ANTHROPIC`` (both served by Vertex AI) -> ``gcp.vertex_ai``; ``GOOGLE_GENAI`` (the Google Gen AI
  SDK, either endpoint) -> ``gcp.gen_ai`` ("any Google generative AI endpoint").
- ``GITHUB_MODELS`` and ``MICROSOFT_FOUNDRY`` (both the Azure AI model inference API) -> ``azure.ai.inference``.
- ``OLLAMA``, ``VOYAGE_AI``, ``JINA``: not listed by the conventions -> the custom values ``ollama``, ``voyage_ai``,
  ``jina``.
- ``OTHER`` (LangChain4j does not know; pyguard's scripted model) -> ``_OTHER``, the conventions' spelling of "none
  of the listed values".

A value that is not a LangChain4j name (an imported recording's ``openai``) is kept as it is, lower-cased.
"""

from __future__ import annotations

__all__: list[str] = []

OTHER = "_OTHER"

LANGCHAIN4J_PROVIDERS: dict[str, str] = {
    "ANTHROPIC": "anthropic",
    "AMAZON_BEDROCK": "aws.bedrock",
    "GITHUB_MODELS": "azure.ai.inference",
    "AZURE_OPEN_AI": "azure.ai.openai",
    "GOOGLE_AI_GEMINI": "gcp.gemini",
    "GOOGLE_GENAI": "gcp.gen_ai",
    "GOOGLE_VERTEX_AI_GEMINI": "gcp.vertex_ai",
    "GOOGLE_VERTEX_AI_ANTHROPIC": "gcp.vertex_ai",
    "MICROSOFT_FOUNDRY": "azure.ai.inference",
    "MISTRAL_AI": "mistral_ai",
    "OLLAMA": "ollama",
    "OPEN_AI": "openai",
    "WATSONX": "ibm.watsonx.ai",
    "COHERE": "cohere",
    "VOYAGE_AI": "voyage_ai",
    "JINA": "jina",
    "OTHER": OTHER,
}
"""Every ``dev.langchain4j.model.ModelProvider`` constant of LangChain4j 1.19 -> ``gen_ai.provider.name``."""


def provider_name(value: str | None) -> str | None:
    """The conventions' ``gen_ai.provider.name`` for a sensor's or a recording's provider (None stays None)."""
    if value is None or not value.strip():
        return None
    return LANGCHAIN4J_PROVIDERS.get(value.strip(), value.strip().lower())
