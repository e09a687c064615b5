"""The model interfaces the builder and solver depend on.

Providers (llama.cpp, OpenAI-compatible servers, e5, sentence-transformers, the scripted test
double) implement these protocols; nothing outside ``kag_neo4j.models`` imports a provider SDK.

A chat provider implements one hook, ``_complete(CompletionRequest) -> Completion``
(:class:`~kag_neo4j.models.chat.ChatLLM` does the rest); what a model can do is declared on the
:class:`LLM` protocol (``supports_structured_output``, ``supports_async``, ``usage``), never probed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict, TypeVar, runtime_checkable

from pydantic import BaseModel

from .usage import Usage

if TYPE_CHECKING:
    from typing_extensions import Unpack

M = TypeVar("M", bound=BaseModel)


class ChatMessage(BaseModel):
    """One chat message."""

    role: Literal["system", "user", "assistant"]
    content: str


MessagesLike = Sequence[ChatMessage | Mapping[str, str]]


class CallOptions(TypedDict, total=False):
    """The keyword options of every generation call.

    ``stage`` names the pipeline stage (``extract``, ``plan``, ``judge``, ``answer``...) for token
    accounting; ``max_tokens`` defaults to the model's ``default_max_tokens``; ``temperature`` to 0.
    """

    stage: str
    max_tokens: int | None
    temperature: float


@dataclass(frozen=True)
class CompletionRequest:
    """One request to a provider: everything its ``_complete`` hook needs.

    ``json_schema`` is the JSON schema the reply must follow (None for free text). A provider whose
    ``supports_structured_output`` is true enforces it (a grammar, ``response_format``); otherwise
    ``messages`` already describe it.
    """

    messages: tuple[ChatMessage, ...]
    max_tokens: int
    temperature: float = 0.0
    json_schema: dict[str, Any] | None = None
    timeout: float = 600.0

    def with_messages(self, messages: Sequence[ChatMessage]) -> CompletionRequest:
        return replace(self, messages=tuple(messages))


#: ``Completion.finish_reason`` of a reply a provider stopped because it was looping (the same
#: tokens over and over): what came before the loop is usable, the rest of the budget was saved.
REPETITION = "repetition"


class Completion(BaseModel):
    """One reply, with what it cost. ``finish_reason``: ``stop``, ``length`` (cut off at
    ``max_tokens``), :data:`REPETITION`, or what the provider says."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cached: bool = False
    finish_reason: str | None = None


@runtime_checkable
class LLM(Protocol):
    """A chat model: text out, or a pydantic-validated object out, with its cost accounted.

    ``generate*`` return the value; ``complete*`` return it with the :class:`Completion` (tokens,
    seconds, cached). Every method takes :class:`CallOptions` as keywords.
    """

    model_id: str
    #: the per-stage ledger of calls, tokens, seconds and cache hits
    usage: Usage

    @property
    def supports_structured_output(self) -> bool:
        """Whether the model enforces a JSON schema itself (else the schema is described in the prompt)."""
        ...

    @property
    def supports_async(self) -> bool:
        """Whether the ``a*`` methods are natively async (else they run the sync call in a worker thread)."""
        ...

    def generate(self, messages: MessagesLike, **options: Unpack[CallOptions]) -> str: ...

    def generate_object(self, messages: MessagesLike, response_model: type[M], **options: Unpack[CallOptions]) -> M: ...

    def complete(self, messages: MessagesLike, **options: Unpack[CallOptions]) -> Completion: ...

    def complete_object(
        self, messages: MessagesLike, response_model: type[M], **options: Unpack[CallOptions]
    ) -> tuple[M, Completion]: ...

    async def agenerate(self, messages: MessagesLike, **options: Unpack[CallOptions]) -> str: ...

    async def agenerate_object(
        self, messages: MessagesLike, response_model: type[M], **options: Unpack[CallOptions]
    ) -> M: ...

    async def acomplete(self, messages: MessagesLike, **options: Unpack[CallOptions]) -> Completion: ...

    async def acomplete_object(
        self, messages: MessagesLike, response_model: type[M], **options: Unpack[CallOptions]
    ) -> tuple[M, Completion]: ...

    def close(self) -> None:
        """Release the model or client (a no-op where there is nothing to release)."""
        ...


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

    usage: Usage
