"""Alignment of one document: the extractions of its chunks -> one :class:`AlignedDocument`.

:meth:`Aligner.align_document` groups the entity records of all chunks of a document by *name
key* (:func:`~kag_neo4j.builder.names.name_key`) and *type family*
(:mod:`kag_neo4j.builder.type_resolution`): sub- and super-types merge while ``Person`` and
``Location`` never do; an untyped or generic record joins the one specific family its name has in
the document, if there is exactly one. Aliases given by the extractor join their groups too. Each
group becomes one :class:`~kag_neo4j.builder.aligned_document.EntityNode` whose id is
``<family>:<name key>``: deterministic, so the same entity in another document gets the same id
and the writer's ``MERGE`` joins them. Relations are matched against the schema (typed
relationship, or a literal property of the subject's type); the rest stay open facts. Taxonomy
concepts and semantic types become ``BELONGS_TO`` links.

Typed structured records (CSV rows of a schema type with an id) are aligned by
:mod:`kag_neo4j.builder.structured_alignment` instead: identified by their record id.

Resolution against other documents and the graph comes after, in
:mod:`kag_neo4j.builder.resolution`.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kag_neo4j.builder.aligned_document import (
    ENTITY,
    EVENT,
    AlignedDocument,
    ConceptLink,
    ConceptNode,
    EntityNode,
    EventNode,
    FactEdge,
    Mention,
    entity_id,
    event_id,
)
from kag_neo4j.builder.concepts import Taxonomy, concept_id
from kag_neo4j.builder.names import display_rank, name_key
from kag_neo4j.builder.records import ChunkExtraction, ChunkRecord, ExtractedRelation, PropertyValue, SourceDocument
from kag_neo4j.builder.structured_alignment import align_structured, has_typed_records
from kag_neo4j.builder.type_resolution import GENERIC_TYPES, TypeInfo, TypeResolver, relationship_type
from kag_neo4j.errors import InvalidIdentifierError
from kag_neo4j.schema.constraints import (
    ConstraintViolation,
    Where,
    check_properties,
    check_value,
    missing_required,
    required,
    second_value,
)
from kag_neo4j.schema.models import ResolvedSchema, ResolvedType
from kag_neo4j.store.identifiers import check_identifier

#: node properties the writer owns; an extracted property with one of these names is dropped
RESERVED_PROPERTIES = frozenset({"id", "name", "name_key", "family", "aliases", "alias_text", "description",
                                 "semantic_type", "embedding", "created_at", "updated_at", "chunk_ids", "doc_ids",
                                 "predicate", "confidence", "count", "names", "status", "event_type"})
#: extracted entity properties that name a semantic type (KAG's ``semanticType``)
SEMANTIC_TYPE_KEYS = ("semanticType", "semantic_type", "concept", "category")


def clean_properties(properties: dict[str, Any], issues: list[str], where: str) -> dict[str, PropertyValue]:
    """Keep properties with safe keys and primitive values; report the rest."""
    kept: dict[str, PropertyValue] = {}
    for key, value in properties.items():
        if key in RESERVED_PROPERTIES:
            issues.append(f"{where}: property {key!r} is reserved by kag-neo4j and was dropped")
            continue
        try:
            check_identifier(key, what="property key")
        except InvalidIdentifierError:
            issues.append(f"{where}: property key {key!r} is not a valid identifier and was dropped")
            continue
        if isinstance(value, (str, int, float, bool)) and not (isinstance(value, float) and not math.isfinite(value)):
            kept[key] = value
        else:
            issues.append(f"{where}: property {key!r} has a non-scalar value and was dropped")
    return kept


#: the mode of a structured reader's extractions: their values were checked against the schema's
#: constraints where the row became a property map (:func:`kag_neo4j.builder.extract.structured.record_properties`)
STRUCTURED = "structured"


class _Places:
    """Where a chunk's values came from, for constraint violations: file and row for a structured
    record (row = 1-based record number, the header not counted), else the chunk."""

    def __init__(self, document: SourceDocument, chunks: Sequence[ChunkRecord]) -> None:
        self.file = document.source
        self.rows = bool(document.records)
        self.paragraph = {chunk.id: chunk.paragraph for chunk in chunks}

    def __call__(self, chunk_id: str) -> Where:
        paragraph = self.paragraph.get(chunk_id)
        row = paragraph + 1 if self.rows and paragraph is not None else None
        return Where(file=self.file, row=row, chunk=chunk_id)


@dataclass
class _Record:
    """One extracted entity in one chunk (or an endpoint of a relation/event role)."""

    chunk_id: str
    name: str
    key: str
    info: TypeInfo
    aliases: list[str] = field(default_factory=list)
    description: str = ""
    properties: dict[str, PropertyValue] = field(default_factory=dict)
    semantic_type: str | None = None
    primary: bool = True
    family: str = ""


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[tuple[str, str], tuple[str, str]] = {}

    def find(self, item: tuple[str, str]) -> tuple[str, str]:
        parent = self.parent.setdefault(item, item)
        if parent != item:
            parent = self.parent[item] = self.find(parent)
        return parent

    def union(self, a: tuple[str, str], b: tuple[str, str]) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _count_occurrences(text: str, names: Sequence[str]) -> int:
    lowered = text.casefold()
    total = 0
    for name in sorted({n.casefold() for n in names if n.strip()}, key=len, reverse=True):
        if name.isascii() and name[:1].isalnum():
            total += len(re.findall(r"(?<!\w)" + re.escape(name) + r"(?!\w)", lowered))
        else:
            total += lowered.count(name)
    return max(1, total)


class Aligner:
    """Aligns the extractions of one document (see the module docs).

    ``schema``: the SPG schema facts are checked against (``None``: open extraction, every
    relation is an open fact). ``taxonomy``: concepts entities are linked to.
    ``concept_links_from_types``: make ``BELONGS_TO`` links from semantic types (off for light
    extraction, whose types are NER labels rather than concepts).
    """

    def __init__(
        self,
        schema: ResolvedSchema | None = None,
        taxonomy: Taxonomy | None = None,
        *,
        concept_links_from_types: bool = True,
    ) -> None:
        self.types = TypeResolver(schema)
        self.schema = schema
        self.taxonomy = taxonomy
        self.concept_links_from_types = concept_links_from_types

    # ------------------------------------------------------------------ records
    def _entity_records(self, extraction: ChunkExtraction, issues: list[str], place: _Places,
                        violations: list[ConstraintViolation]) -> list[_Record]:
        records: list[_Record] = []
        for entity in extraction.entities:
            key = name_key(entity.name)
            if not key:
                issues.append(f"{extraction.chunk_id}: entity {entity.name!r} has no letters or digits; skipped")
                continue
            info = self.types.resolve(entity.type)
            if info.off_schema:
                issues.append(f"{extraction.chunk_id}: entity {entity.name!r} has off-schema type {entity.type!r}; "
                              "kept as a generic entity")
            semantic = next((str(entity.properties[k]) for k in SEMANTIC_TYPE_KEYS
                             if isinstance(entity.properties.get(k), str) and entity.properties[k]), None)
            own = {k: v for k, v in entity.properties.items() if k not in SEMANTIC_TYPE_KEYS}
            properties = clean_properties(own, issues, f"{extraction.chunk_id}: {entity.name}")
            if extraction.mode != STRUCTURED:  # a structured record's values were checked by its reader
                properties, broken = check_properties(info.schema_type, properties, where=place(extraction.chunk_id))
                violations.extend(broken)
            if semantic is None and info.generic and info.raw and info.raw.casefold() not in GENERIC_TYPES:
                semantic = info.raw  # an off-schema type word ("Team") is a semantic type
            records.append(_Record(extraction.chunk_id, entity.name.strip(), key, info,
                                   aliases=[a.strip() for a in entity.aliases if name_key(a)],
                                   description=entity.description.strip(), properties=properties,
                                   semantic_type=semantic))
        return records

    def align_document(
        self,
        document: SourceDocument,
        chunks: Sequence[ChunkRecord],
        extractions: Sequence[ChunkExtraction],
    ) -> AlignedDocument:
        if self.schema is not None and has_typed_records(extractions, self.types):
            return align_structured(document, chunks, extractions, self.types)
        aligned = AlignedDocument(document=document, chunks=list(chunks))
        issues = aligned.issues
        place = _Places(document, chunks)
        text_of = {chunk.id: chunk.text for chunk in chunks}
        by_chunk: dict[str, list[_Record]] = {}
        for extraction in extractions:
            if extraction.chunk_id not in text_of:
                issues.append(f"extraction for unknown chunk {extraction.chunk_id!r} in document {document.id!r}; skipped")
                continue
            issues.extend(extraction.issues)
            aligned.violations.extend(extraction.violations)
            aligned.dangling.extend(extraction.dangling)
            aligned.open_facts.extend(extraction.open_facts)
            by_chunk.setdefault(extraction.chunk_id, []).extend(
                self._entity_records(extraction, issues, place, aligned.violations))
        # relation and role endpoints that were not extracted as entities become records too
        for extraction in extractions:
            records = by_chunk.get(extraction.chunk_id)
            if records is None:
                continue
            event_keys = {name_key(event.name) for event in extraction.events}
            known = {r.key for r in records} | {name_key(a) for r in records for a in r.aliases}
            for relation in extraction.relations:
                subject_type = self._record_type(records, name_key(relation.subject), relation.subject_type)
                if self.types.literal_property(subject_type, relation.predicate) and \
                        name_key(relation.object) not in known:
                    ends = [(relation.subject, relation.subject_type)]
                else:
                    object_type = self._range_type(records, subject_type, relation)
                    ends = [(relation.subject, relation.subject_type), (relation.object, object_type)]
                for name, type_hint in ends:
                    key = name_key(name)
                    if key and key not in known and key not in event_keys:
                        records.append(_Record(extraction.chunk_id, name.strip(), key, self.types.resolve(type_hint),
                                               primary=False))
                        known.add(key)
            for event in extraction.events:
                for role_value in event.roles.values():
                    key = name_key(role_value)
                    if key and key not in known:
                        records.append(_Record(extraction.chunk_id, role_value.strip(), key, self.types.resolve(None),
                                               primary=False))
                        known.add(key)
        all_records = [r for records in by_chunk.values() for r in records]
        groups = self._group(all_records)
        self._build_entities(aligned, groups, text_of)
        node_of = {(r.chunk_id, r.key): entity_id_ for entity_id_, members in groups.items() for r in members}
        alias_of = {(r.chunk_id, name_key(a)): entity_id_ for entity_id_, members in groups.items()
                    for r in members for a in r.aliases}
        events_here: dict[tuple[str, str], str] = {}
        values = _ValueCounts()
        for extraction in extractions:
            if extraction.chunk_id in by_chunk:
                self._align_events(aligned, extraction, node_of, alias_of, events_here, text_of, place)
                self._align_relations(aligned, extraction, node_of, alias_of, events_here, place, values)
        values.settle(aligned, place)
        aligned.entity_records = len({(r.chunk_id, node_of[(r.chunk_id, r.key)]) for r in all_records})
        if not document.records:  # a structured record's NotNull columns are checked by its reader
            self._check_required(aligned, groups, place)
        return aligned

    def _check_required(self, aligned: AlignedDocument, groups: dict[str, list[_Record]], place: _Places) -> None:
        """``NotNull`` properties of the entities this document's text describes (not of those it
        only names as a relation's endpoint), once the document's records are merged."""
        for node_id, members in groups.items():
            first = next((r for r in members if r.primary), None)
            node = aligned.entities.get(node_id)
            if first is None or node is None:
                continue
            schema_type = self._schema_type_of(node)
            if schema_type is None:
                continue
            present = {*node.properties, "id", "name", *(("desc", "description") if node.description else ())}
            aligned.violations.extend(missing_required(schema_type.name, required(schema_type), present,
                                                       where=place(first.chunk_id)))

    def _range_type(self, records: list[_Record], subject_type: ResolvedType | None,
                    relation: ExtractedRelation) -> str | None:
        """The type of a relation's object: the one it was extracted with, else the target type of
        the schema relation its predicate names (``Disease -[applicableMedicine]-> Medicine`` makes
        an untyped object a ``Medicine``). The chunk's untyped records of that object take the type
        too, so they are not left as generic entities."""
        if not self.types.resolve(relation.object_type).generic:
            return relation.object_type
        schema_relation = self.types.relation(subject_type, relation.predicate, None)
        if schema_relation is None:
            return relation.object_type
        typed = self.types.resolve(schema_relation.target)
        if typed.schema_type is None:
            return relation.object_type
        key = name_key(relation.object)
        for record in records:
            if record.key == key and record.info.generic:
                record.info = typed
        return schema_relation.target

    def _record_type(self, records: list[_Record], key: str, hint: str | None) -> ResolvedType | None:
        for record in records:
            if record.key == key and record.info.schema_type is not None:
                return record.info.schema_type
        return self.types.resolve(hint).schema_type if hint else None

    # ------------------------------------------------------------------ grouping
    def _group(self, records: list[_Record]) -> dict[str, list[_Record]]:
        specific: dict[str, set[str]] = {}
        for record in records:
            if not record.info.generic:
                for key in (record.key, *(name_key(a) for a in record.aliases)):
                    specific.setdefault(key, set()).add(record.info.family)
        for record in records:
            if record.info.generic:
                families = specific.get(record.key, set())
                record.family = next(iter(families)) if len(families) == 1 else record.info.family
            else:
                record.family = record.info.family
        union = _UnionFind()
        for record in records:
            union.find((record.family, record.key))
            for alias in record.aliases:
                union.union((record.family, record.key), (record.family, name_key(alias)))
        members: dict[tuple[str, str], list[_Record]] = {}
        for record in records:
            members.setdefault(union.find((record.family, record.key)), []).append(record)
        groups: dict[str, list[_Record]] = {}
        for (family, _), group in members.items():
            primary = Counter(r.key for r in group if r.primary) or Counter(r.key for r in group)
            canonical = min(primary, key=lambda k: (-primary[k], -len(k), k))
            groups.setdefault(entity_id(family, canonical), []).extend(group)
        return groups

    def _build_entities(self, aligned: AlignedDocument, groups: dict[str, list[_Record]], text_of: dict[str, str]) -> None:
        for node_id, group in groups.items():
            family, key = node_id.split(":", 1)
            surfaces = Counter(r.name for r in group if r.key == key) or Counter(r.name for r in group)
            name = min(surfaces, key=lambda n: (display_rank(n), -surfaces[n], n))
            labels: list[str] = []
            for record in group:
                labels.extend(label for label in record.info.labels if label not in labels)
            semantic = Counter(r.semantic_type for r in group if r.semantic_type)
            properties: dict[str, PropertyValue] = {}
            for record in group:
                for prop, value in record.properties.items():
                    properties.setdefault(prop, value)
            descriptions = [r.description for r in group if r.description]
            node = EntityNode(
                id=node_id, name=name, key=key, family=family, labels=tuple(sorted(labels)),
                semantic_type=min(semantic, key=lambda s: (-semantic[s], s)) if semantic else None,
                description=max(descriptions, key=lambda d: (len(d), d)) if descriptions else "",
                properties=properties,
            )
            aligned.entities[node_id] = node
            by_chunk: dict[str, list[str]] = {}
            for record in group:
                names = by_chunk.setdefault(record.chunk_id, [])
                for surface in (record.name, *record.aliases):
                    if surface not in names:
                        names.append(surface)
            for chunk_id, names in by_chunk.items():
                aligned.mentions.append(Mention(node_id, chunk_id, _count_occurrences(text_of[chunk_id], names), names))
                self._link_concepts(aligned, node, names, chunk_id)

    def _link_concepts(self, aligned: AlignedDocument, node: EntityNode, names: list[str], chunk_id: str) -> None:
        targets: list[str] = []
        if self.taxonomy is not None:
            for surface in (node.name, *names):
                concept = self.taxonomy.get(surface)
                if concept is not None and concept.id not in targets:
                    targets.append(concept.id)
        if self.concept_links_from_types and node.semantic_type and name_key(node.semantic_type):
            cid = concept_id(node.semantic_type)
            if cid not in targets:
                targets.append(cid)
            in_taxonomy = self.taxonomy is not None and cid in self.taxonomy.concepts
            if not in_taxonomy and cid not in aligned.concepts:
                aligned.concepts[cid] = ConceptNode(id=cid, name=node.semantic_type)
        for cid in targets:
            aligned.concept_links.append(ConceptLink(node.id, cid, chunk_id))

    # ------------------------------------------------------------------ facts
    def _endpoint(
        self, chunk_id: str, name: str, node_of: dict[tuple[str, str], str], alias_of: dict[tuple[str, str], str],
        events: dict[tuple[str, str], str],
    ) -> tuple[str, str] | None:
        key = name_key(name)
        if (chunk_id, key) in events:
            return events[(chunk_id, key)], EVENT
        node = node_of.get((chunk_id, key)) or alias_of.get((chunk_id, key))
        return (node, ENTITY) if node else None

    def _align_events(
        self, aligned: AlignedDocument, extraction: ChunkExtraction, node_of: dict[tuple[str, str], str],
        alias_of: dict[tuple[str, str], str], events_here: dict[tuple[str, str], str], text_of: dict[str, str],
        place: _Places,
    ) -> None:
        chunk_id = extraction.chunk_id
        for event in extraction.events:
            key = name_key(event.name)
            if not key:
                aligned.issues.append(f"{chunk_id}: event {event.name!r} has no letters or digits; skipped")
                continue
            info = self.types.resolve(event.type, event=True)
            if info.off_schema:
                aligned.issues.append(f"{chunk_id}: event {event.name!r} has off-schema type {event.type!r}; "
                                      "kept as a generic event")
            node_id = event_id(info.family, key)
            node = aligned.events.get(node_id)
            if node is None:
                semantic = next((str(event.properties[k]) for k in SEMANTIC_TYPE_KEYS
                                 if isinstance(event.properties.get(k), str) and event.properties[k]), None)
                own = {k: v for k, v in event.properties.items() if k not in SEMANTIC_TYPE_KEYS}
                properties = clean_properties(own, aligned.issues, f"{chunk_id}: {event.name}")
                if extraction.mode != STRUCTURED:
                    properties, broken = check_properties(info.schema_type, properties, where=place(chunk_id))
                    aligned.violations.extend(broken)
                node = aligned.events[node_id] = EventNode(
                    id=node_id, name=event.name.strip(), key=key, family=info.family, labels=info.labels,
                    event_type=semantic or event.type or None, description=event.description.strip(),
                    properties=properties,
                )
            events_here[(chunk_id, key)] = node_id
            aligned.mentions.append(Mention(node_id, chunk_id, _count_occurrences(text_of[chunk_id], [event.name]),
                                            [event.name.strip()], EVENT))
            for role, value in event.roles.items():
                target = self._endpoint(chunk_id, value, node_of, alias_of, {})
                if target is None:
                    continue
                relation = self.types.relation(info.schema_type, role, None)
                rel_type = relationship_type(relation.rel_type) if relation is not None else None
                aligned.facts.append(FactEdge(node_id, target[0], chunk_id, role, rel_type, EVENT, target[1]))

    def _align_relations(
        self, aligned: AlignedDocument, extraction: ChunkExtraction, node_of: dict[tuple[str, str], str],
        alias_of: dict[tuple[str, str], str], events_here: dict[tuple[str, str], str], place: _Places,
        values: _ValueCounts,
    ) -> None:
        """The chunk's relations as typed facts, literal properties or open facts; what ``MultiValue``
        allows is settled for the whole document by :class:`_ValueCounts`."""
        chunk_id = extraction.chunk_id
        for relation in extraction.relations:
            predicate = " ".join(relation.predicate.split())
            if not predicate:
                aligned.issues.append(f"{chunk_id}: relation {relation.subject!r} -> {relation.object!r} has no "
                                      "predicate; skipped")
                continue
            source = self._endpoint(chunk_id, relation.subject, node_of, alias_of, events_here)
            if source is None:
                continue
            subject_type = None
            if source[1] == ENTITY:
                subject_type = self._schema_type_of(aligned.entities[source[0]])
            else:
                subject_type = self.types.schema_type(aligned.events[source[0]].event_type)
            literal = self.types.literal_property(subject_type, predicate) if source[1] == ENTITY else None
            target = self._endpoint(chunk_id, relation.object, node_of, alias_of, events_here)
            if literal is not None and (target is None or target[0] == source[0]):
                assert subject_type is not None  # a literal property is a property of the subject's type
                prop = next(p for p in subject_type.properties if p.name == literal)
                checked = check_value(prop, relation.object.strip(), type_name=subject_type.name, where=place(chunk_id))
                if checked.violation is not None:
                    aligned.violations.append(checked.violation)
                    continue
                properties = aligned.entities[source[0]].properties
                held = properties.get(literal)
                if prop.constraints.multi_value:
                    values.collect(source[0], literal, held, checked.value)
                elif held is None or held == checked.value:
                    properties[literal] = checked.value
                else:
                    aligned.violations.append(second_value(subject_type.name, literal, checked.value, held,
                                                           where=place(chunk_id)))
                continue
            if target is None or target == source:
                continue
            object_type = self._schema_type_of(aligned.entities[target[0]]) if target[1] == ENTITY else \
                self.types.schema_type(aligned.events[target[0]].event_type)
            schema_relation = self.types.relation(subject_type, predicate, object_type)
            rel_type = relationship_type(schema_relation.rel_type) if schema_relation is not None else None
            if self.schema is not None and schema_relation is None and subject_type is not None and \
                    self.types.relation(subject_type, predicate, None) is not None:
                aligned.issues.append(f"{chunk_id}: relation {predicate!r} from {relation.subject!r} to "
                                      f"{relation.object!r} does not fit the schema's target type; kept as an open fact")
            properties = clean_properties(dict(relation.properties), aligned.issues, f"{chunk_id}: {predicate}")
            if schema_relation is not None and extraction.mode != STRUCTURED:
                properties, broken = check_properties(schema_relation, properties, where=place(chunk_id),
                                                      type_name=f"{schema_relation.source}.{schema_relation.name}")
                aligned.violations.extend(broken)
            aligned.facts.append(FactEdge(source[0], target[0], chunk_id, predicate if rel_type is None else rel_type,
                                          rel_type, source[1], target[1], relation.confidence, properties))
            if schema_relation is not None and rel_type is not None and extraction.mode != STRUCTURED and \
                    schema_relation.declared_in == "properties" and not schema_relation.constraints.multi_value:
                values.single_target(source[0], rel_type, schema_relation.source, schema_relation.name)

    def _schema_type_of(self, node: EntityNode) -> ResolvedType | None:
        """The most specific schema type among the node's labels."""
        found = [t for t in (self.types.by_label(label) for label in node.labels) if t is not None]
        return max(found, key=lambda t: (len(t.ancestors), t.name)) if found else None


class _ValueCounts:
    """What ``MultiValue`` allows, settled once per document (after every chunk's relations).

    A class-valued *property* without it (``properties:`` ``referredBy: Customer``; a predicate under
    ``relations:`` relates a subject to any number of objects, as in KAG) keeps one target per
    subject: the one its chunks support with the
    most confidence (summed over chunks; the first named on a tie); each fact naming another target
    is a ``MultiValue`` violation at its chunk and is not written. A literal property with it
    collects every distinct value, in order, written as a JSON list (as structured import writes
    lists); without it the first value stays (checked where it is met).
    """

    def __init__(self) -> None:
        #: (source id, relationship type) -> (owner type, relation name) of single-valued relations
        self.relations: dict[tuple[str, str], tuple[str, str]] = {}
        #: (node id, property) -> the distinct values of a MultiValue literal property
        self.literals: dict[tuple[str, str], list[PropertyValue]] = {}

    def single_target(self, source_id: str, rel_type: str, owner: str, relation: str) -> None:
        self.relations.setdefault((source_id, rel_type), (owner, relation))

    def collect(self, node_id: str, prop: str, held: PropertyValue | None, value: PropertyValue) -> None:
        found = self.literals.setdefault((node_id, prop), [] if held is None else [held])
        if value not in found:
            found.append(value)

    def settle(self, aligned: AlignedDocument, place: _Places) -> None:
        for (node_id, prop), found in self.literals.items():
            aligned.entities[node_id].properties[prop] = found[0] if len(found) == 1 else \
                json.dumps(found, ensure_ascii=False)
        support: dict[tuple[str, str], dict[str, float]] = {}
        for fact in aligned.facts:
            if fact.rel_type is not None and (fact.source_id, fact.rel_type) in self.relations:
                targets = support.setdefault((fact.source_id, fact.rel_type), {})
                targets[fact.target_id] = targets.get(fact.target_id, 0.0) + fact.confidence
        kept = {key: max(targets, key=targets.__getitem__) for key, targets in support.items() if len(targets) > 1}
        if not kept:
            return

        def name_of(node_id: str) -> str:
            node = aligned.entities.get(node_id) or aligned.events.get(node_id)
            return node.name if node is not None else node_id

        facts: list[FactEdge] = []
        for fact in aligned.facts:
            key = (fact.source_id, fact.rel_type or "")
            if key in kept and fact.target_id != kept[key]:
                owner, relation = self.relations[key]
                aligned.violations.append(second_value(owner, relation, name_of(fact.target_id), name_of(kept[key]),
                                                       where=place(fact.chunk_id), what="target"))
            else:
                facts.append(fact)
        aligned.facts = facts
