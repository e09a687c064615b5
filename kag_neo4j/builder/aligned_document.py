"""The aligned-document records: what alignment hands to resolution, the vectoriser and the writer.

Resolved, graph-shaped rows.

Every fact row names the chunk that supports it, so the writer can store provenance
(``MENTIONED_IN`` edges, ``chunk_ids`` / ``doc_ids`` lists) and a document can later be deleted
or replaced exactly. These are plain dataclasses (tens of thousands are made per load).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kag_neo4j.builder.records import ChunkRecord, DanglingReference, OpenFactRow, PropertyValue, SourceDocument
from kag_neo4j.schema.constraints import ConstraintViolation

#: node kinds a fact can start or end at (both are written with an ``id`` uniqueness constraint)
ENTITY = "Entity"
EVENT = "Event"
#: a fact's end may also be a concept (a structured record's concept-typed column: ``belongToIndustry``)
CONCEPT = "Concept"


def entity_id(family: str, key: str) -> str:
    """The id of the entity of type family ``family`` whose name key is ``key``."""
    return f"{family}:{key}"


def event_id(family: str, key: str) -> str:
    return f"event:{family}:{key}"


def record_entity_id(family: str, record_id: str) -> str:
    """The id of the typed structured record ``record_id`` of type family ``family``: records are
    identified by their id, not their name (``#`` never occurs in a name key)."""
    return f"{family}:#{record_id}"


def record_event_id(family: str, record_id: str) -> str:
    return f"event:{family}:#{record_id}"


@dataclass(slots=True, kw_only=True)
class GraphNode:
    """What entity and event nodes share: ``id`` is deterministic (type family + normalised name)."""

    id: str
    name: str
    key: str
    family: str
    labels: tuple[str, ...] = ()
    description: str = ""
    properties: dict[str, PropertyValue] = field(default_factory=dict)
    embedding: list[float] | None = None


@dataclass(slots=True, kw_only=True)
class EntityNode(GraphNode):
    """A resolved entity."""

    semantic_type: str | None = None
    #: ``True`` when the node already exists in the graph (found by the resolver)
    existing: bool = False
    #: the record id of a typed structured record: identified by it, never merged by name
    record_id: str | None = None
    #: written by an update file: its properties replace the stored values
    overwrite: bool = False


@dataclass(slots=True, kw_only=True)
class EventNode(GraphNode):
    event_type: str | None = None


@dataclass(slots=True)
class Mention:
    """``(node)-[:MENTIONED_IN {count, names}]->(chunk)``; ``names`` are the surface forms used."""

    node_id: str
    chunk_id: str
    count: int
    names: list[str]
    kind: str = ENTITY


@dataclass(slots=True)
class FactEdge:
    """A relation between two nodes, supported by one chunk.

    ``rel_type`` is a schema relationship type (already validated), or ``None`` for an open
    fact, written as ``:RELATED {predicate}``.
    """

    source_id: str
    target_id: str
    chunk_id: str
    predicate: str
    rel_type: str | None = None
    source_kind: str = ENTITY
    target_kind: str = ENTITY
    confidence: float = 1.0
    properties: dict[str, PropertyValue] = field(default_factory=dict)
    #: one event among several between the same nodes (a transfer): its own relationship
    instance: str | None = None


@dataclass(slots=True)
class ConceptLink:
    """``(:Entity)-[:BELONGS_TO]->(:Concept)`` found by alignment (supported by one chunk)."""

    entity_id: str
    concept_id: str
    chunk_id: str


@dataclass(slots=True)
class ConceptNode:
    """A concept made by alignment (an entity's semantic type) rather than loaded from a taxonomy."""

    id: str
    name: str
    embedding: list[float] | None = None


@dataclass
class AlignedDocument:
    """One document ready to write: its chunks and every fact extracted from them."""

    document: SourceDocument
    chunks: list[ChunkRecord]
    entities: dict[str, EntityNode] = field(default_factory=dict)
    events: dict[str, EventNode] = field(default_factory=dict)
    mentions: list[Mention] = field(default_factory=list)
    facts: list[FactEdge] = field(default_factory=list)
    concept_links: list[ConceptLink] = field(default_factory=list)
    concepts: dict[str, ConceptNode] = field(default_factory=dict)
    chunk_vectors: dict[str, list[float]] = field(default_factory=dict)
    issues: list[str] = field(default_factory=list)
    #: values left out because they break the schema's constraints (``kag_neo4j.schema.constraints``)
    violations: list[ConstraintViolation] = field(default_factory=list)
    #: references of structured rows that no record of the load matched (their relations are skipped)
    dangling: list[DanglingReference] = field(default_factory=list)
    #: ``S,P,O`` rows the schema could not fully type (written as open facts)
    open_facts: list[OpenFactRow] = field(default_factory=list)
    #: chunks whose extraction failed; the document is then written but not marked complete,
    #: so the next load retries it
    failed_chunks: list[str] = field(default_factory=list)
    #: extracted entity records in this document (one per chunk and name)
    entity_records: int = 0
    #: entity records merged into an entity with another name (alias) or from another chunk/document
    merges: int = 0

    @property
    def id(self) -> str:
        return self.document.id

    def remap_entity(self, old_id: str, new: EntityNode) -> None:
        """Point every fact at ``new`` instead of ``old_id`` (used by cross-document resolution)."""
        gone = self.entities.pop(old_id)
        target = self.entities.get(new.id)
        if target is None:
            self.entities[new.id] = new
        else:
            for key, value in gone.properties.items():
                target.properties.setdefault(key, value)
            if not target.description:
                target.description = gone.description
        for mention in self.mentions:
            if mention.kind == ENTITY and mention.node_id == old_id:
                mention.node_id = new.id
        for fact in self.facts:
            if fact.source_kind == ENTITY and fact.source_id == old_id:
                fact.source_id = new.id
            if fact.target_kind == ENTITY and fact.target_id == old_id:
                fact.target_id = new.id
        for link in self.concept_links:
            if link.entity_id == old_id:
                link.entity_id = new.id
        self.mentions = _merge_mentions(self.mentions)

    def fact_count(self) -> int:
        return len(self.facts)


def _merge_mentions(mentions: list[Mention]) -> list[Mention]:
    """Combine mentions of the same node in the same chunk (after a remap)."""
    merged: dict[tuple[str, str, str], Mention] = {}
    for mention in mentions:
        key = (mention.kind, mention.node_id, mention.chunk_id)
        have = merged.get(key)
        if have is None:
            merged[key] = Mention(mention.node_id, mention.chunk_id, mention.count, list(mention.names), mention.kind)
        else:
            have.count += mention.count
            have.names.extend(n for n in mention.names if n not in have.names)
    return list(merged.values())
