"""The predicate key's Python form (kag_neo4j.store.keys.predicate_key) and its Cypher form in
one_hop.cypher / entity_properties.cypher agree on tricky names, on the real Neo4j."""

from __future__ import annotations

from collections import defaultdict

import pytest

from kag_neo4j.store import cypher
from kag_neo4j.store.database import Database
from kag_neo4j.store.keys import predicate_key

TRICKY = [
    "plays for", "plays_for", "PLAYS-FOR", "PlaysFor", "ｐｌａｙｓＦｏｒ", "plays\tfor", "plays\nfor", "plays\u00a0for",
    "plays\u3000for", "plays__for", "plays.for", "plays/for", "Café owner", "CAFÉ OWNER", "Cafe\u0301 owner",
    "cafe owner", "Straße", "STRASSE", "ΟΔΟΣ", "οδος", "İstanbul", "ﬁrst", "first", "生于", "生 于", "x'y", "a`b",
]


def _classes(names: list[str]) -> dict[str, set[str]]:
    by_key: dict[str, set[str]] = defaultdict(set)
    for name in names:
        by_key[predicate_key(name)].add(name)
    return {name: by_key[predicate_key(name)] for name in names}


@pytest.fixture
def graph(db: Database) -> Database:
    db.write(
        """
        CREATE (a:Entity {id: 'anchor', name: 'Anchor'})-[:MENTIONED_IN {count: 1}]->(:Chunk {id: 'c'})
        WITH a UNWIND range(0, size($names) - 1) AS i
        CREATE (a)-[:RELATED {predicate: $names[i], confidence: 1.0, chunk_ids: []}]->
               (:Entity {id: 'other' + toString(i), name: 'Other ' + toString(i)})
        """,
        names=TRICKY,
    )
    db.write("MATCH (a:Entity {id: 'anchor'}) SET a += $props", props={name: i for i, name in enumerate(TRICKY)})
    return db


def test_one_hop_matches_exactly_the_predicates_of_the_same_python_key(graph: Database) -> None:
    expected = _classes(TRICKY)
    for name in TRICKY:
        rows = graph.read(cypher.query("solver/one_hop"), anchor_ids=["anchor"], anchor_role="s", other_ids=None,
                          other_type=None, expected_type=None, constraints=[], predicates=[predicate_key(name)],
                          limit=100)
        assert {row["predicate"] for row in rows} == expected[name], repr(name)


def test_entity_properties_match_exactly_the_keys_of_the_same_python_key(graph: Database) -> None:
    expected = _classes(TRICKY)
    for name in TRICKY:
        rows = graph.read(cypher.query("solver/entity_properties"), anchor_ids=["anchor"],
                          predicates=[predicate_key(name)])
        assert {row["predicate"] for row in rows} == expected[name], repr(name)


def test_the_key_folds_case_width_and_separators_but_keeps_accents_and_punctuation() -> None:
    assert {predicate_key(n) for n in TRICKY[:9]} == {"playsfor"}
    assert predicate_key("Café owner") == predicate_key("Cafe\u0301 owner") != predicate_key("cafe owner")
    assert predicate_key("plays.for") != predicate_key("plays for")
