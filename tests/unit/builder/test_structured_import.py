"""Structured import pieces without a database: typed values, references by key, relation
instances, update files, concept tables, mapping files, and record-id identity in alignment."""

from __future__ import annotations

from pathlib import Path

import pytest

from kag_neo4j.builder.alignment import Aligner
from kag_neo4j.builder.concept_tables import concept_taxonomy, concept_type
from kag_neo4j.builder.extract import Extraction, schema_view
from kag_neo4j.builder.extract.structured import RecordIndex, structured_extract, update_target
from kag_neo4j.builder.readers import read_file
from kag_neo4j.builder.readers.common import ReadOptions
from kag_neo4j.builder.readers.mapping import load_mapping
from kag_neo4j.builder.records import SourceDocument
from kag_neo4j.builder.split import split_document
from kag_neo4j.errors import ConfigError, ReadError
from kag_neo4j.schema.parser import parse_schema
from kag_neo4j.schema.validate import load_schema, validate_schema
from kag_neo4j.schema.value_types import ValueTypeMismatch, typed

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SCHEMAS = FIXTURES / "schemas"

PHONE_SCHEMA = """namespace Phones

Shop(店): EntityType
    properties:
        hasPhone(电话): STD.ChinaMobile
        staff(员工): Integer
        rating(评分): Float
"""


def _doc(record_type: str, records: list[dict[str, str]], **metadata: object) -> SourceDocument:
    return SourceDocument(id=record_type, title=record_type, source=f"{record_type}.csv", sha256=record_type,
                          records=records, record_type=record_type, metadata=dict(metadata))


def test_values_are_typed_as_the_schema_says() -> None:
    assert typed("Integer", " 58 ") == 58
    assert typed("Float", "1,234.5") == 1234.5
    assert typed("Text", "20230906") == "20230906"
    assert typed("STD.ChinaMobile", "+86 150-1234-5678") == "15012345678"
    assert typed("STD.ChinaMobile", "150****3237") == "150****3237"  # a mask stays a mask
    assert typed("STD.IdCardNo", "11010 519900101103x") == "11010519900101103X"
    assert typed("STD.Email", " Ada@Example.ORG ") == "ada@example.org"
    assert typed("STD.Date", "2023年9月6日") == "2023-09-06"
    with pytest.raises(ValueTypeMismatch):
        typed("Integer", "fifty")
    with pytest.raises(ValueTypeMismatch):
        typed("Integer", "5.5")


def test_record_properties_follow_the_schema_and_report_mismatches() -> None:
    schema = schema_view(validate_schema(parse_schema(PHONE_SCHEMA)))
    doc = _doc("Shop", [{"id": "s1", "name": "A", "hasPhone": "0086 139 0000 1111", "staff": "12", "rating": "4.5"},
                        {"id": "s2", "name": "B", "staff": "many", "rating": "4"}])
    first, second = structured_extract(doc, schema=schema).extractions
    assert first.entities[0].properties == {"hasPhone": "13900001111", "staff": 12, "rating": 4.5}
    assert second.entities[0].properties == {"rating": 4.0}  # the mismatch is left out, the rest is kept
    (violation,) = second.violations
    assert (violation.where.file, violation.where.row, violation.property, violation.constraint, violation.value) == \
        ("Shop.csv", 2, "staff", "ValueType", "many")


def test_references_resolve_by_id_then_by_a_key_column_else_dangle() -> None:
    index = RecordIndex()
    index.add_document(_doc("Cert", [{"id": "0", "certNum": "abc"}, {"id": "1", "certNum": "def"}]))
    assert index.resolve("Cert", "1") == ("1", "1")
    assert index.resolve("Cert", "abc") == ("0", "0")
    assert index.resolve("Cert", "zzz") is None  # the load has Cert records, none is zzz
    assert index.resolve("Device", "d1") == ("d1", "d1")  # no Device table in the load: kept as given
    index.add_document(_doc("Company", [{"id": "1", "name": "X"}, {"id": "2", "name": "X"}]))
    assert index.resolve("Company", "X") is None  # two companies are called X: ambiguous, not a guess


def test_reference_columns_are_not_keys_of_their_own_table() -> None:
    schema = schema_view(load_schema(str(SCHEMAS / "SupplyChain.schema")))
    index = RecordIndex()
    index.add_document(_doc("Product", [{"id": "p1", "hasSupplyChain": "p9"}]), schema)
    assert index.resolve("Product", "p9") is None


def test_repeated_transfers_get_distinct_stable_instance_keys() -> None:
    schema = schema_view(load_schema(str(SCHEMAS / "RiskMining.schema")))
    rows = [{"src": "1", "dst": "2", "transDate": "20230906", "transAmt": "10"},
            {"src": "1", "dst": "2", "transDate": "20230907", "transAmt": "10"},
            {"src": "1", "dst": "2", "transDate": "20230906", "transAmt": "10"},
            {"src": "1", "dst": "3"}]
    doc = _doc("Person_fundTrans_Person", rows)
    keys = [e.relations[0].instance for e in structured_extract(doc, schema=schema).extractions]
    assert len(set(keys[:3])) == 3 and keys[3] is None  # an identical row is the n-th of its kind
    assert keys == [e.relations[0].instance for e in structured_extract(doc, schema=schema).extractions]
    first = structured_extract(doc, schema=schema).extractions[0].relations[0]
    assert first.properties == {"transDate": "2023-09-06", "transAmt": 10}


def test_update_files_update_their_type() -> None:
    schema = schema_view(load_schema(str(SCHEMAS / "SupplyChain.schema")))
    assert update_target(_doc("CompanyUpdate", [{"id": "c"}]), schema) == "Company"
    assert update_target(_doc("Company", [{"id": "c"}]), schema) is None
    assert update_target(_doc("fixes", [{"id": "c"}], update=True), schema) == "fixes"
    doc = _doc("CompanyUpdate", [{"id": "c1", "name": "C", "products": "p1,p2"}])
    (extraction,) = structured_extract(doc, schema=schema).extractions
    company = extraction.entities[0]
    assert (company.type, company.id, company.update) == ("Company", "c1", True)
    assert [(r.predicate, r.object_id) for r in extraction.relations] == [("product", "p1"), ("product", "p2")]


def test_typed_records_are_identified_by_id_not_by_name() -> None:
    resolved = load_schema(str(SCHEMAS / "RiskMining.schema"))
    doc = _doc("Company", [{"id": "0", "name": "**娱乐****公司"}, {"id": "1", "name": "**娱乐**公司"}])
    chunks = split_document(doc)
    stage = Extraction(mode="light", schema=resolved)
    stage.register([doc])
    aligned = Aligner(resolved).align_document(doc, chunks, stage.extract_document(doc, chunks).extractions)
    assert sorted(aligned.entities) == ["Company:#0", "Company:#1"]
    assert {n.properties["record_id"] for n in aligned.entities.values()} == {"0", "1"}


def test_concept_tables_give_the_path_hierarchy_or_the_parent_column() -> None:
    resolved = load_schema(str(SCHEMAS / "SupplyChain.schema"))
    doc = _doc("Industry", [{"id": "a-b-c"}, {"id": "a-d"}])
    assert concept_type(doc, resolved) == "Industry"
    assert concept_type(_doc("Company", [{"id": "x"}]), resolved) is None
    taxonomy = concept_taxonomy(doc, "Industry")
    names = {c.name for c in taxonomy.concepts.values()}
    assert names == {"a-b-c", "a-b", "a", "a-d"}
    by_id = {c.id: c.name for c in taxonomy.concepts.values()}
    assert {(by_id[e.source], by_id[e.target], e.rel_type) for e in taxonomy.edges} == {
        ("a-b-c", "a-b", "IS_A"), ("a-b", "a", "IS_A"), ("a-d", "a", "IS_A")}
    explicit = concept_taxonomy(_doc("Industry", [{"id": "x", "parent": "y"}, {"id": "y", "parent": ""}]), "Industry")
    by_id = {c.id: c.name for c in explicit.concepts.values()}
    assert {(by_id[e.source], by_id[e.target]) for e in explicit.edges} == {("x", "y")}


def test_mapping_files_rename_columns_and_set_types(tmp_path: Path) -> None:
    (tmp_path / "firms.csv").write_text("firm_id,firm\n7,Acme\n", encoding="utf-8")
    (tmp_path / "map.toml").write_text('[files."firm*.csv"]\ntype = "Company"\nupdate = true\n'
                                       'columns = { firm_id = "id", firm = "name" }\n', encoding="utf-8")
    mapping = load_mapping(tmp_path / "map.toml")
    (doc,) = read_file(tmp_path / "firms.csv", options=ReadOptions(mapping=mapping))
    assert (doc.record_type, doc.records, doc.metadata["update"]) == ("Company", [{"id": "7", "name": "Acme"}], True)
    (tmp_path / "bad.toml").write_text('[files."firms.csv"]\ntypo = 1\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="typo"):
        load_mapping(tmp_path / "bad.toml")
    (tmp_path / "wrong.toml").write_text('[files."firms.csv"]\ncolumns = { nope = "id" }\n', encoding="utf-8")
    with pytest.raises(ReadError, match="nope"):
        read_file(tmp_path / "firms.csv", options=ReadOptions(mapping=load_mapping(tmp_path / "wrong.toml")))
    with pytest.raises(ConfigError, match="does not exist"):
        load_mapping(tmp_path / "missing.toml")


def test_a_table_named_after_a_schema_type_is_records_even_with_a_text_column(tmp_path: Path) -> None:
    (tmp_path / "Disease.csv").write_text("idx,title,text\n1,Flu,A viral infection.\n", encoding="utf-8")
    (passages,) = read_file(tmp_path / "Disease.csv")
    assert passages.records == []  # no schema: a text column makes passages
    (records,) = read_file(tmp_path / "Disease.csv", options=ReadOptions(schema_types=frozenset({"Disease"})))
    assert records.record_type == "Disease" and len(records.records) == 1
