"""The writer's slicing and rows, and that hostile labels never reach Cypher (no database)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from kag_neo4j.builder.aligned_document import AlignedDocument, EntityNode, FactEdge, Mention
from kag_neo4j.builder.records import ChunkRecord, SourceDocument
from kag_neo4j.builder.write import SliceRows, slices, write_rows
from kag_neo4j.errors import InvalidIdentifierError


def aligned(doc_id: str, chunks: int, failed: bool = False) -> AlignedDocument:
    text = f"text of {doc_id}"
    document = SourceDocument(id=doc_id, title=doc_id, source=doc_id, text=text, sha256=hashlib.sha256(text.encode()).hexdigest())
    records = [ChunkRecord(id=f"{doc_id}#{i}#0", document_id=doc_id, text=f"{doc_id} {i}", position=i, paragraph=i, index=0)
               for i in range(chunks)]
    doc = AlignedDocument(document=document, chunks=records)
    node = EntityNode(id="entity:x", name="X", key="x", family="entity", embedding=[0.1, 0.2])
    doc.entities[node.id] = node
    other = EntityNode(id=f"entity:{doc_id}", name=doc_id, key=doc_id, family="entity")
    doc.entities[other.id] = other
    for chunk in records:
        doc.mentions.append(Mention(node.id, chunk.id, 1, ["X", "x-alias"]))
        doc.mentions.append(Mention(other.id, chunk.id, 2, [doc_id]))
        doc.facts.append(FactEdge(node.id, other.id, chunk.id, "likes"))
    if failed:
        doc.failed_chunks = [records[0].id]
    return doc


def test_slices_cut_documents_and_mark_completion_with_the_last_chunk() -> None:
    docs = [aligned("a", 3), aligned("b", 1), aligned("c", 4)]
    parts = list(slices(docs, 2))
    assert [[c.id for _, c in p.chunks] for p in parts] == [
        ["a#0#0", "a#1#0"], ["a#2#0", "b#0#0"], ["c#0#0", "c#1#0"], ["c#2#0", "c#3#0"]]
    assert [p.complete for p in parts] == [[], ["a", "b"], [], ["c"]]


def test_a_document_with_failed_chunks_is_never_marked_complete() -> None:
    parts = list(slices([aligned("a", 2, failed=True), aligned("b", 1)], 10))
    assert parts[0].complete == ["b"]


def test_rows_aggregate_facts_and_link_chunks_across_slices() -> None:
    doc = aligned("a", 3)
    _first, second = list(slices([doc], 2))
    rows = SliceRows(second)
    assert rows.next == [{"source": "a#1#0", "target": "a#2#0"}]  # NEXT reaches into the earlier slice
    [fact_rows] = rows.facts.values()
    assert fact_rows == [{"source": "entity:x", "target": "entity:a", "predicate": "likes", "chunk_ids": ["a#2#0"],
                          "doc_ids": ["a"], "confidence": 1.0, "properties": {}}]
    both = SliceRows(next(iter(slices([doc], 10))))
    [[fact]] = both.facts.values()
    assert fact["chunk_ids"] == ["a#0#0", "a#1#0", "a#2#0"]
    chunk = both.chunks[0]
    assert {m["node"] for m in chunk["mentions"]} == {"entity:x", "entity:a"}
    [[x_row, _a_row]] = [sorted(r, key=lambda r: r["id"], reverse=True) for r in both.entities.values()]
    assert x_row["aliases"] == ["x-alias"] and x_row["embedding"] == [0.1, 0.2]


def test_rows_that_add_nothing_to_an_existing_node_are_skipped() -> None:
    doc = aligned("a", 2)
    doc.entities["entity:a"].existing = True
    sent: dict[str, Any] = {}
    first, second = list(slices([doc], 1))
    ids_first = {r["id"] for rows in SliceRows(first, sent).entities.values() for r in rows}
    ids_second = {r["id"] for rows in SliceRows(second, sent).entities.values() for r in rows}
    assert ids_first == {"entity:x"}  # entity:a exists and gains nothing
    assert ids_second == set()  # entity:x was created by the first transaction


class RecordingTx:
    def __init__(self) -> None:
        self.statements: list[str] = []

    def run(self, cypher: str, params: dict[str, Any]) -> Any:
        self.statements.append(cypher)

        class Result:
            def consume(self) -> None:
                return None

            def single(self) -> dict[str, Any]:  # the endpoint check finds nothing missing; the version bump
                return {"missing": [], "version": 1}

        return Result()


@pytest.mark.parametrize("label", ["Bad`Label", "x) DETACH DELETE n //", "Person:Admin", "", "1abc"])
def test_hostile_labels_are_refused_before_any_cypher_runs(label: str) -> None:
    doc = aligned("a", 1)
    doc.entities["entity:x"].labels = (label,)
    rows = SliceRows(next(iter(slices([doc], 10))))
    tx = RecordingTx()
    with pytest.raises(InvalidIdentifierError):
        write_rows(tx, rows)  # type: ignore[arg-type]
    assert not any(label in statement for statement in tx.statements if label)


def test_hostile_relationship_types_are_refused() -> None:
    doc = aligned("a", 1)
    doc.facts[0].rel_type = "KNOWS]->() DETACH DELETE n //"
    rows = SliceRows(next(iter(slices([doc], 10))))
    with pytest.raises(InvalidIdentifierError):
        write_rows(RecordingTx(), rows)  # type: ignore[arg-type]


def test_statements_run_nodes_before_edges() -> None:
    doc = aligned("a", 2)
    doc.entities["entity:x"].labels = ("Person",)
    tx = RecordingTx()
    write_rows(tx, SliceRows(next(iter(slices([doc], 10)))))  # type: ignore[arg-type]
    order = [s.splitlines()[0] for s in tx.statements]
    assert order[0].startswith("// Documents")
    assert order.index(next(o for o in order if o.startswith("// Entities"))) < order.index(
        next(o for o in order if o.startswith("// Chunks")))
    assert any("SET e:`Person`" in s for s in tx.statements)
    assert tx.statements[-2].splitlines()[0].startswith("// Checkpoint")
    assert tx.statements[-1].splitlines()[0].startswith("// Tell readers")  # the version moves with the writes
    checked = order.index(next(o for o in order if o.startswith("// The ids among $ids")))
    assert checked < order.index(next(o for o in order if o.startswith("// Chunks")))


@pytest.mark.parametrize("label", ["Chunk", "Document", "KagRun", "chunk"])
def test_kag_neo4j_labels_are_never_set_on_entities(label: str) -> None:
    doc = aligned("a", 1)
    doc.entities["entity:x"].labels = ("Person", label)
    tx = RecordingTx()
    with pytest.raises(InvalidIdentifierError, match="kag-neo4j's own"):
        write_rows(tx, SliceRows(next(iter(slices([doc], 10)))))  # type: ignore[arg-type]
    assert not any(f":`{label}`" in statement for statement in tx.statements)


@pytest.mark.parametrize("rel_type", ["CITES", "MENTIONED_IN", "part_of"])
def test_kag_neo4j_relationship_types_are_never_facts(rel_type: str) -> None:
    doc = aligned("a", 1)
    doc.facts[0].rel_type = rel_type
    tx = RecordingTx()
    with pytest.raises(InvalidIdentifierError, match="kag-neo4j's own"):
        write_rows(tx, SliceRows(next(iter(slices([doc], 10)))))  # type: ignore[arg-type]
    assert not any(f":`{rel_type}`" in statement for statement in tx.statements)
