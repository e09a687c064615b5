"""Planning apply without a database: statements, reconciliation with what exists, meta-graph rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from kag_neo4j.errors import ConfigError, IndexDimensionError, SchemaError
from kag_neo4j.schema import DdlAction, apply_schema, load_schema, to_rows, validate_schema
from kag_neo4j.schema.apply import (
    Existing,
    _reconcile,
    fulltext_statement,
    needs_dimensions,
    plan_statements,
    schema_statements,
    vector_statement,
)
from kag_neo4j.schema.metagraph import to_document

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "schemas"
EXAMPLE = Path(__file__).resolve().parents[3] / "schema" / "CompanyFinance.schema"


@pytest.fixture(scope="module")
def finance():  # noqa: ANN201 - fixture
    return load_schema(EXAMPLE)


def test_statements_for_the_example(finance) -> None:  # noqa: ANN001
    statements = {s.name: s for s in schema_statements(finance, 384)}
    company_id = statements["spg_Company_id"]
    assert company_id.cypher.splitlines()[-1] == (
        "CREATE CONSTRAINT `spg_Company_id` IF NOT EXISTS FOR (n:`Company`) REQUIRE n.`id` IS UNIQUE")
    company_text = statements["spg_Company_text"]
    assert company_text.properties == ("desc", "legalName")  # inherited from Organization
    assert "ON EACH [n.`desc`, n.`legalName`]" in company_text.cypher
    vector = statements["spg_Company_desc_vector"]
    assert vector.properties == ("desc_embedding",) and vector.params == {"dimensions": 384}
    assert "ON (n.`desc_embedding`)" in vector.cypher and "$dimensions" in vector.cypher
    assert "spg_Industry_text" not in statements  # no indexed properties
    assert {s.kind for s in statements.values()} == {"constraint", "fulltext", "vector"}
    assert sum(1 for s in statements.values() if s.kind == "constraint") == len(finance.types)


def test_vector_indexes_need_a_dimension(finance) -> None:  # noqa: ANN001
    assert needs_dimensions(finance)
    with pytest.raises(ConfigError, match="--dimensions"):
        schema_statements(finance, None)
    supply = load_schema(FIXTURES / "SupplyChain.schema")
    assert not needs_dimensions(supply)
    assert schema_statements(supply, None)


@pytest.mark.parametrize("bad", [0, -1, 5000, True, 3.5])
def test_invalid_dimensions(bad: object) -> None:
    with pytest.raises(ConfigError):
        vector_statement("A", "p", "p_embedding", bad)  # type: ignore[arg-type]


def _index(name: str, kind: str, label: str, props: list[str], dims: int | None = None) -> dict:
    return {"name": name, "type": kind, "entityType": "NODE", "labelsOrTypes": [label], "properties": props,
            "dimensions": dims}


def test_reconcile_constraints() -> None:
    statement = schema_statements(load_schema(FIXTURES / "SupplyChain.schema"), None)[0]
    assert statement.name == "spg_Industry_id"
    same = {"name": "spg_Industry_id", "type": "UNIQUENESS", "entityType": "NODE", "labelsOrTypes": ["Industry"],
            "properties": ["id"]}
    assert _reconcile(statement, Existing(constraints=[same])).action is DdlAction.EXISTS
    other = dict(same, name="industry_id")
    covered = _reconcile(statement, Existing(constraints=[other]))
    assert covered.action is DdlAction.EXISTS and covered.note == "covered by industry_id"
    clash = dict(same, labelsOrTypes=["Other"])
    with pytest.raises(SchemaError, match="spg_Industry_id exists with another definition"):
        _reconcile(statement, Existing(constraints=[clash]))
    assert _reconcile(statement, Existing()).action is DdlAction.CREATE


def test_reconcile_fulltext_widens_never_narrows() -> None:
    statement = fulltext_statement("Company", ["desc", "legalName"])
    superset = Existing(indexes=[_index("spg_Company_text", "FULLTEXT", "Company", ["legalName", "desc", "x"])])
    assert _reconcile(statement, superset).action is DdlAction.EXISTS
    partial = Existing(indexes=[_index("spg_Company_text", "FULLTEXT", "Company", ["summary", "desc"])])
    widened = _reconcile(statement, partial)
    assert widened.action is DdlAction.REPLACE
    assert widened.properties == ("summary", "desc", "legalName")
    assert "ON EACH [n.`summary`, n.`desc`, n.`legalName`]" in widened.cypher
    wrong = Existing(indexes=[_index("spg_Company_text", "RANGE", "Company", ["desc"])])
    with pytest.raises(SchemaError, match="exists with another definition"):
        _reconcile(statement, wrong)


def test_reconcile_vector_checks_the_dimension() -> None:
    statement = vector_statement("Company", "desc", "desc_embedding", 384)
    same = Existing(indexes=[_index("spg_Company_desc_vector", "VECTOR", "Company", ["desc_embedding"], 384)])
    assert _reconcile(statement, same).action is DdlAction.EXISTS
    other_name = Existing(indexes=[_index("company_vec", "VECTOR", "Company", ["desc_embedding"], 384)])
    assert _reconcile(statement, other_name).note == "covered by company_vec"
    wrong = Existing(indexes=[_index("spg_Company_desc_vector", "VECTOR", "Company", ["desc_embedding"], 768)])
    with pytest.raises(IndexDimensionError, match="has dimension 768, but the configured embedder has 384"):
        _reconcile(statement, wrong)


def test_dry_run_without_database(finance) -> None:  # noqa: ANN001
    report = apply_schema(None, finance, dimensions=8, dry_run=True)
    assert report.metagraph == "unknown" and report.dry_run and report.changed
    assert all(s.action is DdlAction.CREATE for s in report.statements)
    assert [s.name for s in report.statements[:4]] == ["kag_schema_namespace_name", "kag_schema_type_key",
                                                      "kag_schema_property_key", "kag_schema_relation_key"]
    assert len(plan_statements(finance, 8, None)) == len(report.statements)
    with pytest.raises(ValueError, match="needs a database"):
        apply_schema(None, finance, dimensions=8)


def test_meta_rows(finance) -> None:  # noqa: ANN001
    rows = to_rows(finance)
    types = {row["name"]: row for row in rows.types}
    assert types["Company"]["key"] == "CompanyFinance.Company"
    assert types["Company"]["parent_key"] == "CompanyFinance.Organization"
    assert types["Company"]["labels"] == ["Company", "Organization"]
    assert "parent" not in types["Organization"]  # absent values are absent properties
    relations = {row["key"]: row for row in rows.relations}
    works_for = relations["CompanyFinance.Person.worksFor"]
    assert works_for["target_key"] == "CompanyFinance.Company" and works_for["rel_type"] == "worksFor"
    belong = relations["CompanyFinance.Company.belongTo"]
    assert belong["semantic"] == "IND" and belong["declared_in"] == "properties" and belong["multi_value"]
    # only what a type declares: Company's inherited desc is stored once, on Organization
    assert [r["key"] for r in rows.properties if r["name"] == "desc"] == ["CompanyFinance.Organization.desc",
                                                                          "CompanyFinance.Person.desc"]
    subs = {row["key"]: row for row in rows.relation_properties}
    assert subs["CompanyFinance.Person.worksFor.role"]["not_null"] is True
    assert subs["CompanyFinance.Person.worksFor.role"]["owner_kind"] == "relation"
    filing = {r["name"]: r for r in rows.properties if r["owner_key"] == "CompanyFinance.Filing"}
    assert filing["formType"]["enum_values"][:2] == ["10-K", "10-Q"]
    assert filing["summary"]["vector_property"] == "summary_embedding"
    assert rows.namespace["type_count"] == len(finance.types)


def test_meta_rows_round_trip_and_checksum(finance, tmp_path: Path) -> None:  # noqa: ANN001
    rows = to_rows(finance)
    again = to_rows(validate_schema(to_document(rows)))
    assert again.content() == rows.content()
    assert again.namespace["checksum"] == rows.namespace["checksum"]
    copy = tmp_path / "copy.schema"
    copy.write_text(EXAMPLE.read_text(encoding="utf-8").replace("    desc: Any legal organisation.\n", ""),
                    encoding="utf-8")
    changed = to_rows(load_schema(copy))
    assert changed.namespace["checksum"] != rows.namespace["checksum"]
    assert not changed.same_content(rows)


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.schema")), ids=lambda p: p.stem)
def test_every_sample_round_trips_through_rows(path: Path) -> None:
    schema = load_schema(path, namespace="Demo" if path.stem == "default_template" else None)
    rows = to_rows(schema)
    assert to_rows(validate_schema(to_document(rows))).content() == rows.content()
