"""Helpers for the builder's integration tests: a deterministic extractor and graph snapshots.

The extractor is a test double for light extraction: capitalised phrases are entities, and
consecutive entities in a sentence are related (open fact ``co-occurs with``). It is fast and
deterministic, so loads can be compared exactly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from kag_neo4j.builder.extract import ExtractionResult
from kag_neo4j.builder.records import (
    ChunkExtraction,
    ChunkRecord,
    ExtractedEntity,
    ExtractedRelation,
    SourceDocument,
)
from kag_neo4j.store.database import Database

_PHRASE = re.compile(r"\b(?:The )?[A-Z][a-z]+(?: [A-Z][a-z]+)*")
_SENTENCE = re.compile(r"[^.!?]+[.!?]?")
_STOP = {"The", "After", "During"}


def phrases(sentence: str) -> list[str]:
    found = []
    for match in _PHRASE.finditer(sentence):
        name = match.group(0)
        name = name.removeprefix("The ")
        if name and name not in _STOP and name not in found:
            found.append(name)
    return found


def capitalised_extraction(chunk: ChunkRecord) -> ChunkExtraction:
    entities: list[ExtractedEntity] = []
    relations: list[ExtractedRelation] = []
    seen: set[str] = set()
    for sentence in _SENTENCE.findall(chunk.text):
        names = phrases(sentence)
        for name in names:
            if name not in seen:
                seen.add(name)
                entities.append(ExtractedEntity(name=name, type="Entity"))
        for left, right in pairwise(names):
            relations.append(ExtractedRelation(subject=left, predicate="co-occurs with", object=right))
    return ChunkExtraction(chunk_id=chunk.id, entities=entities, relations=relations, mode="light")


def capitalised_extractor(document: SourceDocument, chunks: Sequence[ChunkRecord]) -> ExtractionResult:
    return ExtractionResult(extractions=[capitalised_extraction(chunk) for chunk in chunks])


def snapshot(db: Database) -> dict[str, Any]:
    """Everything a load decides, in a comparable form (ids, provenance, counts)."""
    entities = db.read(
        "MATCH (e:Entity) RETURN e.id AS id, e.name AS name, e.aliases AS aliases, "
        "labels(e) AS labels, e.embedding IS NOT NULL AS has_vector"
    )
    facts = db.read(
        "MATCH (a:Entity|Event|Concept)-[r]->(b) WHERE r.chunk_ids IS NOT NULL "
        "RETURN a.id AS source, type(r) AS type, r.predicate AS predicate, b.id AS target, "
        "r.chunk_ids AS chunk_ids, r.doc_ids AS doc_ids"
    )
    mentions = db.read(
        "MATCH (n)-[m:MENTIONED_IN]->(c:Chunk) RETURN n.id AS node, c.id AS chunk, m.count AS count, m.names AS names"
    )
    chunks = db.read("MATCH (c:Chunk)-[:PART_OF]->(d:Document) RETURN c.id AS id, d.id AS doc, "
                     "c.embedding IS NOT NULL AS has_vector")
    documents = db.read("MATCH (d:Document) RETURN d.id AS id, d.status AS status, d.sha256 AS sha256")
    concepts = db.read("MATCH (c:Concept) RETURN c.id AS id, c.source AS source")
    nexts = db.read("MATCH (a:Chunk)-[:NEXT]->(b:Chunk) RETURN a.id AS a, b.id AS b")
    return {
        "entities": sorted((e["id"], e["name"], tuple(sorted(e["aliases"] or [])), tuple(sorted(e["labels"])),
                            e["has_vector"]) for e in entities),
        "facts": sorted((f["source"], f["type"], f["predicate"] or "", f["target"], tuple(sorted(f["chunk_ids"])),
                         tuple(sorted(f["doc_ids"]))) for f in facts),
        "mentions": sorted((m["node"], m["chunk"], m["count"], tuple(sorted(m["names"]))) for m in mentions),
        "chunks": sorted((c["id"], c["doc"], c["has_vector"]) for c in chunks),
        "documents": sorted((d["id"], d["status"], d["sha256"]) for d in documents),
        "concepts": sorted((c["id"], c["source"]) for c in concepts),
        "next": sorted((n["a"], n["b"]) for n in nexts),
    }
