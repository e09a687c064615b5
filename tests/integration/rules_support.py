"""A line extractor for rule tests: one fact per line, ``S|Type pred O|Type`` or ``E|Type key=value``,
so a test states its input exactly and still loads it through the real pipeline."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from kag_neo4j.builder.extract import ExtractionResult
from kag_neo4j.builder.records import ChunkExtraction, ChunkRecord, ExtractedEntity, ExtractedRelation, SourceDocument


def line_extractor(document: SourceDocument, chunks: Sequence[ChunkRecord]) -> ExtractionResult:
    extractions = []
    for chunk in chunks:
        entities: dict[str, ExtractedEntity] = {}
        relations = []
        for line in chunk.text.splitlines():
            parts = line.split()
            if not parts:
                continue
            name, kind = parts[0].split("|")
            entity = entities.setdefault(name, ExtractedEntity(name=name, type=kind))
            if "=" in parts[1]:
                key, value = parts[1].split("=", 1)
                entity.properties[key] = value
                continue
            other, other_kind = parts[2].split("|")
            entities.setdefault(other, ExtractedEntity(name=other, type=other_kind))
            relations.append(ExtractedRelation(subject=name, predicate=parts[1], object=other,
                                               subject_type=kind, object_type=other_kind))
        extractions.append(ChunkExtraction(chunk_id=chunk.id, entities=list(entities.values()), relations=relations))
    return ExtractionResult(extractions=extractions)


def line_document(doc_id: str, lines: list[str]) -> SourceDocument:
    text = "\n".join(lines)
    return SourceDocument(id=doc_id, title=doc_id, source=f"test:{doc_id}", text=text,
                          sha256=hashlib.sha256(text.encode()).hexdigest())
