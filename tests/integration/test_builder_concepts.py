"""Domain-knowledge injection: a domain_kg taxonomy becomes Concept nodes with IS_A edges,
its terms are found in chunk text as entities, and entities link to concepts with BELONGS_TO."""

from __future__ import annotations

from pathlib import Path

from kag_neo4j.builder.concepts import load_taxonomy
from kag_neo4j.builder.delete import delete_document
from kag_neo4j.builder.pipeline import LoadOptions, load
from kag_neo4j.config import Settings
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.store.database import Database
from tests.integration.builder_support import capitalised_extractor, snapshot
from tests.integration.conftest import TEST_DIMENSION

DOMAIN_KG = Path(__file__).resolve().parents[1] / "fixtures" / "builder" / "domain_kg"


def _load(db: Database, settings: Settings, mode: str = "light"):
    options = LoadOptions(mode=mode, taxonomy=load_taxonomy(DOMAIN_KG), max_chars=300, overlap=0)
    return load([DOMAIN_KG / "doc.txt"], db, settings, options, extractor=capitalised_extractor,
                embedder=HashingEmbedder(TEST_DIMENSION))


def test_taxonomy_is_written_as_a_concept_graph(db: Database, test_settings: Settings) -> None:
    summary = _load(db, test_settings)
    assert summary.taxonomy_concepts == 25  # 38 nodes in the file, 25 distinct names
    assert db.read("MATCH (c:Concept {source: 'taxonomy'}) RETURN count(c) AS n")[0]["n"] == 25
    assert db.read("MATCH (:Concept)-[r:IS_A]->(:Concept) RETURN count(r) AS n")[0]["n"] == 19
    assert db.read("MATCH (c:Concept) WHERE c.embedding IS NULL RETURN count(c) AS n")[0]["n"] == 0
    hyper = db.read("MATCH (:Concept {name: 'ACTH'})-[:IS_A]->(p:Concept) RETURN p.name AS name")
    assert [row["name"] for row in hyper] == ["促肾上腺皮质激素"]


def test_taxonomy_terms_in_text_become_linked_entities(db: Database, test_settings: Settings) -> None:
    _load(db, test_settings)
    # the test extractor finds nothing in Chinese text: every entity here comes from the taxonomy
    rows = db.read(
        "MATCH (e:Entity)-[b:BELONGS_TO]->(c:Concept) MATCH (e)-[m:MENTIONED_IN]->(ch:Chunk) "
        "RETURN e.name AS entity, c.name AS concept, b.chunk_ids AS chunks, sum(m.count) AS mentions"
    )
    linked = {row["entity"]: row for row in rows}
    assert {"生长激素", "人生长激素", "促肾上腺皮质激素"} <= set(linked)
    assert linked["生长激素"]["concept"] == "生长激素"
    assert linked["生长激素"]["mentions"] >= 5 and linked["生长激素"]["chunks"]
    # the concept graph widens a term to its hypernym: 促肾上腺皮质激素 is reachable from the text
    assert db.read(
        "MATCH (ch:Chunk)<-[:MENTIONED_IN]-(:Entity)-[:BELONGS_TO]->(:Concept)-[:IS_A*0..2]->(c:Concept) "
        "RETURN count(DISTINCT c) AS n"
    )[0]["n"] >= 3


def test_taxonomy_load_is_idempotent_and_survives_document_deletion(db: Database, test_settings: Settings) -> None:
    _load(db, test_settings)
    before = snapshot(db)
    version = db.read("MATCH (m:KagMeta {key: 'graph'}) RETURN m.version AS v")[0]["v"]
    again = _load(db, test_settings)
    assert again.documents_skipped == 1 and again.taxonomy_concepts == 0  # same taxonomy: not rewritten
    assert snapshot(db) == before
    assert db.read("MATCH (m:KagMeta {key: 'graph'}) RETURN m.version AS v")[0]["v"] == version
    doc_id = db.read("MATCH (d:Document) RETURN d.id AS id")[0]["id"]
    delete_document(db, doc_id)
    assert db.read("MATCH (c:Concept {source: 'taxonomy'}) RETURN count(c) AS n")[0]["n"] == 25
    assert db.read("MATCH (:Concept)-[r:IS_A]->(:Concept) RETURN count(r) AS n")[0]["n"] == 19
    assert db.read("MATCH (e:Entity) RETURN count(e) AS n")[0]["n"] == 0
    assert db.read("MATCH ()-[r:BELONGS_TO]->() RETURN count(r) AS n")[0]["n"] == 0
