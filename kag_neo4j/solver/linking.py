"""Entity linking: a mention (and optional type) to entity ids, inside Neo4j.

Fulltext over names/aliases/descriptions plus vector similarity on entity embeddings, fused by
RRF (``procedures/link_entities.cypher``); widened through the concept graph when nothing
matches directly (``cypher/solver/concept_widen.cypher``).
"""

from __future__ import annotations

from pydantic import BaseModel

from kag_neo4j.models.base import Embedder
from kag_neo4j.store.lucene import lucene_terms
from kag_neo4j.store.runner import QueryRunner


class LinkedEntity(BaseModel):
    id: str
    name: str
    types: list[str] = []
    description: str | None = None
    aliases: list[str] = []
    score: float
    via: str = "entity"


def link_entity(
    runner: QueryRunner,
    embedder: Embedder,
    mention: str,
    *,
    type_name: str | None = None,
    k: int = 3,
    min_similarity: float = 0.8,
) -> list[LinkedEntity]:
    """The best entities for ``mention``; the type filter is dropped when it finds nothing."""
    params = {
        "mention": mention,
        "mention_query": lucene_terms(mention),
        "mention_vector": embedder.embed_query(mention),
        "k_candidates": max(10, k * 3),
        "min_similarity": min_similarity,
        "rrf_k": 60,
        "k": k,
    }
    rows = runner.query("link_entities", "procedures", type=type_name, **params)
    if not rows and type_name is not None:
        rows = runner.query("link_entities", "procedures", type=None, **params)
    linked = [LinkedEntity(**row) for row in rows]
    if linked:
        return linked
    widened = runner.query("solver/concept_widen", mention_query=params["mention_query"], k=k)
    return [
        LinkedEntity(id=row["id"], name=row["name"], score=0.0, via=f"concept:{row['concept']}")
        for row in widened
    ]
