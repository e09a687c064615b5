from __future__ import annotations

import math

import pytest

from kag_neo4j.models import Embedder, HashingEmbedder
from kag_neo4j.models.hashing import hash_vector


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_protocol_dimension_and_unit_vectors() -> None:
    embedder = HashingEmbedder()
    assert isinstance(embedder, Embedder)
    assert embedder.dimension == 256
    vectors = embedder.embed_documents(["Real Madrid was founded in 1902.", "长江是亚洲最长的河流。", ""])
    assert [len(v) for v in vectors] == [256, 256, 256]
    for vector in vectors:
        assert math.isclose(math.sqrt(sum(x * x for x in vector)), 1.0, rel_tol=1e-9)


def test_deterministic_across_instances() -> None:
    text = "Cristiano Ronaldo played for Real Madrid."
    assert HashingEmbedder().embed_query(text) == HashingEmbedder().embed_query(text)
    # pinned values guard against accidental changes of the feature scheme (stored vectors would drift)
    pinned = [-0.301511, 0.0, 0.0, -0.301511, -0.301511, 0.301511, 0.0, 0.0,
              -0.301511, 0.0, -0.603023, -0.301511, 0.0, 0.0, 0.301511, 0.0]
    assert [round(x, 6) for x in hash_vector("abc", 16)] == pinned


def test_lexically_similar_texts_are_closer_in_english_and_chinese() -> None:
    embedder = HashingEmbedder(dimension=512)
    q = embedder.embed_query("When was Real Madrid founded?")
    near, far = embedder.embed_documents(["Real Madrid was founded in 1902.", "The Nile flows through Egypt."])
    assert _cos(q, near) > _cos(q, far)
    zq = embedder.embed_query("皇家马德里何时成立？")
    znear, zfar = embedder.embed_documents(["皇家马德里于1902年成立。", "尼罗河流经埃及。"])
    assert _cos(zq, znear) > _cos(zq, zfar)


def test_configurable_dimension_and_batching() -> None:
    embedder = HashingEmbedder(dimension=64, batch_size=2)
    texts = [f"text {i}" for i in range(5)]
    assert len(embedder.embed_documents(texts)) == 5
    assert embedder.usage.stage("embed").calls == 3
    assert embedder.usage.stage("embed").items == 5
    assert embedder.model_id == "hashing-char-ngram-64"
    with pytest.raises(ValueError, match="at least 8"):
        HashingEmbedder(dimension=4)


def test_input_checks() -> None:
    embedder = HashingEmbedder()
    assert embedder.embed_documents([]) == []
    with pytest.raises(TypeError, match="not one string"):
        embedder.embed_documents("abc")
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        embedder.embed_documents(["a", 3])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="string"):
        embedder.embed_query(None)  # type: ignore[arg-type]
