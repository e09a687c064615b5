"""Alignment of typed structured records: nodes identified by their record id, not their name.

A row of ``Company.csv`` (schema type ``Company``, id ``0``) is the entity
``Company:#0`` (:func:`~kag_neo4j.builder.aligned_document.record_entity_id`; ``Company`` is the
type family): two companies whose masked names coincide (``**娱乐**公司``) stay two, and a
relation row ``Person_holdShare_Company.csv: 10,0`` meets exactly the records it names (the
extractor already turned a reference by key column, ``certNum``, into the record id). Events
are ``event:<family>:#<id>``. A reference to a concept type (``belongToIndustry``, an event's
``index``) is a fact whose end is the ``:Concept`` of that name
(:func:`~kag_neo4j.builder.concepts.concept_id`, the id rules use too). A relation row with an
``instance`` key (one transfer among several) stays its own fact. Records without an id, or of no
schema type, are identified by name as in :mod:`kag_neo4j.builder.alignment`.

:func:`align_structured` is used by :class:`~kag_neo4j.builder.alignment.Aligner` for every
document whose extractions hold typed records (:func:`has_typed_records`).
"""

from __future__ import annotations

from collections.abc import Sequence

from kag_neo4j.builder.aligned_document import (
    CONCEPT,
    ENTITY,
    EVENT,
    AlignedDocument,
    ConceptNode,
    EntityNode,
    EventNode,
    FactEdge,
    Mention,
    entity_id,
    event_id,
    record_entity_id,
    record_event_id,
)
from kag_neo4j.builder.concepts import concept_id
from kag_neo4j.builder.names import name_key
from kag_neo4j.builder.records import ChunkExtraction, ChunkRecord, ExtractedEntity, PropertyValue, SourceDocument
from kag_neo4j.builder.type_resolution import TypeResolver, relationship_type
from kag_neo4j.errors import TaxonomyError
from kag_neo4j.schema.models import ResolvedType, TypeKind

#: node property that keeps a typed record's own id (``id`` is the graph's: ``Company:#0``)
RECORD_ID = "record_id"


def has_typed_records(extractions: Sequence[ChunkExtraction], types: TypeResolver) -> bool:
    """Whether ``extractions`` come from a structured table whose rows are typed records."""
    for extraction in extractions:
        if extraction.mode != "structured":
            return False
        if any(event.id for event in extraction.events):
            return True
        if any(entity.id and types.resolve(entity.type).schema_type is not None for entity in extraction.entities):
            return True
    return False


def _is_concept(spg_type: ResolvedType | None) -> bool:
    return spg_type is not None and spg_type.kind == TypeKind.CONCEPT


class _StructuredAligner:
    def __init__(self, document: SourceDocument, chunks: Sequence[ChunkRecord], types: TypeResolver) -> None:
        self.types = types
        self.doc = AlignedDocument(document=document, chunks=list(chunks))
        self.mentioned: set[tuple[str, str]] = set()

    # ------------------------------------------------------------------ nodes
    def node_id(self, type_name: str | None, record_id: str | None, name: str) -> tuple[str, str] | None:
        """(node id, kind) of the record ``record_id`` (or the thing called ``name``) of ``type_name``."""
        info = self.types.resolve(type_name)
        if _is_concept(info.schema_type):
            try:
                return concept_id(record_id or name), CONCEPT
            except TaxonomyError:
                return None
        if record_id and info.schema_type is not None and not info.generic:
            return record_entity_id(info.family, record_id), ENTITY
        key = name_key(name)
        return (entity_id(info.family, key), ENTITY) if key else None

    def entity(self, entity: ExtractedEntity, chunk_id: str) -> str | None:
        found = self.node_id(entity.type, entity.id, entity.name)
        if found is None:
            self.doc.issues.append(f"{chunk_id}: entity {entity.name!r} has no letters or digits; skipped")
            return None
        node_id, kind = found
        if kind == CONCEPT:
            self.concept(node_id, entity.id or entity.name)
            return node_id
        info = self.types.resolve(entity.type)
        from kag_neo4j.builder.alignment import clean_properties  # one cleaner for both aligners

        own = dict(entity.properties)
        semantic = own.pop("semantic_type", None)
        properties = clean_properties(own, self.doc.issues, f"{chunk_id}: {entity.name}")
        identified = entity.id is not None and node_id == record_entity_id(info.family, entity.id)
        if identified and entity.id:
            properties.setdefault(RECORD_ID, entity.id)
        node = self.doc.entities.get(node_id)
        if node is None:
            node = self.doc.entities[node_id] = EntityNode(
                id=node_id, name=entity.name.strip(), key=name_key(entity.name) or node_id, family=info.family,
                labels=info.labels, description=entity.description.strip(), properties=properties,
                semantic_type=str(semantic) if isinstance(semantic, str) and semantic else None,
                record_id=entity.id if identified else None, overwrite=entity.update,
            )
        else:
            node.labels = tuple(sorted(set(node.labels) | set(info.labels)))
            for key, value in properties.items():
                if entity.update:
                    node.properties[key] = value
                else:
                    node.properties.setdefault(key, value)
            node.description = node.description or entity.description.strip()
            node.overwrite = node.overwrite or entity.update
        self.mention(node_id, chunk_id, [entity.name.strip(), *(a.strip() for a in entity.aliases if a.strip())])
        return node_id

    def mention(self, node_id: str, chunk_id: str, names: list[str], kind: str = ENTITY) -> None:
        if (node_id, chunk_id) in self.mentioned:
            for mention in self.doc.mentions:
                if mention.node_id == node_id and mention.chunk_id == chunk_id:
                    mention.names.extend(n for n in names if n not in mention.names)
            return
        self.mentioned.add((node_id, chunk_id))
        self.doc.mentions.append(Mention(node_id, chunk_id, 1, list(dict.fromkeys(names)), kind))

    def concept(self, node_id: str, name: str) -> None:
        self.doc.concepts.setdefault(node_id, ConceptNode(id=node_id, name=name))

    def endpoint(self, type_name: str | None, record_id: str | None, name: str, chunk_id: str) -> tuple[str, str] | None:
        """A relation end; one not yet mentioned in its chunk becomes a bare node of it (the
        writer needs every end in the graph)."""
        found = self.node_id(type_name, record_id, name)
        if found is None:
            return None
        if found[1] == CONCEPT:
            self.concept(found[0], record_id or name)
        elif (found[0], chunk_id) not in self.mentioned:
            self.entity(ExtractedEntity(name=name, type=type_name or "Entity", id=record_id), chunk_id)
        return found

    # ------------------------------------------------------------------ facts
    def relation_type(self, subject: str | None, predicate: str, target: str | None) -> str | None:
        relation = self.types.relation(self.types.resolve(subject).schema_type, predicate,
                                       self.types.resolve(target).schema_type)
        return relationship_type(relation.rel_type) if relation is not None else None

    def extraction(self, extraction: ChunkExtraction) -> None:
        from kag_neo4j.builder.alignment import clean_properties

        chunk_id = extraction.chunk_id
        self.doc.issues.extend(extraction.issues)
        self.doc.dangling.extend(extraction.dangling)
        self.doc.open_facts.extend(extraction.open_facts)
        self.doc.violations.extend(extraction.violations)  # checked where the row became a property map
        for entity in extraction.entities:
            self.entity(entity, chunk_id)
        for event in extraction.events:
            info = self.types.resolve(event.type, event=True)
            key = name_key(event.name)
            if not key and not event.id:
                self.doc.issues.append(f"{chunk_id}: event {event.name!r} has no letters or digits; skipped")
                continue
            node_id = record_event_id(info.family, event.id) if event.id else event_id(info.family, key)
            own = {k: v for k, v in event.properties.items() if k != "id"}
            properties: dict[str, PropertyValue] = clean_properties(own, self.doc.issues, f"{chunk_id}: {event.name}")
            if event.id:
                properties.setdefault(RECORD_ID, event.id)
            self.doc.events.setdefault(node_id, EventNode(
                id=node_id, name=event.name.strip(), key=key or node_id, family=info.family, labels=info.labels,
                event_type=event.type or None, description=event.description.strip(), properties=properties,
            ))
            self.mention(node_id, chunk_id, [event.name.strip()], EVENT)
            for role, (role_type, role_id) in event.role_ids.items():
                target = self.endpoint(role_type, role_id, event.roles.get(role, role_id), chunk_id)
                if target is None:
                    continue
                rel_type = self.relation_type(event.type, role, role_type)
                self.doc.facts.append(FactEdge(node_id, target[0], chunk_id, role if rel_type is None else rel_type,
                                               rel_type, EVENT, target[1]))
        for relation in extraction.relations:
            source = self.endpoint(relation.subject_type, relation.subject_id, relation.subject, chunk_id)
            target = self.endpoint(relation.object_type, relation.object_id, relation.object, chunk_id)
            if source is None or target is None or source == target or source[1] == CONCEPT:
                continue
            rel_type = self.relation_type(relation.subject_type, relation.predicate, relation.object_type)
            properties = clean_properties(dict(relation.properties), self.doc.issues, f"{chunk_id}: {relation.predicate}")
            self.doc.facts.append(FactEdge(
                source[0], target[0], chunk_id, relation.predicate if rel_type is None else rel_type, rel_type,
                source[1], target[1], relation.confidence, properties, relation.instance,
            ))


def align_structured(
    document: SourceDocument,
    chunks: Sequence[ChunkRecord],
    extractions: Sequence[ChunkExtraction],
    types: TypeResolver,
) -> AlignedDocument:
    """One document of typed structured records, aligned (see the module docs)."""
    aligner = _StructuredAligner(document, chunks, types)
    known = {chunk.id for chunk in chunks}
    for extraction in extractions:
        if extraction.chunk_id not in known:
            aligner.doc.issues.append(f"extraction for unknown chunk {extraction.chunk_id!r} in document "
                                      f"{document.id!r}; skipped")
            continue
        aligner.extraction(extraction)
    aligner.doc.entity_records = sum(1 for mention in aligner.doc.mentions if mention.kind == ENTITY)
    return aligner.doc
