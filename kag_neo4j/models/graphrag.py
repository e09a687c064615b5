"""Adapters so neo4j-graphrag (1.22) components can use our models.

``as_graphrag_llm(llm)`` is an ``LLMBase`` (both ``LLMInterface`` and ``LLMInterfaceV2``): it takes
a prompt string (V1) or a list of messages (V2), and ``response_format`` as a pydantic class or a
JSON-schema dict, so ``LLMEntityRelationExtractor(use_structured_output=True)`` works.
``as_graphrag_embedder(embedder)`` is a graphrag ``Embedder``; ``as_kag_embedder(embedder)`` goes the
other way (a graphrag ``Embedder`` as ours, for :mod:`kag_neo4j.graphrag`'s retrievers).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any, NamedTuple

from neo4j_graphrag.embeddings.base import Embedder as GraphragEmbedderBase
from neo4j_graphrag.exceptions import EmbeddingsGenerationError, LLMGenerationError
from neo4j_graphrag.llm.base import LLMBase
from neo4j_graphrag.llm.types import LLMResponse, LLMUsage
from neo4j_graphrag.llm.utils import legacy_inputs_to_messages
from pydantic import BaseModel

from kag_neo4j.errors import KagError

from .base import ChatMessage, Completion, Embedder
from .chat import ChatLLM


def _schema_of(response_format: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema inside an OpenAI-style ``response_format`` dict (or the dict itself)."""
    kind = response_format.get("type")
    if kind == "json_schema" and isinstance(response_format.get("json_schema"), dict):
        return dict(response_format["json_schema"].get("schema") or {"type": "object"})
    if kind == "json_object":
        return dict(response_format.get("schema") or {"type": "object"})
    return dict(response_format)


def _usage(completion: Completion) -> LLMUsage:
    return LLMUsage(
        request_tokens=completion.prompt_tokens,
        response_tokens=completion.completion_tokens,
        total_tokens=completion.prompt_tokens + completion.completion_tokens,
    )


def _text_response(completion: Completion) -> LLMResponse:
    return LLMResponse(content=completion.text, usage=_usage(completion))


def _object_response(result: tuple[BaseModel, Completion]) -> LLMResponse:
    return LLMResponse(content=result[0].model_dump_json(), usage=_usage(result[1]))


def _json_response(result: tuple[Any, Completion]) -> LLMResponse:
    return LLMResponse(content=json.dumps(result[0], ensure_ascii=False), usage=_usage(result[1]))


class _Route(NamedTuple):
    """How one ``response_format`` is served: the sync call, its async twin, the response it becomes."""

    call: Callable[..., Any]
    acall: Callable[..., Awaitable[Any]]
    respond: Callable[[Any], LLMResponse]


class GraphragLLM(LLMBase):
    """One of our LLMs behind neo4j-graphrag's LLM interfaces (V1 and V2)."""

    supports_structured_output = True

    def __init__(self, llm: ChatLLM, *, stage: str = "graphrag", max_tokens: int | None = None) -> None:
        super().__init__(model_name=llm.model_id)
        self.llm = llm
        self.stage = stage
        self.max_tokens = max_tokens

    def _messages(
        self, input: Any, message_history: Any, system_instruction: str | None
    ) -> list[ChatMessage]:
        raw = legacy_inputs_to_messages(input, message_history=message_history, system_instruction=system_instruction)
        return [ChatMessage(role=m["role"], content=m["content"]) for m in raw]

    def _options(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        return {
            "stage": kwargs.get("stage", self.stage),
            "max_tokens": kwargs.get("max_tokens", self.model_params.get("max_tokens", self.max_tokens)),
            "temperature": kwargs.get("temperature", self.model_params.get("temperature", 0.0)),
        }

    def _route(self, response_format: type[BaseModel] | dict[str, Any] | None) -> _Route:
        llm = self.llm
        if response_format is None:
            return _Route(llm.complete, llm.acomplete, _text_response)
        if isinstance(response_format, type) and issubclass(response_format, BaseModel):
            model = response_format
            return _Route(partial(llm.complete_object, response_model=model),
                          partial(llm.acomplete_object, response_model=model), _object_response)
        if isinstance(response_format, dict):
            schema = _schema_of(response_format)
            return _Route(partial(llm.generate_json, schema=schema), partial(llm.agenerate_json, schema=schema),
                          _json_response)
        raise LLMGenerationError(f"unsupported response_format {response_format!r} for {type(llm).__name__}")

    def invoke(
        self,
        input: str | list[Any],
        message_history: Any = None,
        system_instruction: str | None = None,
        response_format: type[BaseModel] | dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> LLMResponse:
        route = self._route(response_format)
        try:
            return route.respond(route.call(self._messages(input, message_history, system_instruction),
                                            **self._options(kwargs)))
        except KagError as exc:
            raise LLMGenerationError(str(exc)) from exc

    async def ainvoke(
        self,
        input: str | list[Any],
        message_history: Any = None,
        system_instruction: str | None = None,
        response_format: type[BaseModel] | dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> LLMResponse:
        route = self._route(response_format)
        try:
            return route.respond(await route.acall(self._messages(input, message_history, system_instruction),
                                                   **self._options(kwargs)))
        except KagError as exc:
            raise LLMGenerationError(str(exc)) from exc


class GraphragEmbedder(GraphragEmbedderBase):
    """One of our embedders behind neo4j-graphrag's ``Embedder`` interface."""

    def __init__(self, embedder: Embedder) -> None:
        super().__init__()
        self.embedder = embedder

    @property
    def dimension(self) -> int:
        return self.embedder.dimension

    def embed_query(self, text: str) -> list[float]:
        try:
            return self.embedder.embed_query(text)
        except KagError as exc:
            raise EmbeddingsGenerationError(str(exc)) from exc

    async def async_embed_query(self, text: str) -> list[float]:
        return await asyncio.to_thread(self.embed_query, text)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        try:
            return self.embedder.embed_documents(texts)
        except KagError as exc:
            raise EmbeddingsGenerationError(str(exc)) from exc


def as_graphrag_llm(llm: ChatLLM, *, stage: str = "graphrag", max_tokens: int | None = None) -> GraphragLLM:
    """Wrap ``llm`` for neo4j-graphrag components (``stage`` labels its usage)."""
    return GraphragLLM(llm, stage=stage, max_tokens=max_tokens)


def as_graphrag_embedder(embedder: Embedder) -> GraphragEmbedder:
    """Wrap ``embedder`` for neo4j-graphrag components (retrievers, ``TextChunkEmbedder``)."""
    return GraphragEmbedder(embedder)


class KagEmbedder:
    """A neo4j-graphrag ``Embedder`` behind our :class:`~kag_neo4j.models.base.Embedder` protocol.

    neo4j-graphrag embedders embed queries only: documents are embedded one by one, and the
    dimension is that of a first embedding (read once, when asked).
    """

    def __init__(self, embedder: GraphragEmbedderBase) -> None:
        self.embedder = embedder
        self.model_id = f"graphrag:{type(embedder).__name__}"
        self._dimension: int | None = None

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = len(self.embed_query("dimension"))
        return self._dimension

    def embed_query(self, text: str) -> list[float]:
        return list(self.embedder.embed_query(text))

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]


def as_kag_embedder(embedder: Embedder | GraphragEmbedderBase) -> Embedder:
    """Ours as it is (or unwrapped from :class:`GraphragEmbedder`); a graphrag ``Embedder`` wrapped."""
    if isinstance(embedder, GraphragEmbedder):
        return embedder.embedder
    if isinstance(embedder, GraphragEmbedderBase):
        return KagEmbedder(embedder)
    if isinstance(embedder, Embedder):
        return embedder
    raise TypeError(
        f"an embedder must implement kag_neo4j.models.Embedder or neo4j_graphrag.embeddings.Embedder, "
        f"got {type(embedder).__name__}; build one with kag_neo4j.models.build_embedder(settings)"
    )
