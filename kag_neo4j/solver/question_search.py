"""Single-shot hybrid search for a question: link its mentions, then one fused retrieval.

No LLM is involved: the question's entity mentions (its capitalised spans and quoted strings, or
the builder's NER with ``RetrievalConfig.question_ner``; see :mod:`kag_neo4j.solver.mentions`) are
linked to entities - by exact resolution key, or fuzzily (the recipe's ``seed_linking``) - which
seed Personalized PageRank, and
``procedures/hybrid_retrieval.cypher`` fuses dense, fulltext and PPR ranks in one read. This is
what ``kag-neo4j eval``'s ``ours`` method measures, what ``KAG.search`` returns, and what the
MCP ``search`` tool and the neo4j-graphrag retriever serve.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from kag_neo4j.models.base import Embedder
from kag_neo4j.solver.chunks import RankedChunk
from kag_neo4j.solver.linking import link_entity
from kag_neo4j.solver.mentions import question_mentions
from kag_neo4j.solver.retrieval import RECIPES, RankedList, RetrievalConfig, hybrid_retrieval, ppr_backend, seed_keys
from kag_neo4j.store.runner import QueryRunner

__all__ = ["SearchResult", "recipe", "search"]

class SearchResult(BaseModel):
    """The chunks found for ``question``, best first, and the entities that seeded PageRank."""

    question: str
    chunks: list[RankedChunk]
    mentions: list[str] = Field(default_factory=list)
    seed_entity_ids: list[str] = Field(default_factory=list)
    seed_title_chunk_ids: list[str] = Field(default_factory=list, description=(
        "the first chunks of the documents the mentions title, which seeded PageRank too"))
    ppr_backend: Literal["gds", "cypher"] | None = Field(default=None, description="who ranked by PageRank (None: the recipe has no PPR)")
    warnings: list[str] = Field(default_factory=list, description="what this server's retrieval lacks (e.g. no GDS)")


def recipe(name: str, k: int) -> RetrievalConfig:
    """The named recipe of ``RECIPES`` asked for ``k`` chunks (dense and fulltext fetch at least ``k``;
    PageRank adds its best ``k_ppr`` whatever ``k``: a longer PPR list lowered recall, see ``_HYBRID``)."""
    if name not in RECIPES:
        raise ValueError(f"unknown retrieval recipe {name!r}; choose one of {', '.join(sorted(RECIPES))}")
    base = RECIPES[name]
    return base.model_copy(update={"k": k, "k_dense": max(base.k_dense, k), "k_fulltext": max(base.k_fulltext, k)})


def search(
    runner: QueryRunner,
    embedder: Embedder,
    question: str,
    *,
    k: int = 5,
    recipe_name: str = "hybrid",
    link_k: int = 1,
    extra_lists: Sequence[RankedList] = (),
) -> SearchResult:
    """The top ``k`` chunks for ``question`` with the recipe ``recipe_name`` (read transactions only;
    ``runner`` is a :class:`~kag_neo4j.store.database.Database` or a tracing runner), with
    ``extra_lists`` fused in; ``link_k``: entities per mention when the recipe links fuzzily."""
    if not question.strip():
        raise ValueError("search needs a non-empty question")
    config = recipe(recipe_name, k)
    mentions: list[str] = []
    seeds: list[str] = []
    keys: list[str] = []
    if config.weights.ppr > 0:
        mentions = question_mentions(question, ner=config.question_ner)
        if config.seed_linking == "exact":  # linked inside the retrieval statement (no round trip of its own)
            keys = seed_keys(mentions)
        else:
            for mention in mentions:
                for entity in link_entity(runner, embedder, mention, k=link_k):
                    if entity.id not in seeds:
                        seeds.append(entity.id)
    found = hybrid_retrieval(runner, embedder, question, seed_entity_ids=seeds, seed_keys=keys, config=config,
                             extra_lists=extra_lists)
    chunks = found.chunks
    seeds = seeds or found.linked_entity_ids
    backend = ppr_backend(runner, config) if config.weights.ppr > 0 else None
    return SearchResult(question=question, chunks=chunks, mentions=mentions, seed_entity_ids=seeds,
                        seed_title_chunk_ids=found.titled_chunk_ids, ppr_backend=backend,
                        warnings=runner.capabilities.warnings if backend else [])
