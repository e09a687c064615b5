"""Question-time graph queries: entity linking and exact one-hop facts, all values as parameters."""

from __future__ import annotations

import pytest

from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.solver.linking import link_entity
from kag_neo4j.store import cypher
from kag_neo4j.store.database import Database
from tests.integration.conftest import TEST_DIMENSION


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder(dimension=TEST_DIMENSION)


@pytest.fixture
def kg(db: Database, embedder: HashingEmbedder) -> Database:
    names = {"ada": ("Ada Pembroke", "Person"), "hvrc": ("Harrow Valley Rail Company", "Organization"),
             "viaduct": ("Millbrook Viaduct", "Bridge"), "kestrel": ("Kestrel Bay", "Place")}
    for key, (name, label) in names.items():
        db.write(
            "CREATE (e:Entity {id: $id, name: $name, alias_text: $name, embedding: $embedding}) "
            "SET e:$($label) RETURN e.id",
            id=key, name=name, label=label, embedding=embedder.embed_query(name),
        )
    db.write(
        """
        CREATE (c:Chunk {id: 'doc#0#0', text: 'Ada Pembroke founded the company in 1871.'})
        WITH c MATCH (e:Entity) MERGE (e)-[:MENTIONED_IN {count: 1}]->(c)
        WITH DISTINCT c
        MATCH (ada:Entity {id: 'ada'}), (h:Entity {id: 'hvrc'}), (v:Entity {id: 'viaduct'}), (k:Entity {id: 'kestrel'})
        CREATE (ada)-[:founded {year: 1871, chunk_ids: ['doc#0#0']}]->(h)
        CREATE (ada)-[:RELATED {predicate: 'designed', year: 1896, chunk_ids: ['doc#0#0'], confidence: 0.6}]->(v)
        CREATE (ada)-[:bornIn {chunk_ids: ['doc#0#0']}]->(k)
        SET h.foundedIn = 1871
        """
    )
    return db


def _one_hop(db: Database, **overrides: object) -> list[dict]:
    params: dict[str, object] = {"anchor_ids": ["ada"], "anchor_role": "s", "predicates": None, "other_ids": None,
                                 "other_type": None, "constraints": [], "limit": 10, "expected_type": None}
    params.update(overrides)
    return db.read(cypher.query("solver/one_hop"), **params)


def test_linking_prefers_the_exact_name_and_filters_by_type_value(kg: Database, embedder: HashingEmbedder) -> None:
    hits = link_entity(kg, embedder, "Harrow Valley Rail Company", k=2)
    assert hits[0].id == "hvrc"
    typed = link_entity(kg, embedder, "Pembroke", type_name="Person")
    assert [h.id for h in typed][:1] == ["ada"]


def test_linking_with_hostile_mention_and_type_is_harmless(kg: Database, embedder: HashingEmbedder) -> None:
    link_entity(kg, embedder, "Ada') DETACH DELETE n //", type_name="Person`) DETACH DELETE n //")
    assert kg.read("MATCH (e:Entity) RETURN count(e) AS n")[0]["n"] == 4


def test_one_hop_matches_schema_relation_and_open_fact_by_predicate(kg: Database) -> None:
    rows = _one_hop(kg, predicates=["founded"])
    assert [(r["subject"], r["predicate"], r["object"]) for r in rows] == [
        ("Ada Pembroke", "founded", "Harrow Valley Rail Company")]
    assert rows[0]["chunk_ids"] == ["doc#0#0"] and rows[0]["stored_forward"]
    open_rows = _one_hop(kg, predicates=["designed"])
    assert open_rows[0]["object"] == "Millbrook Viaduct" and open_rows[0]["open_fact"]


def test_one_hop_from_the_object_side_and_type_filter(kg: Database) -> None:
    rows = _one_hop(kg, anchor_ids=["hvrc"], anchor_role="o", predicates=["founded"], other_type="Person")
    assert [(r["subject"], r["object"]) for r in rows] == [("Ada Pembroke", "Harrow Valley Rail Company")]
    assert _one_hop(kg, anchor_ids=["hvrc"], anchor_role="o", predicates=["founded"], other_type="Bridge") == []


def test_one_hop_says_which_facts_reach_the_expected_type_and_keeps_the_others(kg: Database) -> None:
    rows = _one_hop(kg, expected_type="Bridge")
    assert {r["object"] for r in rows} == {"Harrow Valley Rail Company", "Millbrook Viaduct", "Kestrel Bay"}
    assert {r["object"] for r in rows if r["type_fits"]} == {"Millbrook Viaduct"}
    assert not any(r["type_fits"] for r in _one_hop(kg, expected_type="Bridge`) DETACH DELETE n //"))
    assert kg.read("MATCH (e:Entity) RETURN count(e) AS n")[0]["n"] == 4


def test_one_hop_edge_constraints(kg: Database) -> None:
    assert len(_one_hop(kg, constraints=[{"target": "p", "prop": "year", "op": ">", "value": 1880}])) == 1
    assert _one_hop(kg, constraints=[{"target": "p", "prop": "year", "op": "=", "value": 1871}])[0]["object_id"] == "hvrc"
    hostile = [{"target": "p", "prop": "year`) DETACH DELETE n //", "op": "=", "value": "x"}]
    assert _one_hop(kg, constraints=hostile) == []
    assert kg.read("MATCH ()-[r]->() RETURN count(r) AS n")[0]["n"] > 0


def test_entity_property_as_a_fact(kg: Database) -> None:
    rows = kg.read(cypher.query("solver/entity_properties"), anchor_ids=["hvrc"], predicates=["foundedin"])
    assert rows[0]["value"] == 1871 and rows[0]["chunk_ids"] == ["doc#0#0"]
