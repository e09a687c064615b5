"""Vectors for chunks, entities and concepts: batched, de-duplicated and cached.

Every vector goes through float32 (the precision Neo4j stores it in), whether it was just
computed or read from the cache, so a resumed load sees exactly the vectors an uninterrupted
one saw. The on-disk cache (SQLite, keyed by model id + sha256 of the text) makes a re-run or
a resumed load embed nothing twice.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kag_neo4j.builder.aligned_document import AlignedDocument
from kag_neo4j.builder.concepts import Taxonomy
from kag_neo4j.builder.records import ChunkRecord
from kag_neo4j.errors import ModelError
from kag_neo4j.models.base import Embedder


def _f32(vector: Iterable[float]) -> list[float]:
    return array("f", vector).tolist()


def _digest(model_id: str, text: str) -> str:
    return hashlib.sha256(f"{model_id}\x00{text}".encode()).hexdigest()


class VectorCache:
    """A persistent text -> vector cache (SQLite, WAL)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, dim INTEGER NOT NULL, data BLOB NOT NULL)")

    def get_many(self, keys: Sequence[str]) -> dict[str, list[float]]:
        found: dict[str, list[float]] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                part = list(keys[start : start + 500])
                marks = ",".join("?" * len(part))
                for key, _dim, data in self._db.execute(f"SELECT key, dim, data FROM vectors WHERE key IN ({marks})", part):
                    found[key] = array("f", data).tolist()
        return found

    def put_many(self, items: dict[str, list[float]]) -> None:
        if not items:
            return
        rows = [(key, len(vector), array("f", vector).tobytes()) for key, vector in items.items()]
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO vectors (key, dim, data) VALUES (?, ?, ?)", rows)
            self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._db.close()


@dataclass
class VectorStats:
    texts: int = 0
    computed: int = 0
    cached: int = 0


def chunk_text(chunk: ChunkRecord) -> str:
    """What a chunk's vector is made from: its heading path (or title) and its text."""
    heading = " / ".join(part for part in chunk.title_path if part) or chunk.title
    if heading and not chunk.text.startswith(heading):
        return f"{heading}\n{chunk.text}"
    return chunk.text


class Vectoriser:
    """Embeds texts through ``embedder`` with de-duplication, a memory cache and ``cache``."""

    def __init__(self, embedder: Embedder, cache: VectorCache | None = None, *, memory_items: int = 50_000) -> None:
        self.embedder = embedder
        self.cache = cache
        self.memory_items = memory_items
        self._memory: dict[str, list[float]] = {}
        self.stats = VectorStats()

    @property
    def dimension(self) -> int:
        return self.embedder.dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One float32-rounded vector per text (duplicates embedded once)."""
        model = self.embedder.model_id
        keys = [_digest(model, text) for text in texts]
        self.stats.texts += len(texts)
        missing = [k for k in dict.fromkeys(keys) if k not in self._memory]
        if missing and self.cache is not None:
            found = self.cache.get_many(missing)
            self.stats.cached += len(found)
            self._remember(found)
            missing = [k for k in missing if k not in found]
        if missing:
            text_of = dict(zip(keys, texts))
            fresh = self.embedder.embed_documents([text_of[k] for k in missing])
            if len(fresh) != len(missing):
                raise ModelError(f"embedder {model!r} returned {len(fresh)} vectors for {len(missing)} texts")
            computed = {k: _f32(v) for k, v in zip(missing, fresh)}
            self.stats.computed += len(computed)
            if self.cache is not None:
                self.cache.put_many(computed)
            self._remember(computed)
        return [self._memory[k] for k in keys]

    def _remember(self, items: dict[str, list[float]]) -> None:
        if len(self._memory) + len(items) > self.memory_items:
            self._memory.clear()
        self._memory.update(items)

    def vectorise(self, documents: Sequence[AlignedDocument]) -> None:
        """Fill chunk vectors, and vectors of new entities and concepts that have none yet."""
        chunks = [chunk for doc in documents for chunk in doc.chunks]
        if chunks:
            vectors = self.embed([chunk_text(chunk) for chunk in chunks])
            position = 0
            for doc in documents:
                for chunk in doc.chunks:
                    doc.chunk_vectors[chunk.id] = vectors[position]
                    position += 1
        entities = [node for doc in documents for node in doc.entities.values() if not node.existing and node.embedding is None]
        if entities:
            for node, vector in zip(entities, self.embed([node.name for node in entities])):
                node.embedding = vector
        concepts = [c for doc in documents for c in doc.concepts.values() if c.embedding is None]
        if concepts:
            for concept, vector in zip(concepts, self.embed([c.name for c in concepts])):
                concept.embedding = vector

    def warm(self, documents: Sequence[AlignedDocument]) -> None:
        """Embed ahead every text :meth:`vectorise` and the resolver may ask for (chunks, every
        entity and concept name), so that a load replacing documents meets an embedder failure
        before it deletes their old versions."""
        texts = [chunk_text(chunk) for doc in documents for chunk in doc.chunks]
        texts += [node.name for doc in documents for node in doc.entities.values()]
        texts += [concept.name for doc in documents for concept in doc.concepts.values()]
        if texts:
            self.embed(texts)

    def taxonomy_vectors(self, taxonomy: Taxonomy) -> dict[str, list[float]]:
        """concept id -> vector of ``name: description`` (just the name when there is none)."""
        concepts = list(taxonomy.concepts.values())
        texts = [f"{c.name}: {c.description}" if c.description else c.name for c in concepts]
        return {c.id: v for c, v in zip(concepts, self.embed(texts))}

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()
