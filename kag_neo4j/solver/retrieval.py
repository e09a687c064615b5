"""Hybrid chunk retrieval inside Neo4j: dense + fulltext + Personalized PageRank, fused by RRF.

The whole retrieval is one parameterized statement, ``procedures/hybrid_retrieval.cypher``; this
module only prepares its parameters (the query vector, an escaped Lucene query, the seeds, and the
resolution keys whose entities seed PageRank too: exact linking inside the same read) and reads its rows. It runs in a read transaction. When its projection was retired under it (another
process), or lacks a seed written since it was projected, it retries: it reads the dense seeds
first, then projects the graph version read after them, then runs again; if that projection still
lacks a seed (it was taken while the write that bumped its version was being applied), it is
projected again once.

PageRank has two backends (``RetrievalConfig.ppr_backend``): ``gds``, exact PPR over the GDS
projection (above), and ``cypher``, a local PPR pushed over the seeds' neighbourhood in plain
Cypher (``procedures/hybrid_retrieval_local.cypher``, reference :mod:`kag_neo4j.solver.local_ppr`),
which needs no projection and no plugin. ``auto`` takes :data:`DEFAULT_PPR_BACKEND` on a server
with GDS and ``cypher`` on one without (``runner.capabilities``, read once per connection).
A recipe without PPR runs the Cypher variant too: it never touches GDS.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, Literal, Protocol

from neo4j.exceptions import ClientError
from pydantic import BaseModel, ConfigDict, Field

from kag_neo4j.builder.names import name_key
from kag_neo4j.errors import KagError
from kag_neo4j.models.base import Embedder
from kag_neo4j.solver.chunks import RankedChunk
from kag_neo4j.solver.projection import current_projection, is_stale_projection_error
from kag_neo4j.store.lucene import lucene_terms
from kag_neo4j.store.runner import QueryRunner

__all__ = [
    "BUILT_IN_LISTS", "DEFAULT_PPR_BACKEND", "RECIPES", "HybridRetrieval", "RankedChunk", "RankedList",
    "RetrievalConfig", "RetrievalError", "RetrievalWeights", "hybrid_retrieval", "hybrid_retrieve", "ppr_backend",
    "retrieval_params", "seed_keys",
]


class RetrievalError(KagError):
    """A retrieval was asked for with something it cannot use (e.g. a badly named custom list)."""


class RetrievalWeights(BaseModel):
    """Weights of each ranked list in the fusion; 0 switches a list off."""

    model_config = ConfigDict(extra="forbid")  # a misspelt knob is an error, not a silent default

    dense: float = Field(default=1.0, ge=0)
    fulltext: float = Field(default=1.0, ge=0)
    ppr: float = Field(default=1.0, ge=0)


class RetrievalConfig(BaseModel):
    """A retrieval recipe: data, not code (see ``RECIPES``)."""

    model_config = ConfigDict(extra="forbid")  # a misspelt knob is an error, not a silent default

    k: int = Field(default=5, ge=1)
    k_dense: int = Field(default=50, ge=1, description="vector-index candidates; the index is approximate, fewer loses recall")
    k_fulltext: int = Field(default=20, ge=1)
    candidate_factor: int = Field(default=2, ge=1, le=20, description=(
        "the vector and fulltext indexes are asked for this many times k_dense / k_fulltext candidates, "
        "so that k_dense / k_fulltext remain once chunks of documents still loading are left out"))
    k_ppr: int = Field(default=20, ge=1)
    dense_seeds: int = Field(default=1, ge=0, description=(
        "the best dense chunks that seed PPR with the linked entities (1 measured best: more pull PPR towards "
        "the dense list, benchmarks/results/retrieval-recall.md)"))
    damping: float = Field(default=0.5, ge=0, lt=1)
    max_iterations: int = Field(default=10, ge=1, description=(
        "PageRank iterations; at damping 0.5 ten give the recall of twenty at half the cost"))
    ppr_pool: int = Field(default=1000, ge=1, description=(
        "PPR chunks are the best k_ppr chunks among the ppr_pool highest-scoring nodes: the other "
        "nodes are never looked up, which keeps PPR's cost flat as the graph grows"))
    ppr_backend: Literal["auto", "gds", "cypher"] = Field(default="auto", description=(
        "who computes Personalized PageRank: 'gds' over the whole GDS projection "
        "(procedures/hybrid_retrieval.cypher), 'cypher' over the seeds' neighbourhood in plain Cypher "
        "(procedures/hybrid_retrieval_local.cypher, no projection), 'auto' the measured default "
        "(DEFAULT_PPR_BACKEND) when the server has GDS, else 'cypher'"))
    ppr_hops: int = Field(default=4, ge=0, le=6, description=(
        "'cypher' backend: hops the seeds' mass is pushed (4 measured best on MuSiQue: 3 reaches the chunks of "
        "a dense seed's entities but not the next ones, benchmarks/results/latency-figures.md)"))
    ppr_frontier: int = Field(default=100, ge=1, description=(
        "'cypher' backend: the nodes with the most mass kept at each hop (bounds the cost by the "
        "neighbourhood, not the graph)"))
    ppr_last_frontier: int = Field(default=200, ge=1, description=(
        "'cypher' backend: the nodes kept at the hop before the last push (the one that moves mass onto chunks): "
        "the frontier that decides the ranking most. 200 there and ppr_frontier (100) elsewhere gave top-10 "
        "agreement with exact PageRank of 0.916 on 2Wiki (6.7k chunks) against 0.866, for about 1 ms; 200 at every hop "
        "the same agreement for about 4 ms (BENCHMARKS.md, 'The frontier before the last push')"))
    ppr_frontier_per_degree: bool = Field(default=True, description=(
        "'cypher' backend: keep at each hop the nodes with the most mass per relationship (mass / (mentions + 1), "
        "the order of push-style local PageRank) instead of the most mass: top-5 agreement with exact PageRank "
        "0.892 -> 0.920 on 2Wiki (6.7k chunks) for 1 ms, the recall of exact PageRank on the three dev sets "
        "(BENCHMARKS.md, 'Local PageRank's frontier')"))
    rrf_k: int = Field(default=60, ge=1)
    seed_linking: Literal["exact", "fuzzy"] = Field(default="exact", description=(
        "how single-shot search (kag_neo4j.solver.question_search) links the question's mentions to PPR seeds: "
        "'exact' takes the entities whose resolution key equals the mention's (a mention without one seeds "
        "nothing), 'fuzzy' the best link_k entities of fulltext + vector linking"))
    question_ner: bool = Field(default=False, description=(
        "single-shot search reads the question's mentions with the builder's NER (spaCy / jiagu) and fills its gaps "
        "with capitalised spans (True), or takes the capitalised spans and quoted strings alone (False: "
        "kag_neo4j.solver.mentions.capitalised_mentions; a question in a script without capitals still goes to the "
        "NER). False measured best: 0.1 instead of 4 ms a question, which the NER could not hide behind the query "
        "embedding on 2 cores; search hybrid / dense p50 on 2Wiki (6.7k chunks) 1.23x / 1.29x -> 1.11x / 1.20x in "
        "two runs; R@2 / R@5 equal or higher on the three dev sets (BENCHMARKS.md, 'Question mentions without NER')"))
    max_seed_chunks: int | None = Field(default=5, ge=1, description=(
        "with exact seed linking, an entity mentioned in more chunks than this does not seed PPR: a hub "
        "('the United States') spreads the walk over passages the question is not about; None keeps every link"))
    seed_titles: bool = Field(default=True, description=(
        "the question's mentions also seed PPR with the first chunk of each document whose title they name "
        "(exactly, by resolution key; a key titling more than max_seed_chunks documents seeds nothing): "
        "the passage about a named thing is a seed even when no entity of that name was extracted"))
    weights: RetrievalWeights = Field(default_factory=RetrievalWeights)


# fulltext off: at weight 0.1 (and 0.3, 1) it lowered MuSiQue R@5 (benchmarks/results/retrieval-recall.md);
# PageRank local, in plain Cypher: one read, its cost bounded by the seeds' neighbourhood, and the recall of
# exact GDS PageRank within a point on the three dev sets (BENCHMARKS.md, "Retrieval now")
# PageRank's best 5 chunks are fused, not 20: on the dev sets (MuSiQue 50, HotpotQA 50, 2Wiki 100) R@5 went
# 76.7 -> 72.3, 88.0 -> 93.0, 82.0 -> 86.2 and R@2 stayed above dense on all three (BENCHMARKS.md)
_HYBRID = RetrievalConfig(weights=RetrievalWeights(dense=1.0, fulltext=0.0, ppr=1.0), ppr_backend="cypher", k_ppr=5)

RECIPES: dict[str, RetrievalConfig] = {
    "hybrid": _HYBRID,
    "dense": RetrievalConfig(weights=RetrievalWeights(dense=1, fulltext=0, ppr=0)),
    "fulltext": RetrievalConfig(weights=RetrievalWeights(dense=0, fulltext=1, ppr=0)),
    "dense+ppr": RetrievalConfig(weights=RetrievalWeights(dense=1, fulltext=0, ppr=1)),
    # "hybrid" with exact PageRank over the whole GDS projection (needs GDS), or local PageRank in Cypher
    "hybrid-gds": _HYBRID.model_copy(update={"ppr_backend": "gds"}),
    "hybrid-cypher": _HYBRID.model_copy(update={"ppr_backend": "cypher"}),
}


#: the backend 'auto' picks on a server with GDS (docs/scaling.md has the figures): the solver's step
#: retrieval (``RetrievalConfig()``); the ``hybrid`` recipe of single-shot search names 'cypher' itself
DEFAULT_PPR_BACKEND: Literal["gds", "cypher"] = "gds"

#: the lists the procedure computes itself
BUILT_IN_LISTS = frozenset({"dense", "fulltext", "ppr"})
_LIST_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


def seed_keys(names: Sequence[str]) -> list[str]:
    """What exact seed linking looks up for ``names`` (a question's mentions, a step's anchors): their
    resolution keys, linked inside the retrieval statement to entities (hubs left out) and to the
    documents they title."""
    return [name_key(name) for name in names]


class RankedList(Protocol):
    """A custom ranked list fused into hybrid retrieval with the built-in ones (see docs/extending.md).

    ``rank`` runs its own ``.cypher`` read through ``runner`` (so the step's trace lists it) and
    returns chunk ids, best first, at most ``k``. The procedure fuses them by the same weighted
    RRF rules as dense, fulltext and PPR (:mod:`kag_neo4j.solver.fusion`): ids of chunks that do
    not exist or whose document is still loading are left out, a chunk listed twice counts at
    its first rank, weight 0 switches the list off.
    """

    @property
    def name(self) -> str:
        """Lower-case letters, digits and ``_``; not ``dense``, ``fulltext`` or ``ppr``."""
        ...

    @property
    def weight(self) -> float:
        """Its RRF weight (finite, ``>= 0``)."""
        ...

    def rank(self, runner: QueryRunner, question: str, vector: Sequence[float], k: int) -> list[str]: ...


def _checked(lists: Sequence[RankedList]) -> list[RankedList]:
    seen: set[str] = set()
    for ranked in lists:
        name, weight = ranked.name, ranked.weight
        if not isinstance(name, str) or not _LIST_NAME.fullmatch(name) or name in BUILT_IN_LISTS or name in seen:
            raise RetrievalError(
                f"ranked list name {name!r} is not usable: give each custom list its own name of lower-case "
                "letters, digits and '_' (at most 32, starting with a letter), other than "
                + ", ".join(sorted(BUILT_IN_LISTS))
            )
        if isinstance(weight, bool) or not isinstance(weight, int | float) or not math.isfinite(weight) or weight < 0:
            raise RetrievalError(f"ranked list {name!r} has weight {weight!r}; a weight is a finite number >= 0")
        seen.add(name)
    return list(lists)


def retrieval_params(
    question: str, seed_entity_ids: Sequence[str], config: RetrievalConfig,
    extra: Sequence[tuple[RankedList, list[str]]] = (), seed_keys: Sequence[str] = (),
) -> dict[str, Any]:
    """The procedure's parameters, but for the query vector and the projection name (the PPR chunk
    seeds are the top dense chunks: ``seed_chunk_ids`` None); ``extra``: custom lists and their ids;
    ``seed_keys``: resolution keys whose entities (but hubs, ``config.max_seed_chunks``) also seed PPR."""
    weights: dict[str, float] = {**config.weights.model_dump(),
                                 **{ranked.name: float(ranked.weight) for ranked, _ in extra}}
    return {
        "query_text": lucene_terms(question), "seed_entity_ids": list(seed_entity_ids), "seed_chunk_ids": None,
        "seed_keys": list(dict.fromkeys(key for key in seed_keys if key)), "max_seed_chunks": config.max_seed_chunks,
        "seed_titles": config.seed_titles,
        "k": config.k,
        "k_dense": config.k_dense, "k_fulltext": config.k_fulltext, "k_ppr": config.k_ppr,
        "candidate_factor": config.candidate_factor,
        "dense_seeds": config.dense_seeds, "damping": config.damping, "max_iterations": config.max_iterations,
        "ppr_pool": max(config.ppr_pool, config.k_ppr), "ppr_hops": config.ppr_hops,
        "ppr_frontier": config.ppr_frontier, "ppr_last_frontier": config.ppr_last_frontier,
        "ppr_frontier_per_degree": config.ppr_frontier_per_degree,
        "rrf_k": config.rrf_k,
        "weights": weights, "extra_lists": [{"name": ranked.name, "ids": ids} for ranked, ids in extra],
    }


def ppr_backend(runner: QueryRunner, config: RetrievalConfig) -> Literal["gds", "cypher"]:
    """The backend that computes ``config``'s PPR on ``runner``'s server (see ``RetrievalConfig.ppr_backend``)."""
    has_gds = runner.capabilities.gds
    if config.ppr_backend == "auto":
        return DEFAULT_PPR_BACKEND if has_gds else "cypher"
    if config.ppr_backend == "gds" and not has_gds:
        raise RetrievalError(
            f"the retrieval recipe asks for ppr_backend 'gds', but the Neo4j of database {runner.database!r} has no "
            "Graph Data Science plugin; use ppr_backend 'cypher' or 'auto' (plain-Cypher PageRank), "
            "or install GDS (`kag-neo4j server start` runs a local Neo4j with it)"
        )
    return config.ppr_backend


class HybridRetrieval(BaseModel):
    """What one retrieval statement found: the fused chunks, best first, the entities its
    ``seed_keys`` linked (in the keys' order, then by id) and the first chunks of the documents they
    title (by id; both empty when no chunk was found)."""

    chunks: list[RankedChunk]
    linked_entity_ids: list[str] = Field(default_factory=list)
    titled_chunk_ids: list[str] = Field(default_factory=list)


def hybrid_retrieve(
    runner: QueryRunner,
    embedder: Embedder,
    question: str,
    *,
    seed_entity_ids: Sequence[str] = (),
    config: RetrievalConfig | None = None,
    query_vector: Sequence[float] | None = None,
    extra_lists: Sequence[RankedList] = (),
) -> list[RankedChunk]:
    """The top ``config.k`` chunks for ``question``; ``extra_lists`` are fused in with the others
    (each asked for ``config.k_fulltext`` ids)."""
    return hybrid_retrieval(runner, embedder, question, seed_entity_ids=seed_entity_ids, config=config,
                            query_vector=query_vector, extra_lists=extra_lists).chunks


def hybrid_retrieval(
    runner: QueryRunner,
    embedder: Embedder,
    question: str,
    *,
    seed_entity_ids: Sequence[str] = (),
    seed_keys: Sequence[str] = (),
    config: RetrievalConfig | None = None,
    query_vector: Sequence[float] | None = None,
    extra_lists: Sequence[RankedList] = (),
) -> HybridRetrieval:
    """:func:`hybrid_retrieve`, with PPR also seeded by the entities whose resolution key is one of
    ``seed_keys`` (exact linking inside the same statement, hubs left out by ``config.max_seed_chunks``:
    no round trip of its own), and those entities returned."""
    config = config or RECIPES["hybrid"]
    vector = list(query_vector) if query_vector is not None else embedder.embed_query(question)
    needs_ppr = config.weights.ppr > 0
    extra = [
        (ranked, [str(chunk_id) for chunk_id in ranked.rank(runner, question, vector, config.k_fulltext)])
        for ranked in _checked(extra_lists) if ranked.weight > 0
    ]
    params = retrieval_params(question, seed_entity_ids, config, extra, seed_keys if needs_ppr else ())
    if not needs_ppr or ppr_backend(runner, config) == "cypher":  # no projection to keep
        rows = runner.query("hybrid_retrieval_local", "procedures", query_vector=vector, graph_name="", **params)
        return _result(rows)

    used: list[str] = []

    def run(seed_chunk_ids: list[str] | None, incomplete: str | None = None) -> list[dict[str, Any]]:
        graph_name = current_projection(runner, incomplete=incomplete) if needs_ppr else ""
        used.append(graph_name)
        return runner.query(
            "hybrid_retrieval", "procedures", query_vector=vector,
            graph_name=graph_name, **{**params, "seed_chunk_ids": seed_chunk_ids},
        )

    try:
        rows = run(None)
    except ClientError as exc:
        # another process retired the projection, or a seed was written after it was projected
        if not (needs_ppr and is_stale_projection_error(exc)):
            raise
        # again: the seeds first, then the projection of the version read after them
        seeds = [str(row["id"]) for row in runner.query("solver/dense_seeds", query_vector=vector, **params)]
        try:
            rows = run(seeds)
        except ClientError as again:
            if not is_stale_projection_error(again):
                raise
            # the projection of that version was taken while its last write was being applied
            rows = run(seeds, incomplete=used[-1])
    return _result(rows)


def _result(rows: list[dict[str, Any]]) -> HybridRetrieval:
    linked = [str(entity_id) for entity_id in rows[0]["linked_ids"]] if rows else []
    titled = [str(chunk_id) for chunk_id in rows[0]["titled_ids"]] if rows else []
    return HybridRetrieval(chunks=_chunks(rows), linked_entity_ids=linked, titled_chunk_ids=titled)


def _chunks(rows: list[dict[str, Any]]) -> list[RankedChunk]:
    return [
        RankedChunk(
            chunk_id=row["chunk_id"],
            document_id=row["document_id"],
            title=row["title"],
            text=row["text"] or "",
            score=row["score"],
            ranks={item["list"]: item["rank"] for item in row["ranks"]},
        )
        for row in rows
    ]
