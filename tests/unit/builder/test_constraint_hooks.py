"""Where the builder applies the schema's constraints (no database): the structured reader's relation
cells and NotNull columns, and alignment of text extractions (violations located by chunk)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kag_neo4j.builder.alignment import Aligner
from kag_neo4j.builder.extract import RecordIndex, schema_view, structured_extract
from kag_neo4j.builder.records import ChunkExtraction, ChunkRecord, ExtractedEntity, ExtractedRelation, SourceDocument
from kag_neo4j.builder.split import split_document
from kag_neo4j.schema import load_schema

SCHEMA = load_schema(Path(__file__).resolve().parents[2] / "fixtures" / "constraints" / "Checked.schema")


def _records(records: list[dict], record_type: str) -> SourceDocument:
    return SourceDocument(id=record_type, title=record_type, source=f"{record_type}.csv", sha256="0",
                          records=records, record_type=record_type)


def _index(*docs: SourceDocument) -> RecordIndex:
    index = RecordIndex()
    for doc in docs:
        index.add_document(doc)
    return index


def test_a_single_valued_cell_that_is_a_record_id_is_one_target() -> None:
    known = _records([{"id": "建筑、农用机械", "name": "Ann"}, {"id": "c1", "name": "Cy"}, {"id": "c2", "name": "Di"}],
                     "Customer")
    rows = _records([{"id": "x1", "name": "Xi", "tier": "gold", "referredBy": "建筑、农用机械"},
                     {"id": "x2", "name": "Yu", "tier": "gold", "referredBy": "c1,c2"}], "Customer")
    first, second = structured_extract(rows, split_document(rows), schema=schema_view(SCHEMA),
                                       index=_index(known, rows)).extractions
    assert [(r.predicate, r.object) for r in first.relations] == [("referredBy", "Ann")] and not first.violations
    assert second.relations == []  # several targets for a predicate without MultiValue: none written
    (violation,) = second.violations
    assert (violation.where.file, violation.where.row, violation.property, violation.constraint) == \
        ("Customer.csv", 2, "referredBy", "MultiValue")


def test_a_multi_value_cell_is_several_targets() -> None:
    rows = _records([{"id": "x1", "name": "Xi", "tier": "gold", "owns": "a1, a2"}], "Customer")
    (extraction,) = structured_extract(rows, split_document(rows), schema=schema_view(SCHEMA)).extractions
    assert [r.object for r in extraction.relations] == ["a1", "a2"] and not extraction.violations


def test_an_empty_not_null_column_is_reported_with_its_row() -> None:
    rows = _records([{"id": "x1", "name": "Xi", "tier": "gold"}, {"id": "x2", "name": "Yu", "tier": ""}], "Customer")
    first, second = structured_extract(rows, split_document(rows), schema=schema_view(SCHEMA)).extractions
    assert not first.violations
    assert [(v.where.row, v.property, v.constraint) for v in second.violations] == [(2, "tier", "NotNull")]


def test_alignment_leaves_out_bad_values_of_text_extractions_and_names_the_chunk() -> None:
    text = "Dave and Erin are customers; Dave owns Ledger."
    doc = SourceDocument(id="d", title="d", source="notes.md", text=text, sha256="1")
    chunk = ChunkRecord(id="d#0#0", document_id="d", text=text, position=0, paragraph=0, index=0)
    extraction = ChunkExtraction(chunk_id=chunk.id, entities=[
        ExtractedEntity(name="Dave", type="Customer", properties={"tier": "gold", "age": "old", "score": 2}),
        ExtractedEntity(name="Erin", type="Customer", properties={"tier": "iron"}),
    ])
    aligned = Aligner(SCHEMA).align_document(doc, [chunk], [extraction])
    assert aligned.entities["Customer:dave"].properties == {"tier": "gold", "score": 2.0}
    assert aligned.entities["Customer:erin"].properties == {}
    assert {(str(v.where), v.type_name, v.property, v.constraint) for v in aligned.violations} == {
        ("notes.md, chunk d#0#0", "Customer", "age", "ValueType"),
        ("notes.md, chunk d#0#0", "Customer", "tier", "Enum"),
        ("notes.md, chunk d#0#0", "Customer", "tier", "NotNull"),  # Erin's only value was invalid
    }


def test_an_entity_only_named_as_a_relation_end_is_not_held_to_not_null() -> None:
    text = "Dave referred Fay."
    doc = SourceDocument(id="d", title="d", source="notes.md", text=text, sha256="1")
    chunk = ChunkRecord(id="d#0#0", document_id="d", text=text, position=0, paragraph=0, index=0)
    extraction = ChunkExtraction(chunk_id=chunk.id, entities=[
        ExtractedEntity(name="Dave", type="Customer", properties={"tier": "gold"})],
        relations=[ExtractedRelation(subject="Dave", predicate="referredBy", object="Fay", subject_type="Customer",
                                     object_type="Customer")])
    aligned = Aligner(SCHEMA).align_document(doc, [chunk], [extraction])
    assert "Customer:fay" in aligned.entities and aligned.violations == []


def test_a_typed_record_is_checked_where_it_becomes_a_property_map() -> None:
    """Typed records take the structured alignment (identity from the record id): their values are
    checked by ``record_properties`` and the violations reach the aligned document."""
    rows = _records([{"id": "c7", "name": "Gil", "tier": "gold", "age": "forty", "phone": "+86 138-0013-8000",
                      "signup": "2023/1/5", "code": "C-1234"}], "Customer")
    chunks = split_document(rows)
    result = structured_extract(rows, chunks, schema=schema_view(SCHEMA))
    aligned = Aligner(SCHEMA).align_document(rows, chunks, result.extractions)
    node = aligned.entities["Customer:#c7"]
    assert {k: v for k, v in node.properties.items() if k != "record_id"} == {
        "tier": "gold", "phone": "13800138000", "signup": "2023-01-05", "code": "C-1234"}
    assert [(v.where.file, v.where.row, v.property, v.constraint, v.value) for v in aligned.violations] == [
        ("Customer.csv", 1, "age", "ValueType", "forty")]


def test_list_values_of_json_records_need_multi_value() -> None:
    rows = _records([{"id": "c8", "name": "Hal", "tier": "gold", "tags": ["vip", "new"], "age": [30, 31],
                      "properties": {"code": ["C-0001"], "score": "4.5"}}], "Customer")
    (extraction,) = structured_extract(rows, split_document(rows), schema=schema_view(SCHEMA)).extractions
    assert extraction.entities[0].properties == {"tier": "gold", "tags": '["vip", "new"]', "score": 4.5}
    assert {(v.property, v.constraint) for v in extraction.violations} == {("age", "MultiValue"), ("code", "MultiValue")}


def test_edge_rows_are_checked_against_the_relation() -> None:
    accounts = _records([{"id": "a1", "name": "One"}, {"id": "a2", "name": "Two"}], "Account")
    edges = SourceDocument(id="t", title="t", source="Account_transfer_Account.csv", sha256="2",
                           record_type="Account_transfer_Account",
                           records=[{"srcId": "a1", "dstId": "a2", "amount": "1,200", "channel": "wire"}])
    (extraction,) = structured_extract(edges, split_document(edges), schema=schema_view(SCHEMA),
                                       index=_index(accounts)).extractions
    assert extraction.relations[0].properties == {"amount": 1200}
    (violation,) = extraction.violations
    assert (violation.type_name, violation.property, violation.constraint, violation.where.row) == \
        ("Account.transfer", "channel", "Enum", 1)


def _two_chunks() -> tuple[SourceDocument, list[ChunkRecord]]:
    doc = SourceDocument(id="d", title="d", source="notes.md", text="…", sha256="3")
    chunks = [ChunkRecord(id=f"d#0#{i}", document_id="d", text=f"part {i}", position=i, paragraph=0, index=i)
              for i in (0, 1)]
    return doc, chunks


def _customer(name: str) -> ExtractedEntity:
    return ExtractedEntity(name=name, type="Customer", properties={"tier": "gold"})


def _refers(subject: str, target: str, confidence: float) -> ExtractedRelation:
    return ExtractedRelation(subject=subject, predicate="referredBy", object=target, subject_type="Customer",
                             object_type="Customer", confidence=confidence)


def test_a_text_relation_without_multi_value_keeps_its_best_supported_target() -> None:
    """Dave is referred by Fay in one chunk and by Gus in two: ``referredBy`` is not MultiValue, so
    Gus (more support) stays, the Fay fact is a violation at its chunk and is not written."""
    first = ChunkExtraction(chunk_id="d#0#0", entities=[_customer("Dave"), _customer("Fay"), _customer("Gus")],
                            relations=[_refers("Dave", "Fay", 0.9), _refers("Dave", "Gus", 0.6)])
    second = ChunkExtraction(chunk_id="d#0#1", entities=[_customer("Dave"), _customer("Gus")],
                             relations=[_refers("Dave", "Gus", 0.6)])
    doc, chunks = _two_chunks()
    aligned = Aligner(SCHEMA).align_document(doc, chunks, [first, second])
    typed = sorted((f.source_id, f.target_id, f.chunk_id) for f in aligned.facts if f.rel_type is not None)
    assert typed == [("Customer:dave", "Customer:gus", "d#0#0"), ("Customer:dave", "Customer:gus", "d#0#1")]
    (violation,) = aligned.violations
    assert (str(violation.where), violation.type_name, violation.property, violation.constraint, violation.value) == \
        ("notes.md, chunk d#0#0", "Customer", "referredBy", "MultiValue", "Fay")
    assert "Gus" in violation.message


@pytest.mark.parametrize(("subject", "subject_type", "predicate", "object_type", "targets"), [
    ("Dave", "Customer", "owns", "Account", ("Ledger", "Vault")),  # a property declared MultiValue
    ("One", "Account", "transfer", "Account", ("Two", "Three")),  # under relations: any number, as in KAG
])
def test_several_targets_are_kept_for_multi_value_properties_and_relations(
        subject: str, subject_type: str, predicate: str, object_type: str, targets: tuple[str, ...]) -> None:
    extraction = ChunkExtraction(chunk_id="d#0#0", relations=[
        ExtractedRelation(subject=subject, predicate=predicate, object=name, subject_type=subject_type,
                          object_type=object_type) for name in targets])
    doc, chunks = _two_chunks()
    aligned = Aligner(SCHEMA).align_document(doc, chunks[:1], [extraction])
    assert sorted(f.target_id for f in aligned.facts if f.rel_type is not None) == \
        sorted(f"{object_type}:{name.lower()}" for name in targets)
    assert aligned.violations == []


def test_literal_values_from_text_relations_need_multi_value_to_be_several() -> None:
    """``tags`` is MultiValue: both values are kept, as a JSON list. ``age`` is not: the first value stays
    and the second, different one is reported; repeating the same value is no violation."""
    first = ChunkExtraction(chunk_id="d#0#0", entities=[_customer("Dave")], relations=[
        ExtractedRelation(subject="Dave", predicate="tags", object="vip", subject_type="Customer"),
        ExtractedRelation(subject="Dave", predicate="age", object="41", subject_type="Customer")])
    second = ChunkExtraction(chunk_id="d#0#1", entities=[_customer("Dave")], relations=[
        ExtractedRelation(subject="Dave", predicate="tags", object="new", subject_type="Customer"),
        ExtractedRelation(subject="Dave", predicate="age", object="41", subject_type="Customer"),
        ExtractedRelation(subject="Dave", predicate="age", object="42", subject_type="Customer")])
    doc, chunks = _two_chunks()
    aligned = Aligner(SCHEMA).align_document(doc, chunks, [first, second])
    properties = aligned.entities["Customer:dave"].properties
    assert properties["tags"] == '["vip", "new"]'  # a list as JSON, as structured import writes it
    assert properties["age"] == 41
    assert [(str(v.where), v.property, v.constraint, v.value) for v in aligned.violations] == [
        ("notes.md, chunk d#0#1", "age", "MultiValue", "42")]

