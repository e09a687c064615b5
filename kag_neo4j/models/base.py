"""The model interfaces the builder and solver depend on.

Providers (llama.cpp, OpenAI-compatible servers, e5, sentence-transformers, the scripted test
double) implement these protocols; nothing outside ``kag_neo4j.models`` imports a provider SDK.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


class ChatMessage(BaseModel):
    """One chat message."""

    role: Literal["system", "user", "assistant"]
    content: str


@runtime_checkable
class LLM(Protocol):
    """A chat model: text out, or a pydantic-validated object out.

    ``stage`` names the pipeline stage (``extract``, ``plan``, ``judge``, ``answer``...) for
    token accounting.
    """

    model_id: str

    def generate(
        self,
        messages: Sequence[ChatMessage],
        *,
        stage: str = "default",
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> str: ...

    def generate_object(
        self,
        messages: Sequence[ChatMessage],
        response_model: type[M],
        *,
        stage: str = "default",
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> M: ...

    async def agenerate(
        self,
        messages: Sequence[ChatMessage],
        *,
        stage: str = "default",
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> str: ...

    async def agenerate_object(
        self,
        messages: Sequence[ChatMessage],
        response_model: type[M],
        *,
        stage: str = "default",
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> M: ...


@runtime_checkable
class Embedder(Protocol):
    """A text embedder. ``dimension`` is known before any vector index is created."""

    model_id: str

    @property
    def dimension(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


@runtime_checkable
class Accounted(Protocol):
    """A model that keeps a usage ledger (every LLM and embedder in ``kag_neo4j.models`` does).

    ``model.usage`` is a :class:`kag_neo4j.models.usage.Usage`: calls, prompt/completion tokens,
    seconds and cache hits per pipeline stage.
    """

    usage: Any
