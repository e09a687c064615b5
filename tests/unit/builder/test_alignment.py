"""Alignment of one document without a database: grouping, ids, schema typing, concept links."""

from __future__ import annotations

from kag_neo4j.builder.aligned_document import ENTITY, EVENT
from kag_neo4j.builder.alignment import Aligner, clean_properties
from kag_neo4j.builder.concepts import Taxonomy
from kag_neo4j.builder.records import ChunkExtraction, ExtractedEvent
from tests.unit.builder.alignment_support import doc, ent, rel, schema  # noqa: F401 - schema is a fixture


def test_same_name_in_several_chunks_is_one_entity_with_mentions_per_chunk() -> None:
    document, chunks = doc("d", "Paris is big. Paris!", "I love paris.")
    extractions = [ChunkExtraction(chunk_id=chunks[0].id, entities=[ent("Paris")]),
                   ChunkExtraction(chunk_id=chunks[1].id, entities=[ent("paris")])]
    aligned = Aligner().align_document(document, chunks, extractions)
    assert list(aligned.entities) == ["entity:paris"]
    counts = {m.chunk_id: m.count for m in aligned.mentions}
    assert counts == {chunks[0].id: 2, chunks[1].id: 1}
    assert aligned.entity_records == 2


def test_generic_record_joins_the_single_specific_type_of_its_name(schema) -> None:
    document, chunks = doc("d", "Jane Doe works for Acme.", "Jane Doe again.")
    extractions = [
        ChunkExtraction(chunk_id=chunks[0].id, entities=[ent("Jane Doe", "Person"), ent("Acme", "Company")],
                        relations=[rel("Jane Doe", "worksFor", "Acme")]),
        ChunkExtraction(chunk_id=chunks[1].id, entities=[ent("Jane Doe")]),
    ]
    aligned = Aligner(schema).align_document(document, chunks, extractions)
    assert set(aligned.entities) == {"Person:jane doe", "Organization:acme"}
    assert aligned.entities["Organization:acme"].labels == ("Company", "Organization")
    [fact] = aligned.facts
    assert (fact.source_id, fact.rel_type, fact.target_id) == ("Person:jane doe", "worksFor", "Organization:acme")


def test_conflicting_types_keep_entities_apart(schema) -> None:
    document, chunks = doc("d", "Jordan the person and Jordan the company.")
    extraction = ChunkExtraction(chunk_id=chunks[0].id, entities=[ent("Jordan", "Person"), ent("Jordan", "Company"),
                                                                   ent("Jordan")])
    aligned = Aligner(schema).align_document(document, chunks, [extraction])
    # the untyped record is ambiguous between two families, so it stays generic
    assert set(aligned.entities) == {"Person:jordan", "Organization:jordan", "entity:jordan"}


def test_aliases_join_groups_and_are_kept_as_mention_names() -> None:
    document, chunks = doc("d", "Barack Obama spoke.", "Obama left.")
    extractions = [ChunkExtraction(chunk_id=chunks[0].id, entities=[ent("Barack Obama", aliases=["Obama"])]),
                   ChunkExtraction(chunk_id=chunks[1].id, entities=[ent("Obama")])]
    aligned = Aligner().align_document(document, chunks, extractions)
    assert list(aligned.entities) == ["entity:barack obama"]
    names = {m.chunk_id: m.names for m in aligned.mentions}
    assert names[chunks[0].id] == ["Barack Obama", "Obama"] and names[chunks[1].id] == ["Obama"]


def test_relation_endpoints_that_were_not_extracted_become_entities() -> None:
    document, chunks = doc("d", "Ada met Charles.")
    extraction = ChunkExtraction(chunk_id=chunks[0].id, entities=[ent("Ada")], relations=[rel("Ada", "met", "Charles")])
    aligned = Aligner().align_document(document, chunks, [extraction])
    assert set(aligned.entities) == {"entity:ada", "entity:charles"}
    assert {m.node_id for m in aligned.mentions} == {"entity:ada", "entity:charles"}  # provenance invariant
    [fact] = aligned.facts
    assert fact.rel_type is None and fact.predicate == "met" and fact.chunk_id == chunks[0].id


def test_an_untyped_object_takes_the_target_type_of_the_schema_relation_its_predicate_names(schema) -> None:
    document, chunks = doc("d", "Jane works for Acme. Acme competes with Initech.")
    extraction = ChunkExtraction(
        chunk_id=chunks[0].id,
        # Acme was listed without a type, Initech not at all; the relations' schema names type both
        entities=[ent("Jane", "Person"), ent("Acme")],
        relations=[rel("Jane", "Works for", "Acme"), rel("Acme", "competitor", "Initech"),
                   rel("Jane", "met", "Bob")],
    )
    aligned = Aligner(schema).align_document(document, chunks, [extraction])
    assert set(aligned.entities) == {"Person:jane", "Organization:acme", "Organization:initech", "entity:bob"}
    assert "Company" in aligned.entities["Organization:acme"].labels
    assert "Company" in aligned.entities["Organization:initech"].labels
    assert {(f.source_id, f.rel_type, f.target_id) for f in aligned.facts} == {
        ("Person:jane", "worksFor", "Organization:acme"), ("Organization:acme", "competitor", "Organization:initech"),
        ("Person:jane", None, "entity:bob")}


def test_an_object_extracted_with_a_type_keeps_it_whatever_the_predicate(schema) -> None:
    document, chunks = doc("d", "Jane works for Bob.")
    extraction = ChunkExtraction(chunk_id=chunks[0].id, entities=[ent("Jane", "Person"), ent("Bob", "Person")],
                                 relations=[rel("Jane", "worksFor", "Bob", object_type="Person")])
    aligned = Aligner(schema).align_document(document, chunks, [extraction])
    assert set(aligned.entities) == {"Person:jane", "Person:bob"}


def test_without_a_schema_objects_stay_untyped() -> None:
    document, chunks = doc("d", "Ada met Charles.")
    extraction = ChunkExtraction(chunk_id=chunks[0].id, entities=[ent("Ada", "Person")],
                                 relations=[rel("Ada", "worksFor", "Charles")])
    aligned = Aligner().align_document(document, chunks, [extraction])
    assert "entity:charles" in aligned.entities


def test_literal_schema_property_becomes_a_node_property(schema) -> None:
    document, chunks = doc("d", "Acme was founded in 1990.")
    extraction = ChunkExtraction(chunk_id=chunks[0].id, entities=[ent("Acme", "Company")],
                                 relations=[rel("Acme", "foundedYear", "1990")])
    aligned = Aligner(schema).align_document(document, chunks, [extraction])
    # foundedYear is Integer in the schema: the numeral is written as a number
    assert aligned.entities["Organization:acme"].properties == {"foundedYear": 1990}
    assert aligned.facts == []


def test_relation_with_wrong_target_type_stays_open_and_is_reported(schema) -> None:
    document, chunks = doc("d", "Jane works for Bob.")
    extraction = ChunkExtraction(chunk_id=chunks[0].id, entities=[ent("Jane", "Person"), ent("Bob", "Person")],
                                 relations=[rel("Jane", "worksFor", "Bob")])
    aligned = Aligner(schema).align_document(document, chunks, [extraction])
    [fact] = aligned.facts
    assert fact.rel_type is None and fact.predicate == "worksFor"
    assert any("does not fit the schema" in issue for issue in aligned.issues)


def test_events_get_typed_nodes_mentions_and_role_facts(schema) -> None:
    document, chunks = doc("d", "Globex acquired Initech.")
    extraction = ChunkExtraction(
        chunk_id=chunks[0].id, entities=[ent("Globex", "Company")],
        events=[ExtractedEvent(name="Globex buys Initech", type="Acquisition",
                               roles={"subject": "Globex", "target": "Initech", "weird role": "Globex"})],
    )
    aligned = Aligner(schema).align_document(document, chunks, [extraction])
    [event] = aligned.events.values()
    assert event.labels == ("Acquisition", "CorporateEvent")
    roles = {(f.predicate, f.rel_type, f.target_id) for f in aligned.facts}
    assert ("subject", "subject", "Organization:globex") in roles
    assert ("target", "target", "entity:initech") in roles
    assert ("weird role", None, "Organization:globex") in roles  # off-schema role: open fact
    assert all(f.source_kind == EVENT and f.target_kind == ENTITY for f in aligned.facts)
    assert any(m.kind == EVENT for m in aligned.mentions)


def test_hostile_property_keys_are_dropped_and_reported() -> None:
    document, chunks = doc("d", "X.")
    extraction = ChunkExtraction(chunk_id=chunks[0].id, entities=[ent("X", properties={
        "ok": 1, "bad key`) DETACH DELETE n //": 2, "id": "hijack", "name": "other"})])
    aligned = Aligner().align_document(document, chunks, [extraction])
    assert aligned.entities["entity:x"].properties == {"ok": 1}
    assert len(aligned.issues) == 3


def test_taxonomy_and_semantic_types_make_concept_links() -> None:
    taxonomy = Taxonomy.from_records([{"id": "ACTH", "name": "ACTH"}], [])
    document, chunks = doc("d", "ACTH and Zeus.")
    extraction = ChunkExtraction(chunk_id=chunks[0].id, entities=[
        ent("ACTH"), ent("Zeus", properties={"semanticType": "Greek god"})])
    aligned = Aligner(None, taxonomy).align_document(document, chunks, [extraction])
    links = {(link.entity_id, link.concept_id) for link in aligned.concept_links}
    assert links == {("entity:acth", "concept:acth"), ("entity:zeus", "concept:greek god")}
    assert set(aligned.concepts) == {"concept:greek god"}  # taxonomy concepts are not re-created
    light = Aligner(None, taxonomy, concept_links_from_types=False).align_document(document, chunks, [extraction])
    assert {(l.entity_id, l.concept_id) for l in light.concept_links} == {("entity:acth", "concept:acth")}


def test_extraction_for_an_unknown_chunk_is_reported() -> None:
    document, chunks = doc("d", "A.")
    aligned = Aligner().align_document(document, chunks, [ChunkExtraction(chunk_id="other#0#0", entities=[ent("A")])])
    assert aligned.entities == {} and "unknown chunk" in aligned.issues[0]


def test_semantic_type_property_is_not_reported_as_reserved() -> None:
    document, chunks = doc("d", "Springfield.")
    extraction = ChunkExtraction(chunk_id=chunks[0].id, entities=[
        ent("Springfield", "Entity", properties={"semantic_type": "Place", "population": 30720})],
        events=[ExtractedEvent(name="Flood", type="Event", properties={"semantic_type": "Disaster"})])
    aligned = Aligner().align_document(document, chunks, [extraction])
    node = aligned.entities["entity:springfield"]
    assert node.semantic_type == "Place" and node.properties == {"population": 30720}
    assert aligned.issues == []
    [event] = aligned.events.values()
    assert event.event_type == "Disaster" and event.properties == {}


def test_look_alike_property_keys_are_dropped_and_reported() -> None:
    issues: list[str] = []
    kept = clean_properties({"Ｃｈｕｎｋ": 1, "Сhunk": 2, "Area²": 3, "born": "1839", "x`y": 4}, issues, "c1")
    assert kept == {"born": "1839"}
    assert len(issues) == 4
