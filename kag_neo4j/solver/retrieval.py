"""Hybrid chunk retrieval inside Neo4j: dense + fulltext + Personalized PageRank, fused by RRF.

The whole retrieval is one parameterized statement, ``procedures/hybrid_retrieval.cypher``; this
module only prepares its parameters (the query vector, an escaped Lucene query, the seeds) and
reads its rows. It runs in a read transaction. When its projection was retired under it (another
process), or lacks a seed written since it was projected, it retries: it reads the dense seeds
first, then projects the graph version read after them, then runs again; if that projection still
lacks a seed (it was taken while the write that bumped its version was being applied), it is
projected again once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from neo4j.exceptions import ClientError
from pydantic import BaseModel, Field

from kag_neo4j.models.base import Embedder
from kag_neo4j.solver.projection import current_projection, is_stale_projection_error
from kag_neo4j.store import cypher
from kag_neo4j.store.database import Database

_LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/]|&&|\|\|)')
_WORD = re.compile(r"\w+", re.UNICODE)
_BOOLEAN_WORDS = {"AND", "OR", "NOT", "TO"}


class RetrievalWeights(BaseModel):
    """Weights of each ranked list in the fusion; 0 switches a list off."""

    dense: float = Field(default=1.0, ge=0)
    fulltext: float = Field(default=1.0, ge=0)
    ppr: float = Field(default=1.0, ge=0)


class RetrievalConfig(BaseModel):
    """A retrieval recipe: data, not code (see ``RECIPES``)."""

    k: int = Field(default=5, ge=1)
    k_dense: int = Field(default=50, ge=1, description="vector-index candidates; the index is approximate, fewer loses recall")
    k_fulltext: int = Field(default=20, ge=1)
    candidate_factor: int = Field(default=2, ge=1, le=20, description=(
        "the vector and fulltext indexes are asked for this many times k_dense / k_fulltext candidates, "
        "so that k_dense / k_fulltext remain once chunks of documents still loading are left out"))
    k_ppr: int = Field(default=20, ge=1)
    dense_seeds: int = Field(default=3, ge=0)
    damping: float = Field(default=0.5, ge=0, lt=1)
    max_iterations: int = Field(default=20, ge=1)
    ppr_pool: int = Field(default=1000, ge=1, description=(
        "PPR chunks are the best k_ppr chunks among the ppr_pool highest-scoring nodes: the other "
        "nodes are never looked up, which keeps PPR's cost flat as the graph grows"))
    rrf_k: int = Field(default=60, ge=1)
    weights: RetrievalWeights = Field(default_factory=RetrievalWeights)


RECIPES: dict[str, RetrievalConfig] = {
    # fulltext at a third of the weight: at weight 1 it lowered MuSiQue R@5 (docs/eval.md)
    "hybrid": RetrievalConfig(weights=RetrievalWeights(dense=1.0, fulltext=0.3, ppr=1.0)),
    "dense": RetrievalConfig(weights=RetrievalWeights(dense=1, fulltext=0, ppr=0)),
    "fulltext": RetrievalConfig(weights=RetrievalWeights(dense=0, fulltext=1, ppr=0)),
    "dense+ppr": RetrievalConfig(weights=RetrievalWeights(dense=1, fulltext=0, ppr=1)),
}


class RankedChunk(BaseModel):
    chunk_id: str
    document_id: str
    title: str | None
    text: str
    score: float
    ranks: dict[str, int] = Field(description="rank of the chunk in each list it appeared in")


def lucene_query(text: str, max_terms: int = 32) -> str:
    """A safe Lucene query for free text: its words, escaped, OR-ed (boolean words lower-cased)."""
    terms: list[str] = []
    for word in _WORD.findall(text):
        if word in _BOOLEAN_WORDS:
            word = word.lower()
        escaped = _LUCENE_SPECIAL.sub(r"\\\1", word)
        if escaped and escaped not in terms:
            terms.append(escaped)
    return " ".join(terms[:max_terms])


def retrieval_params(question: str, seed_entity_ids: Sequence[str], config: RetrievalConfig) -> dict[str, Any]:
    """The procedure's parameters, but for the query vector and the projection name (the PPR chunk
    seeds are the top dense chunks: ``seed_chunk_ids`` None)."""
    return {
        "query_text": lucene_query(question), "seed_entity_ids": list(seed_entity_ids), "seed_chunk_ids": None,
        "k": config.k,
        "k_dense": config.k_dense, "k_fulltext": config.k_fulltext, "k_ppr": config.k_ppr,
        "candidate_factor": config.candidate_factor,
        "dense_seeds": config.dense_seeds, "damping": config.damping, "max_iterations": config.max_iterations,
        "ppr_pool": max(config.ppr_pool, config.k_ppr), "rrf_k": config.rrf_k,
        "weights": config.weights.model_dump(),
    }


def hybrid_retrieve(
    db: Database,
    embedder: Embedder,
    question: str,
    *,
    seed_entity_ids: Sequence[str] = (),
    config: RetrievalConfig | None = None,
    query_vector: Sequence[float] | None = None,
) -> list[RankedChunk]:
    """The top ``config.k`` chunks for ``question``."""
    config = config or RECIPES["hybrid"]
    vector = list(query_vector) if query_vector is not None else embedder.embed_query(question)
    needs_ppr = config.weights.ppr > 0
    params = retrieval_params(question, seed_entity_ids, config)

    used: list[str] = []

    def run(seed_chunk_ids: list[str] | None, incomplete: str | None = None) -> list[dict[str, Any]]:
        graph_name = current_projection(db, incomplete=incomplete) if needs_ppr else ""
        used.append(graph_name)
        return db.read(
            cypher.query("hybrid_retrieval", "procedures"), query_vector=vector,
            graph_name=graph_name, **{**params, "seed_chunk_ids": seed_chunk_ids},
        )

    try:
        rows = run(None)
    except ClientError as exc:
        # another process retired the projection, or a seed was written after it was projected
        if not (needs_ppr and is_stale_projection_error(exc)):
            raise
        # again: the seeds first, then the projection of the version read after them
        seeds = [str(row["id"]) for row in db.read(cypher.query("solver/dense_seeds"), query_vector=vector, **params)]
        try:
            rows = run(seeds)
        except ClientError as again:
            if not is_stale_projection_error(again):
                raise
            # the projection of that version was taken while its last write was being applied
            rows = run(seeds, incomplete=used[-1])
    return [
        RankedChunk(
            chunk_id=row["chunk_id"],
            document_id=row["document_id"],
            title=row["title"],
            text=row["text"],
            score=row["score"],
            ranks={item["list"]: item["rank"] for item in row["ranks"]},
        )
        for row in rows
    ]
