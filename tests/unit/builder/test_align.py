"""Alignment without a database: grouping, ids, schema typing, concept links, resolution."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from kag_neo4j.builder.align import (
    Aligner,
    NoLookup,
    Resolver,
    TypeResolver,
    lucene_phrase,
    relationship_type,
)
from kag_neo4j.builder.aligned import ENTITY, EVENT
from kag_neo4j.builder.concepts import Taxonomy
from kag_neo4j.builder.records import (
    ChunkExtraction,
    ChunkRecord,
    ExtractedEntity,
    ExtractedEvent,
    ExtractedRelation,
    SourceDocument,
)
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.resources import resource_dir
from kag_neo4j.schema.validate import load_schema


@pytest.fixture(scope="module")
def schema():
    return load_schema(str(resource_dir("schema") / "CompanyFinance.schema"))


def doc(doc_id: str, *texts: str) -> tuple[SourceDocument, list[ChunkRecord]]:
    text = "\n\n".join(texts)
    document = SourceDocument(id=doc_id, title=doc_id, source=doc_id, text=text,
                              sha256=hashlib.sha256(text.encode()).hexdigest())
    chunks = [ChunkRecord(id=f"{doc_id}#{i}#0", document_id=doc_id, text=t, position=i, paragraph=i, index=0)
              for i, t in enumerate(texts)]
    return document, chunks


def ent(name: str, type_: str = "Entity", **kw: Any) -> ExtractedEntity:
    return ExtractedEntity(name=name, type=type_, **kw)


def rel(s: str, p: str, o: str, **kw: Any) -> ExtractedRelation:
    return ExtractedRelation(subject=s, predicate=p, object=o, **kw)


# --------------------------------------------------------------------------- types


def test_type_families_follow_the_schema_hierarchy(schema) -> None:
    types = TypeResolver(schema)
    company, organization, person = types.resolve("Company"), types.resolve("organization"), types.resolve("Person")
    assert company.family == organization.family == "Organization"
    assert company.labels == ("Company", "Organization")
    assert person.family == "Person" and person.labels == ("Person",)
    assert types.resolve("Person").family != types.resolve("Company").family
    generic = types.resolve("Thing")
    assert generic.generic and generic.family == "entity" and not generic.off_schema
    assert types.resolve("Spaceship").off_schema and types.resolve("Spaceship").labels == ()
    assert types.resolve("Date").family == "value"


def test_without_a_schema_types_do_not_split_entities() -> None:
    types = TypeResolver(None)
    assert types.resolve("Person").family == types.resolve("Organization").family == "entity"
    assert types.resolve("DATE").family == "value"
    assert not types.resolve("Person").off_schema


@pytest.mark.parametrize("name", ["PART_OF", "MENTIONED_IN", "RELATED", "x`y", "DETACH DELETE", "a b", "1abc", ""])
def test_reserved_or_unsafe_relationship_types_become_open_facts(name: str) -> None:
    assert relationship_type(name) is None


def test_safe_relationship_types_pass() -> None:
    assert relationship_type("worksFor") == "worksFor"


def test_lucene_phrase_escapes_special_characters() -> None:
    assert lucene_phrase("alias_text", 'ac/dc "live" (x)') == 'alias_text:"ac\\/dc \\"live\\" \\(x\\)"'


# --------------------------------------------------------------------------- one document


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


def test_literal_schema_property_becomes_a_node_property(schema) -> None:
    document, chunks = doc("d", "Acme was founded in 1990.")
    extraction = ChunkExtraction(chunk_id=chunks[0].id, entities=[ent("Acme", "Company")],
                                 relations=[rel("Acme", "foundedYear", "1990")])
    aligned = Aligner(schema).align_document(document, chunks, [extraction])
    assert aligned.entities["Organization:acme"].properties == {"foundedYear": "1990"}
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


# --------------------------------------------------------------------------- across documents


def _two_docs(first: list[ExtractedEntity], second: list[ExtractedEntity]):
    aligner = Aligner()
    d1, c1 = doc("d1", "one")
    d2, c2 = doc("d2", "two")
    a1 = aligner.align_document(d1, c1, [ChunkExtraction(chunk_id=c1[0].id, entities=first)])
    a2 = aligner.align_document(d2, c2, [ChunkExtraction(chunk_id=c2[0].id, entities=second)])
    return a1, a2


def test_same_id_across_documents_counts_as_a_merge() -> None:
    a1, a2 = _two_docs([ent("Paris")], [ent("Paris"), ent("Lyon")])
    stats = Resolver(NoLookup()).resolve([a1, a2])
    assert (stats.entity_records, stats.new_entities, stats.merged) == (3, 2, 1)


def test_alias_in_an_earlier_document_merges_a_later_name() -> None:
    a1, a2 = _two_docs([ent("Barack Obama", aliases=["Obama"])], [ent("Obama")])
    stats = Resolver(NoLookup()).resolve([a1, a2])
    assert stats.alias_merges == 1
    assert list(a2.entities) == ["entity:barack obama"]
    assert a2.mentions[0].node_id == "entity:barack obama" and a2.mentions[0].names == ["Obama"]


def test_graph_entities_are_marked_existing_and_alias_ids_found() -> None:
    class Graph(NoLookup):
        def existing(self, ids):
            return {i for i in ids if i in {"entity:paris", "entity:barack obama"}}

    a1, a2 = _two_docs([ent("Paris")], [ent("Obama", aliases=["Barack Obama"])])
    stats = Resolver(Graph()).resolve([a1, a2])
    assert a1.entities["entity:paris"].existing
    assert list(a2.entities) == ["entity:barack obama"] and a2.entities["entity:barack obama"].existing
    assert stats.new_entities == 0 and stats.merged == 2


def test_embedding_merge_needs_similarity_and_a_lexical_match() -> None:
    embedder = HashingEmbedder(256)
    a1, a2 = _two_docs([ent("Jean-Paul Sartre"), ent("1990 World Cup")], [ent("Jean Paul Sartre."), ent("1994 World Cup")])
    # name keys differ only by punctuation: identical keys already ("jean paul sartre")
    assert "entity:jean paul sartre" in a1.entities and "entity:jean paul sartre" in a2.entities
    a1, a2 = _two_docs([ent("Charles Babbage")], [ent("Charles Babbages")])
    stats = Resolver(NoLookup(), embedder.embed_documents, similarity=0.8).resolve([a1, a2])
    assert stats.similarity_merges == 1 and list(a2.entities) == ["entity:charles babbage"]
    a1, a2 = _two_docs([ent("1990 World Cup")], [ent("1994 World Cup")])
    stats = Resolver(NoLookup(), embedder.embed_documents, similarity=0.5).resolve([a1, a2])
    assert stats.similarity_merges == 0  # numbers differ: never merged, however similar
    a1, a2 = _two_docs([ent("Charles Babbage")], [ent("Charles Babbages")])
    stats = Resolver(NoLookup(), embedder.embed_documents, similarity=None).resolve([a1, a2])
    assert stats.similarity_merges == 0


class MemoryLookup:
    """A graph stand-in: remembers what earlier batches 'wrote'."""

    def __init__(self) -> None:
        self.nodes: dict[str, dict[str, Any]] = {}

    def write(self, docs) -> None:
        from kag_neo4j.builder.names import name_key

        for d in docs:
            for node in d.entities.values():
                have = self.nodes.setdefault(node.id, {"family": node.family, "key": node.key, "aliases": set(),
                                                       "name": node.name, "vector": node.embedding})
                if have["vector"] is None:
                    have["vector"] = node.embedding
            for m in d.mentions:
                self.nodes[m.node_id]["aliases"].update(n for n in m.names if name_key(n) != self.nodes[m.node_id]["key"])

    def existing(self, ids):
        return {i for i in ids if i in self.nodes}

    def by_alias(self, rows):
        from kag_neo4j.builder.names import name_key

        found: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            for node_id, node in self.nodes.items():
                if node["family"] == row["family"] and any(name_key(a) == row["key"] for a in node["aliases"]):
                    found.setdefault(row["id"], []).append({"match": node_id, "key": node["key"], "family": node["family"],
                                                            "aliases": sorted(node["aliases"])})
        return found

    def similar(self, rows, *, min_cosine, k):
        import numpy as np

        found: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            q = np.asarray(row["vector"])
            for node_id, node in self.nodes.items():
                if node["vector"] is None or node["family"] != row["family"]:
                    continue
                v = np.asarray(node["vector"])
                cosine = float(q @ v / (np.linalg.norm(q) * np.linalg.norm(v)))
                if cosine >= min_cosine:
                    found.setdefault(row["id"], []).append({"match": node_id, "key": node["key"], "family": node["family"],
                                                            "name": node["name"], "cosine": cosine})
        return found


@pytest.mark.parametrize("cuts", [[1], [2, 4], [1, 2, 3, 4], [3], [6], [7], [5, 6, 7], [9, 10]])
def test_resolution_does_not_depend_on_batch_boundaries(cuts: list[int]) -> None:
    embedder = HashingEmbedder(256)
    def person(name: str, **kw: Any) -> ExtractedEntity:
        return ent(name, "Person", **kw)

    names = [[person("Ada Lovelace"), person("Charles Babbage")], [person("Babbage"), person("Charles Babbages")],
             [person("Ada Lovelace", aliases=["Lovelace"]), ent("Analytical Engine")],
             [person("Lovelace"), person("Charles Babbage")], [ent("Analytical Engines"), person("Babbage")],
             [person("Barack Obama")], [person("Barack Obama", aliases=["Obama"])], [person("Obama")],
             [person("Jake Ryan")], [person("Paul Ryan")], [person("Ryan")]]

    def run(boundaries: list[int]) -> list[list[str]]:
        aligner = Aligner()
        docs = []
        for i, group in enumerate(names):
            d, c = doc(f"d{i}", " ".join(e.name for e in group))
            docs.append(aligner.align_document(d, c, [ChunkExtraction(chunk_id=c[0].id, entities=group)]))
        graph = MemoryLookup()
        resolver = Resolver(graph, embedder.embed_documents, similarity=0.75)
        start = 0
        for cut in [*boundaries, len(docs)]:
            resolver.resolve(docs[start:cut])
            graph.write(docs[start:cut])
            start = cut
        return [sorted(d.entities) for d in docs]

    one_batch = run([])
    assert one_batch[3] == ["entity:ada lovelace", "entity:charles babbage"]  # "Lovelace" is an alias
    assert one_batch[1] == ["entity:charles babbage"]  # "Babbage", "Charles Babbages" merged by embedding
    assert one_batch[7] == ["entity:barack obama"]  # an alias another document gave it
    assert one_batch[9] == ["entity:paul ryan"] and one_batch[10] == ["entity:ryan"]  # ambiguous surname stays apart
    assert run(cuts) == one_batch


def test_embedding_merge_respects_semantic_types() -> None:
    embedder = HashingEmbedder(256)
    a1, a2 = _two_docs([ent("Charles Babbage", "Person")], [ent("Charles Babbages", "Organization")])
    stats = Resolver(NoLookup(), embedder.embed_documents, similarity=0.8).resolve([a1, a2])
    assert stats.similarity_merges == 0
    a1, a2 = _two_docs([ent("Charles Babbage", "Person")], [ent("Charles Babbages", "Person")])
    assert Resolver(NoLookup(), embedder.embed_documents, similarity=0.8).resolve([a1, a2]).similarity_merges == 1


def test_a_bare_surname_joins_one_namesake_but_not_two() -> None:
    embedder = HashingEmbedder(256)
    a1, a2 = _two_docs([ent("Jake Ryan", "Person")], [ent("Ryan", "Person")])
    assert Resolver(NoLookup(), embedder.embed_documents, similarity=0.6).resolve([a1, a2]).similarity_merges == 1
    assert list(a2.entities) == ["entity:jake ryan"]
    a1, a2 = _two_docs([ent("Jake Ryan", "Person"), ent("Paul Ryan", "Person")], [ent("Ryan", "Person")])
    assert Resolver(NoLookup(), embedder.embed_documents, similarity=0.6).resolve([a1, a2]).similarity_merges == 0
    # and never for things that are not people
    a1, a2 = _two_docs([ent("Grand Central Terminal", "Location")], [ent("Terminal", "Location")])
    assert Resolver(NoLookup(), embedder.embed_documents, similarity=0.5).resolve([a1, a2]).similarity_merges == 0


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


def test_relationship_types_kag_neo4j_uses_itself_stay_open_facts() -> None:
    from kag_neo4j.builder.align import relationship_type

    assert [relationship_type(name) for name in ("CITES", "cites", "part_of", "Related", "ＣＩＴＥＳ")] == [None] * 5
    assert relationship_type("worksFor") == "worksFor"


def test_look_alike_property_keys_are_dropped_and_reported() -> None:
    from kag_neo4j.builder.align import clean_properties

    issues: list[str] = []
    kept = clean_properties({"Ｃｈｕｎｋ": 1, "Сhunk": 2, "Area²": 3, "born": "1839", "x`y": 4}, issues, "c1")
    assert kept == {"born": "1839"}
    assert len(issues) == 4
