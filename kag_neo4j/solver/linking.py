"""Entity linking: a mention (and optional type) to entity ids, inside Neo4j.

Fulltext over names/aliases/descriptions plus vector similarity on entity embeddings, fused by
RRF (``procedures/link_entities.cypher``); widened through the concept graph when nothing
matches directly (``cypher/solver/concept_widen.cypher``). :func:`link_exact` links only by the
builder's resolution key (``name_key``): what single-shot search seeds PageRank with.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from kag_neo4j.builder.names import name_key
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


def link_exact(runner: QueryRunner, mentions: Sequence[str], *, max_chunks: int | None = None) -> dict[str, list[str]]:
    """mention -> ids of the entities whose resolution key equals the mention's (``The Beatles`` and
    ``beatles`` both key ``beatles``; accents, case, possessive ``'s`` and punctuation do not count),
    leaving out entities mentioned in more than ``max_chunks`` chunks when it is given; a mention
    with no such entity maps to ``[]``. One indexed read for all mentions."""
    keys = {mention: name_key(mention) for mention in mentions}
    found: dict[str, list[str]] = {}
    wanted = sorted({key for key in keys.values() if key})
    for row in runner.query("solver/entities_by_key", keys=wanted, max_chunks=max_chunks) if wanted else []:
        found.setdefault(str(row["key"]), []).append(str(row["id"]))
    return {mention: found.get(key, []) for mention, key in keys.items()}
