"""Structured chain: CSV/JSON records onto schema types, edge tables, SPO tables, id references."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kag_neo4j.builder.extract import Extraction, RecordIndex, schema_view, structured_extract
from kag_neo4j.builder.readers import read_file
from kag_neo4j.builder.records import SourceDocument
from kag_neo4j.builder.split import split_document
from kag_neo4j.schema import load_schema


@pytest.fixture
def supply(fixtures_dir: Path):
    return schema_view(load_schema(fixtures_dir / "schemas" / "SupplyChain.schema"))


def records_doc(records: list[dict], record_type: str, doc_id: str = "t") -> SourceDocument:
    return SourceDocument(
        id=doc_id, title=record_type, source=f"{record_type}.csv", sha256="0", records=records, record_type=record_type
    )


def test_node_table_with_schema_gives_entities_relations_and_properties(fixtures_dir: Path, supply) -> None:
    (doc,) = read_file(fixtures_dir / "docs" / "Company.csv")
    chunks = split_document(doc)
    results = structured_extract(doc, chunks, schema=supply).extractions
    assert [r.chunk_id for r in results] == [c.id for c in chunks]
    acme = results[0]
    assert acme.mode == "structured"
    company = acme.entities[0]
    assert (company.name, company.type, company.id) == ("Acme Corporation", "Company", "C1")
    assert company.properties == {"age": "120"}  # not a Company property in the schema, kept
    assert [(r.subject, r.predicate, r.object, r.object_type) for r in acme.relations] == [
        ("Acme Corporation", "product", "Anvil", "Product"),
        ("Acme Corporation", "product", "Rocket", "Product"),
    ]
    assert {(e.name, e.type) for e in acme.entities[1:]} == {("Anvil", "Product"), ("Rocket", "Product")}


def test_node_table_without_schema_keeps_columns_as_properties(fixtures_dir: Path) -> None:
    (doc,) = read_file(fixtures_dir / "docs" / "Company.csv")
    (acme, _) = structured_extract(doc).extractions
    assert acme.relations == []
    assert acme.entities[0].type == "Company"
    assert acme.entities[0].properties == {"product": "Anvil,Rocket", "age": "120"}


def test_edge_table_resolves_ids_to_names_and_keeps_edge_properties(fixtures_dir: Path, supply) -> None:
    (companies,) = read_file(fixtures_dir / "docs" / "Company.csv")
    (edges,) = read_file(fixtures_dir / "docs" / "Company_fundTrans_Company.csv")
    stage = Extraction(mode="light", schema=supply)
    stage.register([companies, edges])
    batch = stage.extract_document(edges, split_document(edges))
    first, second = batch.extractions
    relation = first.relations[0]
    assert (relation.subject, relation.predicate, relation.object) == (
        "Acme Corporation",
        "fundTrans",
        "Roadrunner Ltd",
    )
    assert (relation.subject_id, relation.object_id) == ("C1", "C2")
    assert (relation.subject_type, relation.object_type) == ("Company", "Company")
    # normalised: the date to ISO, amounts to numbers
    assert relation.properties == {"transDate": "2023-08-21", "transAmt": 102191}
    assert second.relations[0].properties["transAmt"] == 1500
    assert [e.id for e in first.entities] == ["C1", "C2"]


def test_edge_table_without_the_node_table_keeps_ids_as_names(fixtures_dir: Path) -> None:
    (edges,) = read_file(fixtures_dir / "docs" / "Company_fundTrans_Company.csv")
    results = structured_extract(edges, index=RecordIndex()).extractions
    assert (results[0].relations[0].subject, results[0].relations[0].object) == ("C1", "C2")


def test_spo_table_with_json_properties_and_confidence() -> None:
    doc = records_doc(
        [
            {
                "S": "Panic_disorder",
                "P": "has_symptom",
                "O": "Anxiety",
                "properties": '{"confidence": 0.8, "source": "kb"}',
            }
        ],
        "SPO",
    )
    (result,) = structured_extract(doc).extractions
    relation = result.relations[0]
    assert (relation.subject, relation.predicate, relation.object) == ("Panic_disorder", "has_symptom", "Anxiety")
    assert relation.confidence == 0.8 and relation.properties == {"source": "kb"}


def test_kag_nodes_and_edges_json(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.json"
    nodes.write_text(
        json.dumps([{"id": "促皮质素", "name": "促皮质素", "label": "Concept", "properties": {}}]), encoding="utf-8"
    )
    edges = tmp_path / "edges.json"
    edges.write_text(
        json.dumps(
            [
                {
                    "id": "e1",
                    "from": "促皮质素",
                    "fromType": "Concept",
                    "to": "激素",
                    "toType": "Concept",
                    "label": "isA",
                    "properties": {},
                }
            ]
        ),
        encoding="utf-8",
    )
    (node_doc,) = read_file(nodes)
    (edge_doc,) = read_file(edges)
    (node,) = structured_extract(node_doc).extractions
    assert (node.entities[0].name, node.entities[0].type) == ("促皮质素", "Concept")
    (edge,) = structured_extract(edge_doc).extractions
    relation = edge.relations[0]
    assert (relation.subject, relation.predicate, relation.object, relation.object_type) == (
        "促皮质素",
        "isA",
        "激素",
        "Concept",
    )


def test_event_type_rows_become_events_with_roles(supply) -> None:
    doc = records_doc(
        [{"id": "1", "name": "顺丁橡胶成本上涨", "subject": "顺丁橡胶", "index": "价格", "trend": "上涨"}],
        "ProductChainEvent",
    )
    (result,) = structured_extract(doc, schema=supply).extractions
    (event,) = result.events
    assert (event.name, event.type) == ("顺丁橡胶成本上涨", "ProductChainEvent")
    assert event.roles == {"subject": "顺丁橡胶", "index": "价格", "trend": "上涨"}
    assert {(e.name, e.type) for e in result.entities} == {
        ("顺丁橡胶", "Product"),
        ("价格", "Index"),
        ("上涨", "Trend"),
    }


def test_rows_without_id_or_name_are_reported() -> None:
    doc = records_doc([{"id": "", "name": "", "age": "3"}], "Person")
    (result,) = structured_extract(doc).extractions
    assert result.entities == [] and "has no id or name" in result.issues[0]


def test_off_schema_record_type_is_reported_not_relabelled(supply) -> None:
    doc = records_doc([{"id": "X1", "name": "Gizmo"}], "Widget")
    stage = Extraction(mode="light", schema=supply)
    (result,) = stage.extract_document(doc, split_document(doc)).extractions
    assert result.entities[0].type == "Entity"
    assert result.entities[0].properties["semantic_type"] == "Widget"
    assert "'Widget' is not in schema SupplyChain" in result.issues[0]
