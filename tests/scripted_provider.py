"""The test suite's own LLM provider: ``KAG_LLM_PROVIDER=scripted`` with ``KAG_LLM_MODEL`` naming a
JSON/JSONL file of responses. Registered by ``tests/conftest.py`` for the tests only; the product
never offers it (``kag_neo4j.models.providers`` lists the real providers)."""

from __future__ import annotations

from kag_neo4j.config import Settings
from kag_neo4j.errors import ConfigError
from kag_neo4j.models.chat import ChatLLM
from kag_neo4j.models.providers import LLMOptions, llm_provider_names, register_llm_provider
from kag_neo4j.models.scripted import ScriptedLLM

NAME = "scripted"


def build_scripted(settings: Settings, options: LLMOptions) -> ChatLLM:
    if not settings.llm_model:
        raise ConfigError("KAG_LLM_PROVIDER=scripted is a test double: set KAG_LLM_MODEL to a .json/.jsonl file of responses")
    return ScriptedLLM.from_file(settings.llm_model, **options.as_kwargs())


def register() -> None:
    if NAME not in llm_provider_names():
        register_llm_provider(NAME, build_scripted)
