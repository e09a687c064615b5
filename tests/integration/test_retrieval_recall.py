"""What single-shot hybrid search finds that dense retrieval cannot, and how it picks its PPR seeds.

A small hand-built graph: the question names Lothar Brenning; his page names his mother Greta
Voss, whose own page shares no word with the question. Dense retrieval ranks word-sharing
distractors above her page; Personalized PageRank reaches it in two hops (Brenning's chunk ->
Greta Voss -> her chunk), and the fusion puts it in the top k.
"""

from __future__ import annotations

import pytest

from kag_neo4j.builder.names import name_key
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.solver.linking import link_exact
from kag_neo4j.solver.question_search import recipe, search
from kag_neo4j.solver.retrieval import RECIPES, hybrid_retrieval, hybrid_retrieve
from kag_neo4j.store.database import Database
from tests.integration.conftest import TEST_DIMENSION

QUESTION = "Who was the mother of Lothar Brenning?"
CHUNKS = {
    "brenning#0#0": ("Lothar Brenning", "Lothar Brenning was a painter; his mother was Greta Voss.", ["brenning", "voss"]),
    "voss#0#0": ("Greta Voss", "Greta Voss, born in Tallinn in 1901, studied botany at Tartu.", ["voss", "tallinn"]),
    "d1#0#0": ("Mother Goose", "Who was the mother of the goose? The mother was a tale.", []),
    "d2#0#0": ("Mother tongue", "The mother tongue of a child was the language of the mother.", []),
    "d3#0#0": ("Mothers' Day", "Who was the first to hold a day for the mother?", []),
    "far#0#0": ("Tallinn", "Tallinn: Estonian capital, Baltic coast.", ["tallinn"]),
    "zz_twin#0#0": ("Twin Peaks", "Twin Peaks, first page.", ["twins"]),
    "aa_twin#0#0": ("Twin Peaks", "Twin Peaks, second page.", ["twins"]),
}
ENTITIES = {"brenning": "Lothar Brenning", "voss": "Greta Voss", "tallinn": "Tallinn",
            "akinoshu": "Akinoshū Kenji", "kenji_bar": "Kenji's Bar",
            "twins": "Twin Peaks"}
ANSWER = "voss#0#0"


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder(dimension=TEST_DIMENSION)


@pytest.fixture
def graph(db: Database, embedder: HashingEmbedder) -> Database:
    db.write(
        "UNWIND $entities AS e MERGE (n:Entity {id: e.id}) "
        "SET n.name = e.name, n.alias_text = e.name, n.name_key = e.key, n.family = 'entity', n.embedding = e.vector",
        entities=[{"id": k, "name": v, "key": name_key(v), "vector": embedder.embed_query(v)}
                  for k, v in ENTITIES.items()],
    )
    db.write(
        """
        UNWIND $rows AS row
        MERGE (d:Document {id: row.doc}) SET d.title = row.title, d.status = 'complete'
        MERGE (c:Chunk {id: row.id}) SET c.text = row.text, c.title = row.title, c.embedding = row.embedding
        MERGE (c)-[:PART_OF]->(d)
        WITH c, row UNWIND row.mentions AS m
        MATCH (e:Entity {id: m}) MERGE (e)-[:MENTIONED_IN {count: 1}]->(c)
        """,
        rows=[{"id": cid, "doc": cid.split("#")[0], "title": title, "text": text, "mentions": mentions,
               "embedding": embedder.embed_documents([text])[0]} for cid, (title, text, mentions) in CHUNKS.items()],
    )
    db.write("MERGE (m:KagMeta {key: 'graph'}) SET m.version = 1")
    return db


def test_the_answer_reachable_only_through_the_graph_is_found_by_the_hybrid_not_by_dense(
    graph: Database, embedder: HashingEmbedder
) -> None:
    dense = search(graph, embedder, QUESTION, k=4, recipe_name="dense")
    assert ANSWER not in [c.chunk_id for c in dense.chunks], "word-sharing distractors outrank it in dense retrieval"
    hybrid = search(graph, embedder, QUESTION, k=4)  # the default recipe
    assert hybrid.seed_entity_ids == ["brenning"]
    found = {c.chunk_id: c for c in hybrid.chunks}
    assert ANSWER in found and "ppr" in found[ANSWER].ranks
    assert found[ANSWER].ranks["ppr"] < found[ANSWER].ranks["dense"], "PageRank ranks it above dense"


def test_exact_linking_seeds_entities_of_the_mentions_key_and_nothing_for_a_near_miss(graph: Database) -> None:
    linked = link_exact(graph, ["Akinoshu Kenji's", "the Lothar Brenning", "Kenji", "Greta Vos"])
    assert linked == {"Akinoshu Kenji's": ["akinoshu"], "the Lothar Brenning": ["brenning"], "Kenji": [],
                      "Greta Vos": []}, "accents, case, articles and possessives do not count; spelling does"


def test_exact_linking_leaves_out_entities_mentioned_in_more_chunks_than_the_cap(graph: Database) -> None:
    assert link_exact(graph, ["Greta Voss", "Lothar Brenning"], max_chunks=1) == {
        "Greta Voss": [], "Lothar Brenning": ["brenning"]}, "Greta Voss is mentioned in two chunks"
    assert link_exact(graph, ["Greta Voss"], max_chunks=2) == {"Greta Voss": ["voss"]}


def test_the_default_recipe_seeds_pagerank_by_exact_names_only(graph: Database, embedder: HashingEmbedder) -> None:
    assert RECIPES["hybrid"].seed_linking == "exact"
    exact = search(graph, embedder, "Where did Kenji study, and what of Greta Vos?", k=3)
    assert exact.seed_entity_ids == [], "no entity has the key of 'Kenji' or 'Greta Vos'"
    fuzzy_recipe = "hybrid-fuzzy"
    RECIPES[fuzzy_recipe] = RECIPES["hybrid"].model_copy(update={"seed_linking": "fuzzy"})
    try:
        fuzzy = search(graph, embedder, "Where did Kenji study, and what of Greta Vos?", k=3, recipe_name=fuzzy_recipe)
    finally:
        del RECIPES[fuzzy_recipe]
    assert fuzzy.seed_entity_ids, "fuzzy linking takes the nearest names instead"


def test_pagerank_ranks_by_distance_from_the_seeds_and_breaks_ties_by_chunk_id(
    graph: Database, embedder: HashingEmbedder
) -> None:
    config = recipe("dense+ppr", 6).model_copy(update={"dense_seeds": 0})
    ppr_only = config.model_copy(update={"weights": config.weights.model_copy(update={"dense": 0.0})})
    hits = hybrid_retrieve(graph, embedder, QUESTION, seed_entity_ids=["brenning"], config=ppr_only)
    ids = [h.chunk_id for h in hits]
    assert ids[:2] == ["brenning#0#0", ANSWER], "one hop, then two"
    assert ids.index("far#0#0") > ids.index(ANSWER), "three hops rank below two"
    assert not {"d1#0#0", "d2#0#0", "d3#0#0"} & set(ids), "chunks with no path from a seed have no PPR score"
    # two chunks in the same place relative to the seed have equal PageRank: the chunk id decides
    tied = hybrid_retrieve(graph, embedder, QUESTION, seed_entity_ids=["twins"], config=ppr_only)
    assert [(h.chunk_id, h.ranks) for h in tied] == [("aa_twin#0#0", {"ppr": 1}), ("zz_twin#0#0", {"ppr": 2})]



class _Recording:
    """A QueryRunner that runs every query on ``db`` and remembers its name."""

    def __init__(self, db: Database) -> None:
        self.db, self.names = db, []

    @property
    def database(self) -> str:
        return self.db.database

    @property
    def kb(self):  # noqa: ANN201 - the Database's
        return self.db.kb

    @property
    def capabilities(self):  # noqa: ANN201 - the Database's
        return self.db.capabilities

    def query(self, name: str, folder: str = "cypher", /, **params: object) -> list[dict[str, object]]:
        self.names.append(f"{folder}/{name}")
        return self.db.query(name, folder, **params)  # type: ignore[arg-type]


@pytest.mark.parametrize(("backend", "reads"), [
    ("hybrid-cypher", ["procedures/hybrid_retrieval_local"]),
    ("hybrid-gds", ["cypher/solver/projection_state", "procedures/hybrid_retrieval"]),
])
def test_exact_seed_links_are_made_inside_the_retrieval_statement(
    graph: Database, embedder: HashingEmbedder, backend: str, reads: list[str],
) -> None:
    search(graph, embedder, QUESTION, k=4, recipe_name=backend)  # projects the graph once (GDS)
    runner = _Recording(graph)
    found = search(runner, embedder, QUESTION, k=4, recipe_name=backend)  # type: ignore[arg-type]
    assert runner.names == reads, "no linking read of its own; the projection's version and catalog in one read"
    assert found.seed_entity_ids == ["brenning"] and ANSWER in [c.chunk_id for c in found.chunks]


def test_seed_keys_link_in_key_order_and_leave_hubs_out(graph: Database, embedder: HashingEmbedder) -> None:
    config = recipe("hybrid-cypher", 4)
    keys = [name_key("Greta Voss"), name_key("Lothar Brenning"), name_key("Kenji"), name_key("Lothar Brenning")]
    found = hybrid_retrieval(graph, embedder, QUESTION, seed_keys=keys, config=config)
    assert found.linked_entity_ids == ["voss", "brenning"], "the keys' order; a key with no entity links nothing"
    capped = hybrid_retrieval(graph, embedder, QUESTION, seed_keys=keys,
                              config=config.model_copy(update={"max_seed_chunks": 1}))
    assert capped.linked_entity_ids == ["brenning"], "Greta Voss is mentioned in two chunks"
    # the keys' entities seed PageRank like the same ids given directly
    by_ids = hybrid_retrieval(graph, embedder, QUESTION, seed_entity_ids=["brenning"], config=config)
    assert [(c.chunk_id, c.ranks) for c in capped.chunks] == [(c.chunk_id, c.ranks) for c in by_ids.chunks]
    assert by_ids.linked_entity_ids == []
    dense = hybrid_retrieval(graph, embedder, QUESTION, seed_keys=keys, config=recipe("dense", 4))
    assert dense.linked_entity_ids == [], "a recipe without PageRank links nothing"
