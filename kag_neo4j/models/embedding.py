"""The shared machinery behind every embedder: input checks, batching, dimension checks, usage."""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

from kag_neo4j.errors import ModelError

from .usage import Usage


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, (str, bytes)):
        raise TypeError("embed_documents takes a list of strings, not one string; use embed_query for a single text")
    result = list(texts)
    for index, text in enumerate(result):
        if not isinstance(text, str):
            raise TypeError(f"texts[{index}] must be a string, got {type(text).__name__}")
    return result


class BatchedEmbedder(ABC):
    """Base class of the embedders; implements the :class:`~kag_neo4j.models.base.Embedder` protocol.

    A provider implements :meth:`_embed` for one batch. ``dimension`` is known (or probed once)
    before any vector index is created.
    """

    provider: ClassVar[str] = "abstract"

    def __init__(
        self,
        *,
        model_id: str,
        dimension: int | None = None,
        batch_size: int = 32,
        usage: Usage | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model_id = model_id
        self._dimension = dimension
        self.batch_size = batch_size
        self.usage = usage if usage is not None else Usage()

    def load(self) -> object:
        """Load the model now, where there is one to load (otherwise the first call does)."""
        return None

    @abstractmethod
    def _embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        """Embed one batch (``query`` selects the query-side encoding where the model has one)."""

    def _probe_dimension(self) -> int:
        """The dimension when it is not known up front (default: embed one short text)."""
        return len(self._embed(["dimension probe"], query=False)[0])

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = self._probe_dimension()
        return self._dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        items = _check_texts(texts)
        vectors: list[list[float]] = []
        for start in range(0, len(items), self.batch_size):
            vectors.extend(self._timed(items[start : start + self.batch_size], query=False, stage="embed"))
        return vectors

    def embed_query(self, text: str) -> list[float]:
        if not isinstance(text, str):
            raise TypeError(f"embed_query takes a string, got {type(text).__name__}")
        return self._timed([text], query=True, stage="embed_query")[0]

    async def aembed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await asyncio.to_thread(self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        return await asyncio.to_thread(self.embed_query, text)

    def _timed(self, batch: list[str], *, query: bool, stage: str) -> list[list[float]]:
        started = time.monotonic()
        try:
            vectors = self._embed(batch, query=query)
        except Exception:
            self.usage.record_failure(stage, seconds=time.monotonic() - started)
            raise
        self.usage.record_call(stage, seconds=time.monotonic() - started, items=len(batch))
        if len(vectors) != len(batch):
            raise ModelError(f"{self.provider} embedder {self.model_id!r} returned {len(vectors)} vectors for {len(batch)} texts")
        expected = self.dimension
        for vector in vectors:
            if len(vector) != expected:
                raise ModelError(
                    f"{self.provider} embedder {self.model_id!r} returned a {len(vector)}-d vector, expected {expected}; "
                    "fix KAG_EMBEDDING_DIMENSIONS to match the model"
                )
        return vectors

    def close(self) -> None:
        """Release the model or client (optional)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_id={self.model_id!r}, dimension={self._dimension})"
