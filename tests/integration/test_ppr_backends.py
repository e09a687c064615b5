"""The plain-Cypher PPR backend (procedures/hybrid_retrieval_local.cypher) against its Python
reference (kag_neo4j.solver.local_ppr) and against exact GDS PageRank, on small hand-built graphs."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.solver.local_ppr import local_ppr
from kag_neo4j.solver.retrieval import (
    RetrievalConfig,
    RetrievalWeights,
    hybrid_retrieve,
)
from kag_neo4j.store.database import Database
from tests.integration.conftest import TEST_DIMENSION, anchor_titles
from tests.integration.test_hybrid_retrieval import embedder, graph  # noqa: F401 - fixtures

PPR_ONLY = RetrievalWeights(dense=0, fulltext=0, ppr=1)


def _ppr_list(db: Database, embedder: HashingEmbedder, seeds: list[str], config: RetrievalConfig) -> list[str]:
    hits = hybrid_retrieve(db, embedder, "zzz", seed_entity_ids=seeds, config=config)
    assert all(set(hit.ranks) == {"ppr"} for hit in hits)
    return [hit.chunk_id for hit in sorted(hits, key=lambda hit: hit.ranks["ppr"])]


@pytest.mark.parametrize("backend", ["gds", "cypher"])
def test_a_chunk_reachable_only_through_the_graph_is_found(
    graph: Database, embedder: HashingEmbedder, backend: str,  # noqa: F811
) -> None:
    config = RetrievalConfig(k=4, dense_seeds=0, weights=PPR_ONLY, ppr_backend=backend)
    ids = _ppr_list(graph, embedder, ["ronaldo"], config)
    assert ids[:2] == ["ronaldo#0#0", "madrid#0#0"], "two hops: Ronaldo -> his chunk -> Real Madrid -> its chunk"
    assert "nile#0#0" not in ids and "thames#0#0" not in ids


def test_cypher_ppr_hops_bound_how_far_it_reaches(graph: Database, embedder: HashingEmbedder) -> None:  # noqa: F811
    one = RetrievalConfig(k=4, dense_seeds=0, weights=PPR_ONLY, ppr_backend="cypher", ppr_hops=1)
    assert _ppr_list(graph, embedder, ["ronaldo"], one) == ["ronaldo#0#0"]
    assert _ppr_list(graph, embedder, ["ronaldo"], one.model_copy(update={"ppr_hops": 0})) == []


@pytest.fixture
def random_graph(db: Database) -> tuple[Database, dict[str, list[str]], list[str]]:
    """24 entities, 30 chunks, random mentions and title anchors (8 documents titled by an entity's
    name), plus what PageRank must ignore: facts between entities, NEXT between chunks, PART_OF to
    documents and a trace step that USED a chunk and an entity."""
    rng = random.Random(7)
    embedder = HashingEmbedder(dimension=TEST_DIMENSION)
    entities = [f"e{i:02d}" for i in range(24)]
    chunks = [f"c{i:02d}" for i in range(30)]
    mentions = sorted({(rng.choice(entities), chunk) for chunk in chunks for _ in range(rng.randint(1, 4))})
    facts = sorted({(rng.choice(entities), rng.choice(entities)) for _ in range(20)})
    facts = [(a, b) for a, b in facts if a != b]
    titles = {chunk: entities[(3 * i) % len(entities)] for i, chunk in enumerate(chunks[:8])}
    db.write("UNWIND $ids AS id CREATE (:Entity {id: id, name: id, name_key: id})", ids=entities)
    db.write("""UNWIND $ids AS id
                CREATE (c:Chunk {id: id, text: id, embedding: $vector})
                       -[:PART_OF]->(:Document {id: 'd' + id, title_key: coalesce($titles[id], '')})""",
             ids=chunks, titles=titles, vector=embedder.embed_documents(["x"])[0])
    db.write("UNWIND $pairs AS p MATCH (e:Entity {id: p[0]}), (c:Chunk {id: p[1]}) CREATE (e)-[:MENTIONED_IN]->(c)",
             pairs=[list(pair) for pair in mentions])
    db.write("UNWIND $pairs AS p MATCH (a:Entity {id: p[0]}), (b:Entity {id: p[1]}) CREATE (a)-[:RELATED]->(b)",
             pairs=[list(pair) for pair in facts])
    db.write("UNWIND range(0, size($ids) - 2) AS i MATCH (a:Chunk {id: $ids[i]}), (b:Chunk {id: $ids[i + 1]}) "
             "CREATE (a)-[:NEXT]->(b)", ids=chunks)
    db.write("MATCH (c:Chunk {id: 'c00'}), (e:Entity {id: 'e00'}) CREATE (s:KagStep)-[:USED]->(c), (s)-[:USED]->(e)")
    anchor_titles(db)
    db.write("MERGE (m:KagMeta {key: 'graph'}) SET m.version = 1")
    neighbours: dict[str, list[str]] = defaultdict(list)
    anchors = [(entity, chunk) for chunk, entity in titles.items() if (entity, chunk) not in set(mentions)]
    assert anchors, "the fixture must hold title anchors that are not mentions"
    for a, b in [*mentions, *anchors]:
        neighbours[a].append(b)
        neighbours[b].append(a)
    return db, dict(neighbours), chunks


def test_cypher_ppr_follows_its_reference_and_agrees_with_gds(
    random_graph: tuple[Database, dict[str, list[str]], list[str]],
) -> None:
    db, neighbours, chunks = random_graph
    embedder = HashingEmbedder(dimension=TEST_DIMENSION)
    for seeds in (["e03"], ["e05", "e11"], ["e00", "e07", "e19"]):
        config = RetrievalConfig(k=10, k_ppr=10, dense_seeds=0, weights=PPR_ONLY, ppr_backend="cypher",
                                 ppr_hops=6, ppr_frontier=1000, ppr_last_frontier=1000)
        local = _ppr_list(db, embedder, seeds, config)
        scores = local_ppr(neighbours, seeds, damping=config.damping, hops=6, frontier=1000, ranked=set(chunks))
        expected = sorted((node for node in scores if node in chunks), key=lambda n: (-scores[n], n))[:10]
        assert set(local) == set(expected) and len(local) == len(expected), seeds
        for better, worse in zip(local, local[1:]):  # the procedure's order is the reference's (ties aside)
            assert scores[better] >= scores[worse] - 1e-12, (seeds, better, worse)
        exact = _ppr_list(db, embedder, seeds, config.model_copy(update={"ppr_backend": "gds"}))
        assert len(set(local) & set(exact)) >= 9, (seeds, local, exact)


def test_a_frontier_kept_by_mass_per_relationship_follows_its_reference(
    random_graph: tuple[Database, dict[str, list[str]], list[str]],
) -> None:
    """A small frontier (4 nodes a hop) kept by mass / (mentions + 1): the procedure's list is the
    reference's, and on some seeds it is not the list of the frontier kept by mass."""
    db, neighbours, chunks = random_graph
    embedder = HashingEmbedder(dimension=TEST_DIMENSION)
    mentions = {row["id"]: row["mentions"] for row in db.read(
        "MATCH (n) WHERE n:Entity OR n:Chunk RETURN n.id AS id, COUNT { (n)-[:MENTIONED_IN]-() } AS mentions")}
    by_degree = RetrievalConfig(k=6, k_ppr=6, dense_seeds=0, weights=PPR_ONLY, ppr_backend="cypher", ppr_hops=4,
                                ppr_frontier=4, ppr_last_frontier=4, ppr_frontier_per_degree=True)
    differs = 0
    for seeds in (["e03"], ["e05", "e11"], ["e00", "e07", "e19"], ["e02", "e13"]):
        local = _ppr_list(db, embedder, seeds, by_degree)
        scores = local_ppr(neighbours, seeds, damping=by_degree.damping, hops=4, frontier=4, ranked=set(chunks),
                           mentions=mentions)
        expected = sorted((node for node in scores if node in chunks), key=lambda n: (-scores[n], n))[:6]
        assert set(local) == set(expected), (seeds, local, expected)
        by_mass = _ppr_list(db, embedder, seeds, by_degree.model_copy(update={"ppr_frontier_per_degree": False}))
        differs += set(by_mass) != set(local)
    assert differs, "the frontier's order changed no list: the test graph does not exercise it"


def test_a_wider_frontier_before_the_last_push_follows_its_reference(
    random_graph: tuple[Database, dict[str, list[str]], list[str]],
) -> None:
    """3 nodes kept a hop but 8 at the hop before the last push: the procedure's list is the reference's,
    and on some seeds it is not the list of 3 nodes kept at every hop."""
    db, neighbours, chunks = random_graph
    embedder = HashingEmbedder(dimension=TEST_DIMENSION)
    mentions = {row["id"]: row["mentions"] for row in db.read(
        "MATCH (n) WHERE n:Entity OR n:Chunk RETURN n.id AS id, COUNT { (n)-[:MENTIONED_IN]-() } AS mentions")}
    wide = RetrievalConfig(k=8, k_ppr=8, dense_seeds=0, weights=PPR_ONLY, ppr_backend="cypher", ppr_hops=4,
                           ppr_frontier=3, ppr_last_frontier=8)
    differs = 0
    for seeds in (["e03"], ["e05", "e11"], ["e00", "e07", "e19"], ["e02", "e13"]):
        local = _ppr_list(db, embedder, seeds, wide)
        scores = local_ppr(neighbours, seeds, damping=wide.damping, hops=4, frontier=3, last_frontier=8,
                           ranked=set(chunks), mentions=mentions)
        expected = sorted((node for node in scores if node in chunks), key=lambda n: (-scores[n], n))[:8]
        assert set(local) == set(expected), (seeds, local, expected)
        narrow = _ppr_list(db, embedder, seeds, wide.model_copy(update={"ppr_last_frontier": 3}))
        differs += set(narrow) != set(local)
    assert differs, "the wider frontier changed no list: the test graph does not exercise it"


def test_the_last_push_moves_mass_onto_chunks_only(db: Database) -> None:
    """Seeds on both sides: the dense chunk x (mentioning only e) and the entity a (in c and d). One hop
    with a frontier of one: e's share (0.25) is larger than c's or d's (0.125), but only chunks are
    ranked, so the last push keeps a chunk, and PageRank reaches c or d (not only the seed x)."""
    embedder = HashingEmbedder(dimension=TEST_DIMENSION)
    texts = {"x": "quartz lantern harbour", "c": "pine", "d": "oak"}
    db.write("UNWIND $ids AS id CREATE (:Entity {id: id, name: id, name_key: id})", ids=["a", "e"])
    db.write("""UNWIND keys($texts) AS id
                CREATE (:Chunk {id: id, text: $texts[id], embedding: $vectors[id]})
                       -[:PART_OF]->(:Document {id: 'd' + id, title_key: '', status: 'complete'})""",
             texts=texts, vectors={k: embedder.embed_documents([v])[0] for k, v in texts.items()})
    db.write("UNWIND $pairs AS p MATCH (e:Entity {id: p[0]}), (c:Chunk {id: p[1]}) CREATE (e)-[:MENTIONED_IN]->(c)",
             pairs=[["e", "x"], ["a", "c"], ["a", "d"]])
    config = RetrievalConfig(k=3, k_ppr=3, k_dense=1, dense_seeds=1, weights=PPR_ONLY, ppr_backend="cypher",
                             ppr_hops=1, ppr_frontier=1)
    hits = hybrid_retrieve(db, embedder, texts["x"], seed_entity_ids=["a"], config=config)
    ids = [hit.chunk_id for hit in sorted(hits, key=lambda hit: hit.ranks["ppr"])]
    assert ids[0] == "x" and len(ids) == 2 and ids[1] in {"c", "d"}, ids
    neighbours = {"x": ["e"], "e": ["x"], "a": ["c", "d"], "c": ["a"], "d": ["a"]}
    scores = local_ppr(neighbours, ["a", "x"], damping=config.damping, hops=1, frontier=1, ranked=set(texts))
    assert sorted(node for node in scores if node in texts) == ["c", "x"], "the reference: ties by node key"
