"""Queries rewritten for a knowledge base: what is prefixed, what is left alone (no database)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kag_neo4j.config import load_settings
from kag_neo4j.errors import ConfigError
from kag_neo4j.store.knowledge_base import KnowledgeBase, check_kb_name, scoped

ROOT = Path(__file__).resolve().parents[3]
LEGAL = KnowledgeBase("legal")


def test_node_labels_in_patterns_and_predicates_take_the_prefix() -> None:
    text = LEGAL.rewrite(
        "MATCH (c:Chunk)-[:PART_OF]->(d:Document {id: $id}) WHERE c:Chunk OR c:Entity:Person SET c:Seen RETURN c")
    assert text == (
        "MATCH (c:legal__Chunk)-[:PART_OF]->(d:legal__Document {id: $id}) "
        "WHERE c:legal__Chunk OR c:legal__Entity:legal__Person SET c:legal__Seen RETURN c"
    )


def test_relationship_types_map_keys_strings_and_comments_are_left_alone() -> None:
    query = (
        "// (n:Chunk) in a comment\n"
        "MATCH (a:Entity)-[r:RELATED|IS_A*0..2 {kind: 'x'}]->(b) "
        "WITH {id: b.id, kind: CASE WHEN b:Chunk THEN 'Chunk' ELSE 'Entity' END} AS m, 'n:Chunk' AS s "
        "RETURN m, s, [x IN [a, b] WHERE x:Concept | x.id] AS ids, a.name IS :: STRING AS typed"
    )
    assert LEGAL.rewrite(query) == (
        "// (n:Chunk) in a comment\n"
        "MATCH (a:legal__Entity)-[r:RELATED|IS_A*0..2 {kind: 'x'}]->(b) "
        "WITH {id: b.id, kind: CASE WHEN b:legal__Chunk THEN 'Chunk' ELSE 'Entity' END} AS m, 'n:Chunk' AS s "
        "RETURN m, s, [x IN [a, b] WHERE x:legal__Concept | x.id] AS ids, a.name IS :: STRING AS typed"
    )


def test_backticked_labels_and_block_subqueries() -> None:
    query = "CALL (n) { MATCH (n)-[:MENTIONED_IN]->(c:`Chunk`) WHERE NOT c:`Odd``Name` RETURN c } RETURN c"
    assert LEGAL.rewrite(query) == (
        "CALL (n) { MATCH (n)-[:MENTIONED_IN]->(c:`legal__Chunk`) WHERE NOT c:`legal__Odd``Name` RETURN c } RETURN c"
    )


def test_labels_are_read_without_the_prefix() -> None:
    text = LEGAL.rewrite("MATCH (e:Entity) RETURN [l IN labels(e) WHERE l <> 'Entity'] AS types")
    assert "labels(e) WHERE __kb_l STARTS WITH $kb_prefix | substring(__kb_l, size($kb_prefix))" in text
    assert KnowledgeBase().rewrite("MATCH (e:Entity) RETURN labels(e)") == "MATCH (e:Entity) RETURN labels(e)"


@pytest.mark.parametrize("kb", [KnowledgeBase(), LEGAL])
def test_db_labels_lists_the_knowledge_base_s_own_labels(kb: KnowledgeBase) -> None:
    text = kb.rewrite("CALL db.labels() YIELD label RETURN collect(label) AS labels")
    assert "__kb_label STARTS WITH $kb_prefix AND NOT substring(__kb_label, size($kb_prefix)) CONTAINS '__'" in text
    raw = "CALL db.labels() YIELD label AS stored RETURN collect(stored) AS labels"
    assert kb.rewrite(raw) == raw  # every KB's labels: how `kb list` finds them


def test_index_and_constraint_names_take_the_prefix() -> None:
    ddl = "CREATE VECTOR INDEX chunk_embedding IF NOT EXISTS FOR (n:Chunk) ON n.embedding"
    assert LEGAL.rewrite(ddl) == (
        "CREATE VECTOR INDEX legal__chunk_embedding IF NOT EXISTS FOR (n:legal__Chunk) ON n.embedding")
    assert LEGAL.rewrite("DROP CONSTRAINT `person_id` IF EXISTS") == "DROP CONSTRAINT `legal__person_id` IF EXISTS"
    probe = "CALL db.index.vector.queryNodes('chunk_embedding', $k, $v) YIELD node RETURN node.index AS index"
    assert LEGAL.rewrite(probe) == (
        "CALL db.index.vector.queryNodes('legal__chunk_embedding', $k, $v) YIELD node RETURN node.index AS index")


def test_an_unnamed_index_is_refused_in_a_knowledge_base() -> None:
    with pytest.raises(ValueError, match="needs a name"):
        LEGAL.rewrite("CREATE INDEX IF NOT EXISTS FOR (n:Chunk) ON (n.id)")


def test_the_default_knowledge_base_keeps_queries_as_written() -> None:
    query = "MATCH (c:Chunk) CALL db.index.fulltext.queryNodes('chunk_fulltext', $q) YIELD node RETURN labels(node)"
    assert KnowledgeBase().rewrite(query) == query


def test_every_query_of_the_product_rewrites() -> None:
    """Each .cypher file (templates as written: their variables are backticked labels) has a form in a KB,
    and no label of kag-neo4j's own graph is left unprefixed in a node pattern."""
    files = [*ROOT.glob("cypher/**/*.cypher"), *ROOT.glob("procedures/*.cypher"), *ROOT.glob("migrations/*.cypher")]
    assert len(files) > 100
    for path in files:
        text = re.sub(r"//[^\n]*|'[^']*'", "", LEGAL.rewrite(path.read_text(encoding="utf-8")))
        for label in ("Chunk", "Entity", "Document", "Concept", "KagRun", "KagStep", "KagMeta", "SchemaType"):
            assert f"(n:{label})" not in text and f":{label} " not in text, (path.name, label)


@pytest.mark.parametrize(
    "name", ["", "Legal", "le-gal", "a__b", "1kb", "kb_", "x" * 32, "kb`) DETACH DELETE n //", "ｌｅｇａｌ"])
def test_hostile_or_malformed_names_are_refused(name: str) -> None:
    with pytest.raises(ConfigError, match="knowledge base name"):
        check_kb_name(name)
    with pytest.raises(ConfigError, match="KAG_KB"):
        load_settings(kb=name)


def test_names_that_are_allowed() -> None:
    assert [KnowledgeBase(n).prefix for n in ("default", "legal", "risk_2026")] == ["", "legal__", "risk_2026__"]
    assert LEGAL.owns("legal__Chunk") and not LEGAL.owns("Chunk") and not LEGAL.owns("legal__x__Chunk")
    assert KnowledgeBase().owns("Chunk") and not KnowledgeBase().owns("legal__Chunk")
    assert scoped("MATCH (n:Chunk) RETURN n", "") == "MATCH (n:Chunk) RETURN n"


def test_label_expressions_in_node_patterns() -> None:
    assert LEGAL.rewrite("MATCH (s:Entity|Event)-[r]->() RETURN [x IN [1] WHERE s:Entity | x] AS xs") == (
        "MATCH (s:legal__Entity|legal__Event)-[r]->() RETURN [x IN [1] WHERE s:legal__Entity | x] AS xs"
    )


def test_a_schema_type_cannot_take_a_name_that_looks_like_another_knowledge_base_s_label() -> None:
    from kag_neo4j.errors import InvalidIdentifierError
    from kag_neo4j.schema import naming

    with pytest.raises(InvalidIdentifierError, match="separates a knowledge base"):
        naming.label_for("legal__Person")
    assert naming.label_for("legal_Person") == "legal_Person"
