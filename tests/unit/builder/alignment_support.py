"""Helpers for the alignment and resolution tests: documents, chunks and extracted records."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from kag_neo4j.builder.records import ChunkRecord, ExtractedEntity, ExtractedRelation, SourceDocument
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

