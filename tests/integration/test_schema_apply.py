"""`schema apply` against a real Neo4j: meta-graph, constraints, indexes, idempotence, injection safety."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kag_neo4j.cli.schema import app
from kag_neo4j.errors import IndexDimensionError, InvalidIdentifierError, SchemaError
from kag_neo4j.schema import DdlAction, SchemaFileError, apply_schema, load_schema, read_schema, to_rows
from kag_neo4j.schema.models import ResolvedRelation, ResolvedSchema, ResolvedType, TypeKind
from kag_neo4j.store.database import Database
from tests.integration.cli_env import connection_env

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "schemas"
EXAMPLE = Path(__file__).resolve().parents[2] / "schema" / "CompanyFinance.schema"
DIMENSION = 384  # the dimension the `db` fixture's migrations use

NODES = "MATCH (n) RETURN labels(n) AS labels, properties(n) AS props"
RELS = "MATCH (a)-[r]->(b) RETURN a.key AS a, type(r) AS type, b.key AS b, properties(r) AS props"
SCHEMA_OBJECTS = "SHOW INDEXES YIELD name, type, labelsOrTypes, properties, options RETURN *"


def _canonical(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(repr(sorted(row.items(), key=lambda kv: kv[0])) for row in rows)


def snapshot(db: Database) -> dict[str, list[str]]:
    """Everything in the database: nodes, relationships, indexes and constraints."""
    return {
        "nodes": _canonical(db.read(NODES)),
        "rels": _canonical(db.read(RELS)),
        "indexes": _canonical(db.auto_commit(SCHEMA_OBJECTS)),
        "constraints": _canonical(db.auto_commit("SHOW CONSTRAINTS YIELD name, labelsOrTypes, properties RETURN *")),
    }


def _cli_env(db: Database) -> dict[str, str | None]:
    return connection_env(db.connection) | {
        "KAG_EMBEDDER": "hashing",
        "KAG_EMBEDDING_DIMENSIONS": str(DIMENSION),
        "COLUMNS": "220",
        "NO_COLOR": "1",
    }


def _count(db: Database, cypher: str, **params: Any) -> int:
    return db.read(cypher, **params)[0]["c"]


def test_supply_chain_applies_and_show_lists_it(db: Database) -> None:
    schema = load_schema(FIXTURES / "SupplyChain.schema")
    report = apply_schema(db, schema)
    assert report.metagraph == "create" and report.changed

    assert _count(db, "MATCH (:SchemaNamespace {name: 'SupplyChain'})-[:DECLARES]->(t:SchemaType) "
                      "RETURN count(t) AS c") == 11
    assert _count(db, "MATCH (:SchemaType)-[:HAS_RELATION]->(r:SchemaRelation)-[:RANGE]->(:SchemaType) "
                      "RETURN count(r) AS c") == 20
    assert _count(db, "MATCH (p:SchemaProperty) RETURN count(p) AS c") == 14
    fund = db.read("MATCH (:SchemaType {key: 'SupplyChain.Company'})-[:HAS_RELATION]->"
                   "(r:SchemaRelation {name: 'fundTrans'})-[:HAS_PROPERTY]->(p:SchemaProperty) "
                   "WITH r, p ORDER BY p.position "
                   "RETURN r.target AS target, collect(p.name + ':' + p.value_type) AS subs")
    assert fund == [{"target": "Company", "subs": ["transDate:Text", "transAmt:Integer"]}]
    belong = db.read("MATCH (r:SchemaRelation {key: 'SupplyChain.Product.belongTo'})-[:RANGE]->(t) "
                     "RETURN r.semantic AS semantic, r.rel_type AS rel_type, t.kind AS kind")
    assert belong == [{"semantic": "IND", "rel_type": "belongTo", "kind": "ConceptType"}]
    rule = db.read("MATCH (r:SchemaRelation {key: 'SupplyChain.Company.mainSupply'}) RETURN r.rule AS rule")
    assert rule[0]["rule"].startswith("Define (s:Company)-[p:mainSupply]->(o:Company)")

    constraints = {row["name"]: row for row in db.auto_commit(
        "SHOW CONSTRAINTS YIELD name, labelsOrTypes, properties RETURN *")}
    for spg_type in schema.types:
        assert constraints[f"spg_{spg_type.label}_id"]["labelsOrTypes"] == [spg_type.label]
    assert "kag_schema_type_key" in constraints

    stored = read_schema(db, "SupplyChain")
    assert stored is not None and to_rows(stored).content() == to_rows(schema).content()

    result = CliRunner().invoke(app, ["show", "--namespace", "SupplyChain"], env=_cli_env(db))
    assert result.exit_code == 0, result.output
    for name in ("Industry", "TaxOfProduct", "Company", "Person", "CompanyEvent", "ProductChainEvent",
                 "fundTrans", "mainSupply", "sameLegalRepresentative", "hasSupplyChain", "leadTo"):
        assert name in result.output
    assert "SupplyChain: 11 types" in result.output and "SupplyChain: 20 relations" in result.output


def test_reapplying_is_a_no_op(db: Database) -> None:
    schema = load_schema(FIXTURES / "SupplyChain.schema")
    apply_schema(db, schema)
    before = snapshot(db)
    again = apply_schema(db, schema)
    assert again.metagraph == "unchanged" and not again.changed
    assert all(s.action is DdlAction.EXISTS for s in again.statements)
    assert snapshot(db) == before

    result = CliRunner().invoke(app, ["apply", str(FIXTURES / "SupplyChain.schema")], env=_cli_env(db))
    assert result.exit_code == 0, result.output
    assert "nothing to do: the schema is already applied" in result.output
    assert snapshot(db) == before


def test_cli_apply_and_dry_run(db: Database) -> None:
    env = _cli_env(db)
    before = snapshot(db)
    dry = CliRunner().invoke(app, ["apply", "--dry-run", "CompanyFinance"], env=env)
    assert dry.exit_code == 0, dry.output
    assert "would create the meta-graph" in dry.output and "spg_Company_desc_vector" in dry.output
    assert snapshot(db) == before
    applied = CliRunner().invoke(app, ["apply", "CompanyFinance"], env=env)
    assert applied.exit_code == 0, applied.output
    assert "created the meta-graph" in applied.output
    assert read_schema(db, "CompanyFinance") is not None


def test_example_indexes_serve_queries(db: Database) -> None:
    apply_schema(db, load_schema(EXAMPLE), dimensions=DIMENSION)
    indexes = {row["name"]: row for row in db.auto_commit(SCHEMA_OBJECTS)}
    text = indexes["spg_Company_text"]
    assert (text["type"], text["labelsOrTypes"], text["properties"]) == ("FULLTEXT", ["Company"], ["desc", "legalName"])
    vector = indexes["spg_Filing_summary_vector"]
    assert vector["type"] == "VECTOR" and vector["properties"] == ["summary_embedding"]
    assert vector["options"]["indexConfig"]["vector.dimensions"] == DIMENSION
    assert "spg_Industry_text" not in indexes

    db.write("CREATE (:Company:Organization {id: 'c1', legalName: 'Acme Semiconductor Holdings', "
             "desc: 'Makes chips', desc_embedding: [i IN range(1, $d) | toFloat(i % 7)]})", d=DIMENSION)
    hits = db.read("CALL db.index.fulltext.queryNodes('spg_Company_text', 'semiconductor') "
                   "YIELD node RETURN node.id AS id")
    assert hits == [{"id": "c1"}]
    nearest = db.read("CALL db.index.vector.queryNodes('spg_Company_desc_vector', 1, "
                      "[i IN range(1, $d) | toFloat(i % 7)]) YIELD node, score RETURN node.id AS id, score",
                      d=DIMENSION)
    assert nearest[0]["id"] == "c1" and nearest[0]["score"] == pytest.approx(1.0, abs=1e-3)
    with pytest.raises(Exception, match="already exists"):
        db.write("CREATE (:Company {id: 'c1'})")


def test_changed_schema_replaces_the_metagraph(db: Database, tmp_path: Path) -> None:
    apply_schema(db, load_schema(FIXTURES / "SupplyChain.schema"))
    text = (FIXTURES / "SupplyChain.schema").read_text(encoding="utf-8")
    text = text.replace("Trend(趋势): ConceptType\n\thypernymPredicate: isA\n", "")
    text = text.replace("\t\ttrend(趋势): Trend\n", "")
    changed = tmp_path / "SupplyChain.schema"
    changed.write_text(text, encoding="utf-8")
    report = apply_schema(db, load_schema(changed))
    assert report.metagraph == "update"
    names = [row["name"] for row in db.read("MATCH (t:SchemaType {namespace: 'SupplyChain'}) RETURN t.name AS name")]
    assert len(names) == 10 and "Trend" not in names
    assert _count(db, "MATCH (r:SchemaRelation {namespace: 'SupplyChain', name: 'trend'}) RETURN count(r) AS c") == 0
    assert _count(db, "MATCH (n:SchemaType|SchemaRelation|SchemaProperty) WHERE NOT (n)--() RETURN count(n) AS c") == 0


def test_fulltext_index_is_widened_for_a_second_namespace(empty_db: Database) -> None:
    first = load_schema_text("namespace First\nPerson: EntityType\n  properties:\n    desc: Text\n      index: Text\n")
    second = load_schema_text("namespace Second\nPerson: EntityType\n  properties:\n    bio: Text\n"
                              "      index: Text\n")
    apply_schema(empty_db, first)
    report = apply_schema(empty_db, second)
    assert [s.action for s in report.statements if s.kind == "fulltext"] == [DdlAction.REPLACE]
    index = next(row for row in empty_db.auto_commit(SCHEMA_OBJECTS) if row["name"] == "spg_Person_text")
    assert index["properties"] == ["desc", "bio"]
    again = apply_schema(empty_db, first)
    assert not again.changed  # never narrowed back
    assert {row["name"] for row in empty_db.read("MATCH (n:SchemaNamespace) RETURN n.name AS name")} == {"First",
                                                                                                     "Second"}


def load_schema_text(text: str) -> ResolvedSchema:
    from kag_neo4j.schema import parse_schema, validate_schema

    return validate_schema(parse_schema(text, source="inline.schema"))


def test_dimension_mismatch_changes_nothing(db: Database) -> None:
    schema = load_schema(EXAMPLE)
    apply_schema(db, schema, dimensions=DIMENSION)
    before = snapshot(db)
    with pytest.raises(IndexDimensionError, match="has dimension 384, but the configured embedder has 16"):
        apply_schema(db, schema, dimensions=16)
    assert snapshot(db) == before


HOSTILE = "Evil` DETACH DELETE n //"


def test_hostile_names_leave_the_database_unchanged(db: Database, tmp_path: Path) -> None:
    apply_schema(db, load_schema(FIXTURES / "SupplyChain.schema"))
    db.write("CREATE (:Company {id: 'keep-me'})")
    before = snapshot(db)

    evil_file = tmp_path / "Evil.schema"
    evil_file.write_text(f"namespace SupplyChain\n\n{HOSTILE}: EntityType\n", encoding="utf-8")
    with pytest.raises(SchemaFileError, match=r"Evil.schema:3:1: expected a type name"):
        load_schema(evil_file)
    result = CliRunner().invoke(app, ["apply", str(evil_file)], env=_cli_env(db))
    assert result.exit_code == 1 and "Evil.schema:3:1:" in result.stderr.replace("\n", "")

    relation_file = tmp_path / "EvilRel.schema"
    relation_file.write_text("namespace SupplyChain\nA: EntityType\n  relations:\n    x}]-(m) DETACH DELETE m//: A\n",
                             encoding="utf-8")
    with pytest.raises(SchemaFileError, match=r":4:5: expected a property or relation name"):
        load_schema(relation_file)

    # hand-built models that skip validation are refused before anything is written
    evil_type = ResolvedType.model_construct(name="Evil", label=HOSTILE, labels=(HOSTILE,), kind=TypeKind.ENTITY,
                                             properties=(), relations=(), extras={})
    with pytest.raises((SchemaError, InvalidIdentifierError)):
        apply_schema(db, ResolvedSchema.model_construct(namespace="SupplyChain", source="x", types=(evil_type,),
                                                        warnings=()))
    evil_relation = ResolvedRelation.model_construct(name=HOSTILE, source="Company", target="Company",
                                                     properties=())
    good = load_schema(FIXTURES / "SupplyChain.schema")
    company = good.get_type("Company").model_copy(update={"relations": (evil_relation,)})
    smuggled = good.model_copy(update={"types": (company,)})
    with pytest.raises((SchemaError, InvalidIdentifierError)):
        apply_schema(db, smuggled)
    with pytest.raises((SchemaError, InvalidIdentifierError)):
        apply_schema(db, ResolvedSchema.model_construct(namespace=HOSTILE, source="x", types=(), warnings=()))

    assert snapshot(db) == before
