"""The records that flow through the builder: documents, chunks and what extraction found.

Readers produce :class:`SourceDocument`; splitters produce :class:`ChunkRecord`; extractors
(full: one LLM call per chunk; light: NER + co-occurrence, no LLM) produce
:class:`ChunkExtraction`; the normaliser, aligner, vectoriser and writer consume them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from kag_neo4j.schema.constraints import ConstraintViolation

PropertyValue = str | int | float | bool


class SourceDocument(BaseModel):
    """One input document (a file, or one record of a JSON/JSONL/CSV corpus)."""

    id: str = Field(description="stable id: from the record, else derived from the path")
    title: str
    source: str = Field(description="where it came from: a path, path#record or URL")
    text: str = ""
    sha256: str = Field(description="hash of the content; a changed document has a new hash")
    media_type: str = "text/plain"
    metadata: dict[str, Any] = Field(default_factory=dict)
    #: structured records that map onto schema types directly (CSV/JSON structured chain)
    records: list[dict[str, Any]] = Field(default_factory=list)
    record_type: str | None = None


class ChunkRecord(BaseModel):
    """A piece of a document; ``id`` = ``<document id>#<paragraph>#<index>``."""

    id: str
    document_id: str
    text: str
    title: str = ""
    title_path: list[str] = Field(default_factory=list)
    position: int = Field(ge=0, description="order of the chunk in its document")
    paragraph: int = Field(ge=0)
    index: int = Field(ge=0, description="index of the chunk within its paragraph/section")


class ExtractedEntity(BaseModel):
    name: str
    type: str = "Entity"
    description: str = ""
    aliases: list[str] = Field(default_factory=list)
    properties: dict[str, PropertyValue] = Field(default_factory=dict)
    #: the record id of a structured row (CSV/JSON); None for text extractions. A typed record
    #: (its type is a schema type) is identified by it, not by its name
    id: str | None = None
    #: a row of an update file (``CompanyUpdate.csv``): its properties replace the stored ones
    update: bool = False


class ExtractedRelation(BaseModel):
    subject: str
    predicate: str
    object: str
    subject_type: str | None = None
    object_type: str | None = None
    properties: dict[str, PropertyValue] = Field(default_factory=dict)
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    #: structured data: the endpoint as a record id (match an entity ``id`` first, else the name)
    subject_id: str | None = None
    object_id: str | None = None
    #: a relation that is one event among several between the same two nodes (a transfer): it is
    #: written as its own relationship, keyed by this (None: one relationship per s, p, o)
    instance: str | None = None


class ExtractedEvent(BaseModel):
    name: str
    type: str = "Event"
    description: str = ""
    roles: dict[str, str] = Field(default_factory=dict, description="role name -> entity name")
    properties: dict[str, PropertyValue] = Field(default_factory=dict)
    #: the record id of a structured event row (identifies the event, as for entities)
    id: str | None = None
    #: structured rows: role name -> (type, record id) of the role's filler
    role_ids: dict[str, tuple[str, str]] = Field(default_factory=dict)


class DanglingReference(BaseModel):
    """A reference of a structured row to a record the load does not hold."""

    source: str
    row: int
    column: str
    target_type: str
    reference: str
    #: the load keeps such references as bare nodes of the target type (``--dangling create``)
    created: bool = False

    def __str__(self) -> str:
        outcome = f"kept as a bare {self.target_type} node" if self.created else "relation skipped"
        return (f"{self.source} row {self.row}: {self.column} refers to {self.target_type} {self.reference!r}, "
                f"which no {self.target_type} record has (by id or by a key column); {outcome}")


class OpenFactRow(BaseModel):
    """A row of an ``S,P,O`` table that the schema could not (fully) type: what stayed untyped is
    written as an open fact (an untyped end is a plain entity; an undeclared predicate a
    ``:RELATED {predicate}`` edge)."""

    source: str
    row: int
    subject: str
    predicate: str
    object: str
    #: the type each end got from the schema (None: untyped)
    subject_type: str | None = None
    object_type: str | None = None
    #: whether the schema declares the predicate between the ends' types
    declared: bool = False

    def __str__(self) -> str:
        why = []
        if self.subject_type is None:
            why.append("the subject names no typed record and the predicate has no single domain")
        if self.object_type is None:
            why.append("the object names no typed record or concept")
        if not self.declared:
            where = f" on {self.subject_type}" if self.subject_type else ""
            why.append(f"the schema declares no {self.predicate!r}{where}")
        ends = (f"({self.subject_type or '?'} {self.subject!r})-[{self.predicate}]->"
                f"({self.object_type or '?'} {self.object!r})")
        return f"{self.source} row {self.row}: {ends} kept as an open fact: " + "; ".join(why)


class ChunkExtraction(BaseModel):
    """Everything extracted from one chunk, before normalisation and alignment."""

    chunk_id: str
    entities: list[ExtractedEntity] = Field(default_factory=list)
    relations: list[ExtractedRelation] = Field(default_factory=list)
    events: list[ExtractedEvent] = Field(default_factory=list)
    mode: str = Field(default="full", description="full | light | structured")
    #: off-schema output kept as open facts or reported, never silently relabelled
    issues: list[str] = Field(default_factory=list)
    #: schema constraints this chunk's records broke (found before alignment, e.g. a structured
    #: row's NotNull columns); the offending values are not in the extraction
    violations: list[ConstraintViolation] = Field(default_factory=list)
    #: references of structured rows to records the load does not hold (the relation is skipped)
    dangling: list[DanglingReference] = Field(default_factory=list)
    #: ``S,P,O`` rows the schema could not fully type (kept as open facts)
    open_facts: list[OpenFactRow] = Field(default_factory=list)
