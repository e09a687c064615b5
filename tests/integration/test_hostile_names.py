"""Hostile names end to end on a real Neo4j: types, predicates, roles, property keys and column
names through ``load``; hostile questions, mentions and plans through ``KAG.ask``. Nothing is
executed, nothing outside the data model is created, and a mention of punctuation only does not
fail the question (the corpus and the checks: ``tests/integration/hostile_names.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kag_neo4j.api import KAG
from kag_neo4j.builder.pipeline import LoadOptions, load
from kag_neo4j.config import Settings
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.models.scripted import ScriptedLLM
from kag_neo4j.schema import parse_schema, validate_schema
from kag_neo4j.schema.apply import apply_schema
from kag_neo4j.solver.graph_schema import read_graph_schema
from kag_neo4j.store import cypher
from kag_neo4j.store.database import Database
from tests.integration.conftest import TEST_DIMENSION
from tests.integration.hostile_names import (
    HOSTILE_SCHEMA,
    Audit,
    executed_payloads,
    extraction_llm,
    hostile_documents,
    hostile_plan,
    hostile_tables,
    planner_llm,
    plant_canary,
)
from tests.integration.solver_fixtures import write_fixture_graph

#: a representative subset of HOSTILE_NAMES: quoting breakers, payloads, reserved names, look-alikes
NAMES = [
    "Person`) MATCH (c:Canary) DETACH DELETE c //",
    "})-[:X]->(",
    "a\nMATCH (c:Canary) DETACH DELETE c",
    "name' }) MATCH (c:Canary) SET c.pwned = true //",
    "{{ CREATE (:Pwned) }}",
    "Chunk", "Document", "CITES", "cites", "KagRun",
    "Ｃｈｕｎｋ", "Сhunk", "Area²",
    "embedding", "chunk_ids",
]
LOOKALIKES = {"Ｃｈｕｎｋ", "Сhunk", "Area²"}



@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder(dimension=TEST_DIMENSION)


def _no_violations(audit: Audit, db: Database) -> None:
    assert executed_payloads(db) == []
    findings = audit.findings()
    assert findings == {key: [] for key in findings}, findings
    assert not audit.snapshot_now().keys & LOOKALIKES, "look-alike property keys are refused, not stored"


def test_hostile_extractions_in_full_mode_are_refused_or_neutralised(
    db: Database, test_settings: Settings, embedder: HashingEmbedder
) -> None:
    schema = validate_schema(parse_schema(HOSTILE_SCHEMA, source="hostile.schema"))
    apply_schema(db, schema)
    plant_canary(db)
    audit = Audit(db, [schema]).start()
    summary = load([], db, test_settings, LoadOptions(mode="full", spg_schema=schema),
                   documents=hostile_documents(NAMES), llm=extraction_llm(NAMES), embedder=embedder)
    assert summary.documents_loaded == len(NAMES) and summary.issues > 0
    _no_violations(audit, db)
    # the schema's Chunk type is stored under SpgChunk; an extracted "Chunk" is that type, never a chunk
    assert {row["label"] for row in db.read("MATCH (e:Entity) UNWIND labels(e) AS label RETURN DISTINCT label")} \
        <= {"Entity", "Person", "Company", "SpgChunk"}
    assert db.read("MATCH (n:Chunk) WHERE n:Entity OR n:Event RETURN count(n) AS n")[0]["n"] == 0
    # hostile predicates are open facts: their text is a value, never a relationship type
    predicates = {row["p"] for row in db.read("MATCH ()-[r:RELATED]->() RETURN DISTINCT r.predicate AS p")}
    assert "})-[:X]->(" in predicates and "CITES" in predicates
    assert db.read("MATCH ()-[r:founded]->() RETURN count(r) AS n")[0]["n"] >= 1


def test_hostile_column_names_in_structured_records_are_refused_or_neutralised(
    db: Database, test_settings: Settings, embedder: HashingEmbedder, tmp_path: Path
) -> None:
    plant_canary(db)
    audit = Audit(db).start()
    paths = hostile_tables(tmp_path / "tables", NAMES)
    summary = load([str(path) for path in paths], db, test_settings, LoadOptions(mode="full"),
                   llm=extraction_llm([]), embedder=embedder)
    assert summary.documents_loaded >= len(paths) and not summary.read_failures and summary.issues > 0
    _no_violations(audit, db)
    assert db.read("MATCH (e:Entity) RETURN count(e) AS n")[0]["n"] > 0
    assert db.read("MATCH (n) WHERE (n:Entity OR n:Event) AND (n:Chunk OR n:Document) RETURN count(n) AS n"
                   )[0]["n"] == 0


@pytest.mark.parametrize("mention", ["—", "?!"])
def test_a_mention_of_punctuation_only_does_not_fail_ask(db: Database, embedder: HashingEmbedder, mention: str) -> None:
    write_fixture_graph(db, embedder)
    answer = KAG(db, planner_llm(hostile_plan(mention)), embedder).ask("Who founded it?")
    retrieval = next(step for step in answer.steps if step.op == "Retrieval")
    assert retrieval.error is None, retrieval.error
    assert not answer.known


def test_hostile_questions_and_plans_execute_nothing(db: Database, embedder: HashingEmbedder) -> None:
    write_fixture_graph(db, embedder)
    plant_canary(db)
    audit = Audit(db).start()
    cases = [
        ("?!", hostile_plan("?!")),
        ("Who founded `) MATCH (c:Canary) DETACH DELETE c //?",
         hostile_plan("') YIELD node MATCH (c:Canary) DETACH DELETE c //", "Chunk`) CREATE (:Pwned) //", "CITES")),
        ("*:* OR name:* AND /regex/ ~ ^2 [a TO z] \\", hostile_plan("*:*", "Document", "})-[:X]->(")),
        ("Which Chunk CITES the Document?", hostile_plan("Ada Pembroke", "KagRun", "HAS_STEP")),
    ]
    for question, plan in cases:
        answer = KAG(db, planner_llm(plan), embedder).ask(question)
        assert all(step.error is None for step in answer.steps if step.op == "Retrieval"), answer.steps
    _no_violations(audit, db)


def test_the_planner_vocabulary_leaves_out_kag_neo4j_own_labels_and_types(
    db: Database, embedder: HashingEmbedder
) -> None:
    write_fixture_graph(db, embedder)
    plan = {"logical_form": (
        "Step1: Who founded the Harrow Valley Rail Company?\n"
        "Action1: Retrieval(s=s1:Person, p=p1:founded, o=o1:Organization[`Harrow Valley Rail Company`])\n"
        "Action2: Output(s1)")}
    answer = KAG(db, planner_llm(plan), embedder).ask("Who founded the Harrow Valley Rail Company?")
    assert answer.citations, "the trace holds (:KagRun)-[:CITES]->(:Chunk) edges"
    assert db.read("MATCH (:KagRun)-[r:CITES]->(:Chunk) RETURN count(r) AS n")[0]["n"] > 0
    vocabulary = read_graph_schema(db)
    assert "founded" in vocabulary.relations and "Person" in vocabulary.types
    assert not set(vocabulary.relations) & {"CITES", "HAS_STEP", "USED", "MENTIONED_IN", "PART_OF", "RELATED"}
    assert not set(vocabulary.types) & {"KagRun", "KagStep", "Chunk", "Document", "Entity", "KagTestDatabase"}
    assert "CITES" not in vocabulary.summary()


def test_labels_that_cypher_cannot_read_unquoted_are_written_quoted(
    db: Database, test_settings: Settings, embedder: HashingEmbedder
) -> None:
    # ௰ (Tamil number ten) is a Unicode number a name may hold, but not an unquoted Cypher identifier
    schema = validate_schema(parse_schema("namespace Tamil\nகல௰: EntityType\n  relations:\n    மக௰: கல௰\n"))
    apply_schema(db, schema)
    answer = {"entities": [{"name": "Ada Pembroke", "type": "கல௰"}, {"name": "Harrow Rail", "type": "கல௰"}],
              "relations": [{"subject": "Ada Pembroke", "predicate": "மக௰", "object": "Harrow Rail"}]}
    summary = load([], db, test_settings, LoadOptions(mode="full", spg_schema=schema),
                   documents=hostile_documents(["x"]), llm=ScriptedLLM(lambda messages: answer), embedder=embedder)
    assert summary.documents_loaded == 1
    assert db.read("MATCH (e:`கல௰`) RETURN count(e) AS n")[0]["n"] == 2
    assert db.read("MATCH ()-[r:`மக௰`]->() RETURN count(r) AS n")[0]["n"] == 1


@pytest.mark.parametrize("query", ["solver/concept_widen", "link_entities"])
def test_an_empty_lucene_query_skips_the_fulltext_call(db: Database, embedder: HashingEmbedder, query: str) -> None:
    write_fixture_graph(db, embedder)
    params = {"mention": "—", "mention_query": "", "mention_vector": embedder.embed_query("—"), "type": None,
              "k_candidates": 10, "min_similarity": 0.99, "rrf_k": 60, "k": 3}
    folder = "procedures" if query == "link_entities" else "cypher"
    assert db.read(cypher.query(query, folder), **params) == []
