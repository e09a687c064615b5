"""The model providers kag-neo4j can build, by name: the one list of them.

``KAG_LLM_PROVIDER`` (and ``kag-neo4j eval --llm provider:model``) picks a chat provider from this
registry, ``KAG_EMBEDDER`` an embedder. The product registers the LLM providers ``llamacpp``
(offline, the default) and ``openai`` (any OpenAI-compatible server), and the embedders ``e5``
(the default), ``sentence-transformers``, ``openai`` and ``hashing``. Every list of names (the
settings' check, the factory's errors, the CLI's help) derives from here. Another provider is one
class and one call::

    from kag_neo4j.models.providers import LLMOptions, register_llm_provider

    def build_mine(settings, options: LLMOptions):
        return MyLLM(model_id=settings.llm_model or "mine", **options.as_kwargs())   # a ChatLLM subclass

    register_llm_provider("mine", build_mine)   # then KAG_LLM_PROVIDER=mine

``examples/custom_llm_provider.py`` is a complete, runnable one. Test doubles (the scripted LLM)
are registered by the test suite itself, never by the product.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kag_neo4j.errors import ConfigError

from .registry import E5_SMALL, KNOWN_DIMENSIONS

if TYPE_CHECKING:
    from kag_neo4j.config import Settings

    from .cache import ResponseStore
    from .chat import ChatLLM, RetryPolicy
    from .embedding import BatchedEmbedder
    from .usage import Usage

_LLM_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")  # also the pattern of Settings.llm_provider
_EMBEDDER_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


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
EmbedderFactory = Callable[["Settings", "Usage | None"], "BatchedEmbedder"]
#: the dimension from the settings alone (no model loaded); None when only the model can tell
DimensionOf = Callable[["Settings"], "int | None"]


@dataclass(frozen=True)
class EmbedderProvider:
    """How to build one embedder, and its dimension without loading it where that is known."""

    build: EmbedderFactory
    dimension: DimensionOf


_LLM_PROVIDERS: dict[str, LLMFactory] = {}
_EMBEDDERS: dict[str, EmbedderProvider] = {}


def _register(registry: dict[str, Any], kind: str, name: str, pattern: re.Pattern[str], entry: Any, replace: bool) -> None:
    if not pattern.match(name):
        raise ValueError(f"{kind} name {name!r} must be an identifier (letters, digits, _)")
    if name in registry and not replace:
        raise ValueError(f"an {kind} named {name!r} is already registered")
    registry[name] = entry


def _lookup(registry: dict[str, Any], setting: str, name: str) -> Any:
    try:
        return registry[name]
    except KeyError:
        raise ConfigError(f"unknown {setting} {name!r}; use one of {', '.join(registry)}") from None


def register_llm_provider(name: str, factory: LLMFactory, *, replace: bool = False) -> None:
    """Make ``factory`` buildable as ``KAG_LLM_PROVIDER=name``."""
    _register(_LLM_PROVIDERS, "LLM provider", name, _LLM_NAME, factory, replace)


def llm_provider_names() -> tuple[str, ...]:
    """The registered provider names, built-ins first."""
    return tuple(_LLM_PROVIDERS)


def llm_factory(name: str) -> LLMFactory:
    """The factory of provider ``name``; a :class:`ConfigError` listing the known ones otherwise."""
    return _lookup(_LLM_PROVIDERS, "KAG_LLM_PROVIDER", name)  # type: ignore[no-any-return]


def register_embedder_provider(
    name: str, build: EmbedderFactory, *, dimension: DimensionOf | None = None, replace: bool = False
) -> None:
    """Make ``build`` buildable as ``KAG_EMBEDDER=name`` (``dimension``: see :class:`EmbedderProvider`)."""
    entry = EmbedderProvider(build=build, dimension=dimension or (lambda settings: settings.embedding_dimensions))
    _register(_EMBEDDERS, "embedder", name, _EMBEDDER_NAME, entry, replace)


def embedder_provider_names() -> tuple[str, ...]:
    """The registered embedder names, built-ins first."""
    return tuple(_EMBEDDERS)


def embedder_provider(name: str) -> EmbedderProvider:
    """The embedder registered as ``name``; a :class:`ConfigError` listing the known ones otherwise."""
    return _lookup(_EMBEDDERS, "KAG_EMBEDDER", name)  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------- built-ins: LLMs
def _llamacpp(settings: Settings, options: LLMOptions) -> ChatLLM:
    from .install import resolve_gguf
    from .llamacpp import LlamaCppLLM

    resolved = resolve_gguf(settings.llm_model, settings.resolved_model_cache, progress=sys.stderr.isatty())
    return LlamaCppLLM(resolved.path, model_id=resolved.model_id, n_ctx=settings.llm_context,
                       n_threads=settings.llm_threads,
                       prefix_cache_mb=settings.llm_prefix_cache_mb, **options.as_kwargs())


def _openai(settings: Settings, options: LLMOptions) -> ChatLLM:
    from .openai_compat import OpenAICompatLLM

    api_key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    return OpenAICompatLLM(settings.llm_model or "", base_url=settings.llm_base_url, api_key=api_key,
                           **options.as_kwargs())


register_llm_provider("llamacpp", _llamacpp)
register_llm_provider("openai", _openai)


# ---------------------------------------------------------------------------------- built-ins: embedders
def _check_e5(settings: Settings) -> None:
    if settings.embedding_dimensions not in (None, E5_SMALL.dimension):
        raise ConfigError(
            f"KAG_EMBEDDING_DIMENSIONS={settings.embedding_dimensions} does not match the e5 embedder "
            f"({E5_SMALL.dimension}); unset it"
        )


def _e5(settings: Settings, usage: Usage | None) -> BatchedEmbedder:
    from .e5 import E5Embedder

    _check_e5(settings)
    return E5Embedder(settings.embedding_model, threads=settings.llm_threads,
                      batch_size=settings.embedding_batch_size, usage=usage)


def _e5_dimension(settings: Settings) -> int:
    from .e5 import check_e5_model

    check_e5_model(settings.embedding_model)
    _check_e5(settings)
    return E5_SMALL.dimension


def _hashing(settings: Settings, usage: Usage | None) -> BatchedEmbedder:
    from .hashing import HashingEmbedder

    return HashingEmbedder(settings.embedding_dimensions, batch_size=settings.embedding_batch_size, usage=usage)


def _hashing_dimension(settings: Settings) -> int:
    from .hashing import DEFAULT_HASHING_DIMENSION

    return settings.embedding_dimensions or DEFAULT_HASHING_DIMENSION


def _sentence_transformers(settings: Settings, usage: Usage | None) -> BatchedEmbedder:
    from .sentence_transformers import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(settings.embedding_model, dimension=settings.embedding_dimensions,
                                       threads=settings.llm_threads, batch_size=settings.embedding_batch_size,
                                       usage=usage)


def _sentence_transformers_dimension(settings: Settings) -> int | None:
    from .sentence_transformers import resolve_sentence_model

    if settings.embedding_dimensions:
        return settings.embedding_dimensions
    return KNOWN_DIMENSIONS.get(resolve_sentence_model(settings.embedding_model)[1])


def _openai_embedder(settings: Settings, usage: Usage | None) -> BatchedEmbedder:
    from .chat import RetryPolicy
    from .openai_compat import OpenAIEmbedder

    secret = settings.embedding_api_key or settings.llm_api_key
    return OpenAIEmbedder(
        settings.embedding_model,
        base_url=settings.embedding_base_url or settings.llm_base_url,
        api_key=secret.get_secret_value() if secret else None,
        dimensions=settings.embedding_dimensions,
        batch_size=settings.embedding_batch_size,
        timeout=settings.llm_timeout,
        retry=RetryPolicy(max_retries=settings.llm_max_retries),
        usage=usage,
    )


def _openai_dimension(settings: Settings) -> int | None:
    return settings.embedding_dimensions or KNOWN_DIMENSIONS.get(settings.embedding_model or "text-embedding-3-small")


register_embedder_provider("e5", _e5, dimension=_e5_dimension)
register_embedder_provider("sentence-transformers", _sentence_transformers, dimension=_sentence_transformers_dimension)
register_embedder_provider("openai", _openai_embedder, dimension=_openai_dimension)
register_embedder_provider("hashing", _hashing, dimension=_hashing_dimension)
