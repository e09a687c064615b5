"""The chat-model providers kag-neo4j can build, by name: the one list of them.

``KAG_LLM_PROVIDER`` (and ``kag-neo4j eval --llm provider:model``) picks a provider from this
registry. The product registers ``llamacpp`` (offline, the default) and ``openai`` (any
OpenAI-compatible server). Another provider is one function and one call::

    from kag_neo4j.models.providers import LLMOptions, register_llm_provider

    def build_mine(settings, options: LLMOptions):
        return MyLLM(settings.llm_model, **options.as_kwargs())   # a ChatLLM subclass

    register_llm_provider("mine", build_mine)   # then KAG_LLM_PROVIDER=mine

``docs/models.md`` shows a complete example. Test doubles (the scripted LLM) are registered by
the test suite itself, never by the product.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kag_neo4j.errors import ConfigError

if TYPE_CHECKING:
    from kag_neo4j.config import Settings

    from .cache import ResponseStore
    from .chat import ChatLLM, RetryPolicy
    from .usage import Usage


@dataclass(frozen=True)
class LLMOptions:
    """What every provider's model takes besides its own settings."""

    usage: Usage | None
    cache: ResponseStore
    timeout: float
    retry: RetryPolicy
    concurrency: int

    def as_kwargs(self) -> dict[str, Any]:
        return {"usage": self.usage, "cache": self.cache, "timeout": self.timeout, "retry": self.retry,
                "concurrency": self.concurrency}


LLMFactory = Callable[["Settings", LLMOptions], "ChatLLM"]

_LLM_PROVIDERS: dict[str, LLMFactory] = {}


def register_llm_provider(name: str, factory: LLMFactory, *, replace: bool = False) -> None:
    """Make ``factory`` buildable as ``KAG_LLM_PROVIDER=name``."""
    if not name.isidentifier():
        raise ValueError(f"provider name {name!r} must be an identifier (letters, digits, _)")
    if name in _LLM_PROVIDERS and not replace:
        raise ValueError(f"an LLM provider named {name!r} is already registered")
    _LLM_PROVIDERS[name] = factory


def llm_provider_names() -> tuple[str, ...]:
    """The registered provider names, built-ins first."""
    return tuple(_LLM_PROVIDERS)


def llm_factory(name: str) -> LLMFactory:
    """The factory of provider ``name``; a :class:`ConfigError` listing the known ones otherwise."""
    try:
        return _LLM_PROVIDERS[name]
    except KeyError:
        raise ConfigError(
            f"unknown KAG_LLM_PROVIDER {name!r}; use one of {', '.join(_LLM_PROVIDERS)}"
        ) from None


def _llamacpp(settings: Settings, options: LLMOptions) -> ChatLLM:
    from .install import resolve_gguf
    from .llamacpp import LlamaCppLLM

    resolved = resolve_gguf(settings.llm_model, settings.resolved_model_cache, progress=sys.stderr.isatty())
    return LlamaCppLLM(resolved.path, model_id=resolved.model_id, n_ctx=settings.llm_context,
                       n_threads=settings.llm_threads, **options.as_kwargs())


def _openai(settings: Settings, options: LLMOptions) -> ChatLLM:
    from .openai_compat import OpenAICompatLLM

    api_key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    return OpenAICompatLLM(settings.llm_model or "", base_url=settings.llm_base_url, api_key=api_key,
                           **options.as_kwargs())


register_llm_provider("llamacpp", _llamacpp)
register_llm_provider("openai", _openai)
