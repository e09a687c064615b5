"""The vectoriser: de-duplication, float32 rounding, the persistent cache."""

from __future__ import annotations

from pathlib import Path

from kag_neo4j.builder.records import ChunkRecord
from kag_neo4j.builder.vectorise import VectorCache, Vectoriser, chunk_text
from kag_neo4j.models.hashing import HashingEmbedder


def test_duplicates_are_embedded_once_and_vectors_are_float32(tmp_path: Path) -> None:
    embedder = HashingEmbedder(64)
    vectoriser = Vectoriser(embedder, VectorCache(tmp_path / "v.sqlite"))
    a, b, a2 = vectoriser.embed(["alpha", "beta", "alpha"])
    assert a == a2 and a != b
    assert vectoriser.stats.computed == 2
    import array

    assert a == array.array("f", a).tolist()  # already float32-exact


def test_the_cache_survives_a_new_vectoriser(tmp_path: Path) -> None:
    first = Vectoriser(HashingEmbedder(64), VectorCache(tmp_path / "v.sqlite"))
    vectors = first.embed(["alpha", "beta"])
    first.close()
    second = Vectoriser(HashingEmbedder(64), VectorCache(tmp_path / "v.sqlite"))
    assert second.embed(["beta", "alpha"]) == vectors[::-1]
    assert second.stats.computed == 0 and second.stats.cached == 2
    other_model = Vectoriser(HashingEmbedder(32), VectorCache(tmp_path / "v.sqlite"))
    assert len(other_model.embed(["alpha"])[0]) == 32  # keyed by model id


def test_chunk_text_carries_the_heading_path() -> None:
    chunk = ChunkRecord(id="d#0#0", document_id="d", text="Body.", title="Doc", title_path=["Doc", "Part 1"],
                        position=0, paragraph=0, index=0)
    assert chunk_text(chunk) == "Doc / Part 1\nBody."
    bare = chunk.model_copy(update={"title_path": [], "title": ""})
    assert chunk_text(bare) == "Body."
