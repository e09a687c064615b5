"""Full mode with a schema: schema types become labels, schema relations typed relationships,
events typed nodes with role edges; every fact carries its source chunk ids.

The LLM is the scripted test double (the real offline model is exercised by the manual runs in
docs/builder.md); it answers each chunk with a prepared extraction.
"""

from __future__ import annotations

import hashlib

import pytest

from kag_neo4j.builder.pipeline import LoadOptions, load
from kag_neo4j.builder.records import SourceDocument
from kag_neo4j.config import Settings
from kag_neo4j.models.base import ChatMessage
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.models.scripted import ScriptedLLM
from kag_neo4j.resources import resource_dir
from kag_neo4j.schema.validate import load_schema
from kag_neo4j.store.database import Database
from tests.integration.conftest import TEST_DIMENSION

ACME = "Acme Corp was founded in 1990. Jane Doe works for Acme Corp. Acme Corp is a subsidiary of Globex."
GLOBEX = "Globex acquired Initech in 2020. Jane Doe met John Roe at the Globex office in Springfield."

ANSWERS = {
    "Jane Doe works for": {
        "entities": [
            {"name": "Acme Corp", "type": "Company", "description": "a company founded in 1990",
             "properties": {"foundedYear": "1990"}},
            {"name": "Jane Doe", "type": "Person"},
            {"name": "Globex", "type": "Company", "aliases": ["Globex Corporation"]},
        ],
        "relations": [
            {"subject": "Jane Doe", "predicate": "worksFor", "object": "Acme Corp",
             "properties": {"since": "2015", "chunk_ids": "an extracted key must not clobber provenance"}},
            {"subject": "Acme Corp", "predicate": "subsidiary of", "object": "Globex"},
            {"subject": "Acme Corp", "predicate": "subsidiaryOf", "object": "Globex"},
        ],
    },
    "Globex acquired Initech": {
        "entities": [
            {"name": "Globex", "type": "Company"},
            {"name": "Initech", "type": "Company"},
            {"name": "Jane Doe", "type": "Person"},
            {"name": "John Roe", "type": "Person"},
            {"name": "Springfield", "type": "City"},
        ],
        "events": [
            {"name": "Globex acquires Initech", "type": "Acquisition",
             "roles": {"subject": "Globex", "target": "Initech"}, "properties": {"occurredOn": "2020"}},
        ],
        "relations": [
            {"subject": "Jane Doe", "predicate": "met", "object": "John Roe", "properties": {"year": "2021"}},
            {"subject": "Globex", "predicate": "has office in", "object": "Springfield"},
        ],
    },
}


def _answer(messages: list[ChatMessage]) -> dict:
    text = messages[-1].content
    for key, answer in ANSWERS.items():
        if key in text:
            return answer
    return {"entities": [], "relations": []}


def _doc(doc_id: str, text: str) -> SourceDocument:
    return SourceDocument(id=doc_id, title=doc_id, source=f"test:{doc_id}.md", text=f"# {doc_id}\n\n{text}\n",
                          media_type="text/markdown", sha256=hashlib.sha256(text.encode()).hexdigest())


@pytest.fixture
def loaded(db: Database, test_settings: Settings) -> tuple[Database, ScriptedLLM, object]:
    schema = load_schema(str(resource_dir("schema") / "CompanyFinance.schema"))
    llm = ScriptedLLM(_answer)
    summary = load([], db, test_settings, LoadOptions(mode="full", spg_schema=schema),
                   documents=[_doc("acme", ACME), _doc("globex", GLOBEX)], llm=llm,
                   embedder=HashingEmbedder(TEST_DIMENSION))
    return db, llm, summary


def test_schema_types_become_labels(loaded: tuple) -> None:
    db, _, summary = loaded
    labels = {row["name"]: set(row["labels"]) for row in db.read("MATCH (e:Entity) RETURN e.name AS name, labels(e) AS labels")}
    assert labels["Acme Corp"] == {"Entity", "Company", "Organization"}
    assert labels["Jane Doe"] == {"Entity", "Person"}
    assert labels["Springfield"] == {"Entity"}  # City is not in the schema: kept generic, reported
    assert db.read("MATCH (e:Entity {name: 'Springfield'}) RETURN e.semantic_type AS t")[0]["t"] == "City"
    assert summary.issues > 0
    # a literal property of the schema type is a node property
    assert db.read("MATCH (e:Entity {name: 'Acme Corp'}) RETURN e.foundedYear AS y")[0]["y"] in ("1990", 1990)
    # Globex is one node although it was mentioned in both documents; its alias is kept
    globex = db.read("MATCH (e:Entity {name: 'Globex'})-[:MENTIONED_IN]->(c) RETURN e.aliases AS aliases, count(c) AS n")
    assert globex[0]["n"] == 2 and "Globex Corporation" in globex[0]["aliases"]


def test_schema_relations_are_typed_and_others_open(loaded: tuple) -> None:
    db, _, _ = loaded
    works = db.read("MATCH (:Entity {name: 'Jane Doe'})-[r:worksFor]->(:Entity {name: 'Acme Corp'}) "
                    "RETURN r.chunk_ids AS c, r.since AS since")
    assert len(works) == 1 and works[0]["c"] and works[0]["c"][0].startswith("acme#")
    assert works[0]["since"] in ("2015", 2015)
    met = db.read("MATCH (:Entity {name: 'Jane Doe'})-[r:RELATED {predicate: 'met'}]->() RETURN r.year AS year")
    assert [row["year"] for row in met] in (["2021"], [2021])
    # "subsidiary of" and "subsidiaryOf" both name the schema relation: one typed edge
    assert db.read("MATCH (:Entity {name: 'Acme Corp'})-[r:subsidiaryOf]->(:Entity {name: 'Globex'}) RETURN count(r) AS n"
                   )[0]["n"] == 1
    open_facts = {row["p"] for row in db.read("MATCH ()-[r:RELATED]->() RETURN r.predicate AS p")}
    assert open_facts == {"met", "has office in"}


def test_events_are_typed_nodes_with_role_edges(loaded: tuple) -> None:
    db, _, _ = loaded
    rows = db.read(
        "MATCH (v:Event)-[r]->(e:Entity) RETURN labels(v) AS labels, type(r) AS role, e.name AS name, r.chunk_ids AS c, "
        "v.occurredOn AS when"
    )
    roles = {row["role"]: row["name"] for row in rows}
    assert roles == {"subject": "Globex", "target": "Initech"}
    assert set(rows[0]["labels"]) == {"Event", "Acquisition", "CorporateEvent"}
    assert all(row["c"] for row in rows)
    assert db.read("MATCH (v:Event)-[:MENTIONED_IN]->(c:Chunk) RETURN count(c) AS n")[0]["n"] == 1


def test_every_fact_carries_its_source_chunks(loaded: tuple) -> None:
    db, _, _ = loaded
    rows = db.read(
        "MATCH (a)-[r]->(b) WHERE (a:Entity OR a:Event) AND (b:Entity OR b:Event OR b:Concept) "
        "RETURN type(r) AS type, r.chunk_ids AS chunks, r.doc_ids AS docs"
    )
    assert rows
    chunk_ids = {row["id"] for row in db.read("MATCH (c:Chunk) RETURN c.id AS id")}
    for row in rows:
        assert row["chunks"], row
        assert set(row["chunks"]) <= chunk_ids
        assert set(row["docs"]) <= {"acme", "globex"}


def test_reloading_costs_no_model_calls(db: Database, test_settings: Settings, loaded: tuple) -> None:
    _, llm, summary = loaded
    # one call per chunk, and the schema fill of the one chunk whose title names a typed entity (Globex)
    assert summary.llm_calls == 3 and len(llm.calls) == 3
    schema = load_schema(str(resource_dir("schema") / "CompanyFinance.schema"))
    again = ScriptedLLM(_answer)
    second = load([], db, test_settings, LoadOptions(mode="full", spg_schema=schema),
                  documents=[_doc("acme", ACME), _doc("globex", GLOBEX)], llm=again,
                  embedder=HashingEmbedder(TEST_DIMENSION))
    assert second.documents_skipped == 2 and len(again.calls) == 0
