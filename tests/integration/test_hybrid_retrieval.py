"""Hybrid retrieval (dense + fulltext + PPR, RRF) runs inside Neo4j on a small hand-built graph."""

from __future__ import annotations

import pytest

from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.solver import projection
from kag_neo4j.solver.retrieval import RECIPES, RetrievalConfig, RetrievalWeights, hybrid_retrieval, hybrid_retrieve
from kag_neo4j.store.database import Database

from tests.integration.conftest import TEST_DIMENSION

CHUNKS = {
    "ronaldo#0#0": ("Cristiano Ronaldo", "Cristiano Ronaldo played for Real Madrid from 2009 to 2018.", ["ronaldo", "real_madrid"]),
    "madrid#0#0": ("Real Madrid", "The club was founded in 1902 in the Spanish capital.", ["real_madrid"]),
    "nile#0#0": ("Nile", "The Nile is a major north-flowing river in northeastern Africa.", ["nile"]),
    "thames#0#0": ("Thames", "The Thames flows through London to the North Sea.", ["thames"]),
}
ENTITIES = {"ronaldo": "Cristiano Ronaldo", "real_madrid": "Real Madrid", "nile": "Nile", "thames": "Thames"}


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder(dimension=TEST_DIMENSION)


@pytest.fixture
def graph(db: Database, embedder: HashingEmbedder) -> Database:
    rows = [
        {"id": cid, "doc": cid.split("#")[0], "title": title, "text": text, "mentions": mentions,
         "embedding": embedder.embed_documents([text])[0]}
        for cid, (title, text, mentions) in CHUNKS.items()
    ]
    db.write(
        "UNWIND $entities AS e MERGE (n:Entity {id: e.id}) SET n.name = e.name, n.alias_text = e.name",
        entities=[{"id": k, "name": v} for k, v in ENTITIES.items()],
    )
    db.write(
        """
        UNWIND $rows AS row
        MERGE (d:Document {id: row.doc}) SET d.title = row.title
        MERGE (c:Chunk {id: row.id}) SET c.text = row.text, c.title = row.title, c.embedding = row.embedding
        MERGE (c)-[:PART_OF]->(d)
        WITH c, row UNWIND row.mentions AS m
        MATCH (e:Entity {id: m}) MERGE (e)-[:MENTIONED_IN {count: 1}]->(c)
        """,
        rows=rows,
    )
    db.write("MERGE (m:KagMeta {key: 'graph'}) SET m.version = 1")
    return db


def test_fulltext_alone_finds_the_word(graph: Database, embedder: HashingEmbedder) -> None:
    hits = hybrid_retrieve(graph, embedder, "founded 1902", config=RECIPES["fulltext"])
    assert hits[0].chunk_id == "madrid#0#0"
    assert set(hits[0].ranks) == {"fulltext"}


def test_ppr_seeded_by_an_entity_reaches_chunks_without_shared_words(graph: Database, embedder: HashingEmbedder) -> None:
    config = RetrievalConfig(k=4, dense_seeds=0, weights=RetrievalWeights(dense=0, fulltext=0, ppr=1))
    hits = hybrid_retrieve(graph, embedder, "zzz", seed_entity_ids=["ronaldo"], config=config)
    ids = [hit.chunk_id for hit in hits]
    assert ids[0] == "ronaldo#0#0"
    assert "madrid#0#0" in ids, "two hops: Ronaldo -> ronaldo chunk -> Real Madrid -> madrid chunk"
    assert "nile#0#0" not in ids and "thames#0#0" not in ids


def test_ppr_chunks_come_from_the_best_ppr_pool_nodes(graph: Database, embedder: HashingEmbedder) -> None:
    # the seed entity itself scores highest: a pool of one node holds no chunk, a wide one does
    config = RetrievalConfig(k=4, k_ppr=1, dense_seeds=0, weights=RetrievalWeights(dense=0, fulltext=0, ppr=1))
    narrow = hybrid_retrieve(graph, embedder, "zzz", seed_entity_ids=["ronaldo"],
                             config=config.model_copy(update={"ppr_pool": 1}))
    wide = hybrid_retrieve(graph, embedder, "zzz", seed_entity_ids=["ronaldo"], config=config)
    assert narrow == [] and [hit.chunk_id for hit in wide] == ["ronaldo#0#0"]


@pytest.mark.parametrize("backend", ["gds", "cypher"])
def test_a_mention_naming_a_document_seeds_its_first_chunk(graph: Database, embedder: HashingEmbedder,
                                                             backend: str) -> None:
    # "Atlantis" titles a document whose passages mention no entity at all: only its title leads there
    graph.write(
        """
        UNWIND $docs AS doc
        MERGE (d:Document {id: doc.id}) SET d.title = doc.title, d.title_key = doc.key
        WITH d, doc UNWIND range(0, size(doc.texts) - 1) AS i
        MERGE (c:Chunk {id: doc.id + '#0#' + toString(i)}) SET c.text = doc.texts[i], c.index = i
        MERGE (c)-[:PART_OF]->(d)
        """,
        docs=[{"id": "atlantis", "title": "Atlantis", "key": "atlantis",
               "texts": ["It sank beneath the sea in a single day.", "Later writers placed it near Gibraltar."]},
              *({"id": f"spring{i}", "title": "Spring", "key": "spring", "texts": [f"Season number {i}."]}
                for i in range(3))],
    )
    graph.write("MATCH (m:KagMeta {key: 'graph'}) SET m.version = 2")
    config = RetrievalConfig(k=4, dense_seeds=0, max_seed_chunks=2, ppr_backend=backend,
                             weights=RetrievalWeights(dense=0, fulltext=0, ppr=1))
    found = hybrid_retrieval(graph, embedder, "Where did Atlantis sink?", seed_keys=["atlantis"], config=config)
    assert [hit.chunk_id for hit in found.chunks][:1] == ["atlantis#0#0"], "the document's first chunk is the seed"
    assert found.linked_entity_ids == [], "a title is not an entity link"
    off = config.model_copy(update={"seed_titles": False})
    assert hybrid_retrieval(graph, embedder, "Where did Atlantis sink?", seed_keys=["atlantis"], config=off).chunks == []
    # a key that titles more documents than max_seed_chunks is a hub: it seeds nothing
    assert hybrid_retrieval(graph, embedder, "spring", seed_keys=["spring"], config=config).chunks == []
    wide = config.model_copy(update={"max_seed_chunks": 3})
    hits = hybrid_retrieval(graph, embedder, "spring", seed_keys=["spring"], config=wide).chunks
    assert sorted(hit.chunk_id for hit in hits) == [f"spring{i}#0#0" for i in range(3)]


def test_fusion_scores_are_weighted_reciprocal_ranks(graph: Database, embedder: HashingEmbedder) -> None:
    config = RetrievalConfig(k=4, dense_seeds=0, weights=RetrievalWeights(dense=2.0, fulltext=1.0, ppr=0.5))
    hits = hybrid_retrieve(graph, embedder, "Ronaldo Real Madrid club", seed_entity_ids=["real_madrid"], config=config)
    weights = {"dense": 2.0, "fulltext": 1.0, "ppr": 0.5}
    for hit in hits:
        expected = sum(weights[name] / (60 + rank) for name, rank in hit.ranks.items())
        assert hit.score == pytest.approx(expected)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0].chunk_id in {"ronaldo#0#0", "madrid#0#0"}


def test_hostile_question_text_is_only_a_value(graph: Database, embedder: HashingEmbedder) -> None:
    question = "x') DETACH DELETE n // \" OR 1=1 AND title:* NOT ~ ^2 {}[]"
    hybrid_retrieve(graph, embedder, question, seed_entity_ids=["ronaldo') DETACH DELETE n //"])
    assert graph.read("MATCH (c:Chunk) RETURN count(c) AS n")[0]["n"] == len(CHUNKS)


def test_projection_follows_the_graph_version(graph: Database, embedder: HashingEmbedder) -> None:
    first = projection.current_projection(graph)
    assert first.endswith("_v1")
    assert projection.current_projection(graph) == first, "no rebuild without a change"
    graph.write("MATCH (m:KagMeta {key: 'graph'}) SET m.version = 2")
    second = projection.current_projection(graph)
    assert second.endswith("_v2")
    names = {row["graphName"] for row in graph.read("CALL gds.graph.list() YIELD graphName RETURN graphName")}
    assert {first, second} <= names, "the old one is retired only after the grace period"
    assert projection.current_projection(graph, grace_seconds=0) == second
    names = {row["graphName"] for row in graph.read("CALL gds.graph.list() YIELD graphName RETURN graphName")}
    assert first not in names and second in names


def test_cypher_fusion_agrees_with_the_python_reference(graph: Database, embedder: HashingEmbedder) -> None:
    # kag_neo4j.solver.fusion.rrf documents the fusion rules; the procedure must give the same
    # scores and the same order (ties included) for the ranked lists it fused
    from kag_neo4j.solver.fusion import rrf

    weights = {"dense": 1.0, "fulltext": 1.0, "ppr": 1.0}
    config = RetrievalConfig(k=len(CHUNKS), dense_seeds=0, weights=RetrievalWeights(**weights))
    for question, seeds in (("Ronaldo Real Madrid club", ["real_madrid"]), ("river", ["nile", "thames"]),
                            ("founded 1902", [])):
        hits = hybrid_retrieve(graph, embedder, question, seed_entity_ids=seeds, config=config)
        lists: dict[str, list[str]] = {}
        for name in weights:
            ranked = sorted((hit.ranks[name], hit.chunk_id) for hit in hits if name in hit.ranks)
            lists[name] = [chunk_id for _, chunk_id in ranked]
        reference = rrf(lists, weights)
        assert [hit.chunk_id for hit in hits] == [chunk_id for chunk_id, _ in reference], question
        assert [hit.score for hit in hits] == pytest.approx([score for _, score in reference]), question


class _Fixed:
    """A custom ranked list that returns fixed ids (duplicates and a missing chunk included)."""

    def __init__(self, ids: list[str], weight: float = 1.0, name: str = "fixed") -> None:
        self.ids, self.weight, self.name = ids, weight, name
        self.asked: list[int] = []

    def rank(self, runner: object, question: str, vector: object, k: int) -> list[str]:
        self.asked.append(k)
        return list(self.ids)


def test_cypher_fusion_of_a_custom_list_agrees_with_the_python_reference(
    graph: Database, embedder: HashingEmbedder
) -> None:
    from kag_neo4j.solver.fusion import rrf

    weights = {"dense": 1.0, "fulltext": 0.5, "ppr": 1.0, "fixed": 2.0}
    extra = _Fixed(["thames#0#0", "nile#0#0", "thames#0#0", "no-such#0#0", "madrid#0#0"], weight=weights["fixed"])
    config = RetrievalConfig(k=len(CHUNKS), dense_seeds=0, weights=RetrievalWeights(dense=1.0, fulltext=0.5, ppr=1.0))
    hits = hybrid_retrieve(graph, embedder, "Ronaldo Real Madrid club", seed_entity_ids=["real_madrid"], config=config,
                           extra_lists=[extra])
    assert extra.asked == [config.k_fulltext]
    lists: dict[str, list[str]] = {}
    for name in ("dense", "fulltext", "ppr"):
        lists[name] = [cid for _, cid in sorted((h.ranks[name], h.chunk_id) for h in hits if name in h.ranks)]
    lists["fixed"] = [cid for cid in extra.ids if cid in CHUNKS]  # missing chunks are left out
    assert {h.chunk_id: h.ranks.get("fixed") for h in hits if "fixed" in h.ranks} == {
        "thames#0#0": 1, "nile#0#0": 2, "madrid#0#0": 4}, "a duplicate counts at its first rank and takes a rank"
    reference = rrf(lists, weights)
    assert [h.chunk_id for h in hits] == [cid for cid, _ in reference]
    assert [h.score for h in hits] == pytest.approx([score for _, score in reference])


def test_a_custom_list_of_weight_zero_changes_nothing_and_bad_lists_are_refused(
    graph: Database, embedder: HashingEmbedder
) -> None:
    from kag_neo4j.solver.retrieval import RetrievalError

    config = RECIPES["hybrid"]
    plain = hybrid_retrieve(graph, embedder, "river", seed_entity_ids=["nile"], config=config)
    off = _Fixed(["thames#0#0"], weight=0.0)
    assert hybrid_retrieve(graph, embedder, "river", seed_entity_ids=["nile"], config=config, extra_lists=[off]) == plain
    assert off.asked == [], "a list switched off is not asked"
    for bad in (_Fixed([], name="dense"), _Fixed([], name="Bad Name"), _Fixed([], weight=float("nan")),
                _Fixed([], weight=-1.0)):
        with pytest.raises(RetrievalError):
            hybrid_retrieve(graph, embedder, "river", config=config, extra_lists=[bad])
    with pytest.raises(RetrievalError):
        hybrid_retrieve(graph, embedder, "river", config=config, extra_lists=[_Fixed([]), _Fixed([])])


def test_the_custom_ranked_list_example_reorders_by_the_rrf_rules(graph: Database, embedder: HashingEmbedder) -> None:
    import runpy
    from pathlib import Path

    from kag_neo4j.solver.fusion import rrf

    example = runpy.run_path(str(Path(__file__).parents[2] / "examples" / "custom_ranked_list.py"))
    question = "Which club was founded in 1902 in the Spanish capital? (Thames)"
    without, with_title = example["compare"](graph, embedder, question, k=4, recipe_name="dense", weight=2.0)
    assert [h.chunk_id for h in with_title][:1] == ["thames#0#0"], "the titled chunk goes first"
    assert [h.chunk_id for h in without][:1] != ["thames#0#0"], "and was not first without the list"
    lists = {name: [cid for _, cid in sorted((h.ranks[name], h.chunk_id) for h in with_title if name in h.ranks)]
             for name in ("dense", "title")}
    assert lists["title"] == ["thames#0#0"]
    reference = rrf(lists, {"dense": 1.0, "title": 2.0})
    assert [h.chunk_id for h in with_title] == [cid for cid, _ in reference][: len(with_title)]
