"""Alignment: extracted names become resolved entities, schema-typed facts and concept links.

Two steps.

1. :meth:`Aligner.align_document` works on one document. Entity records of all its chunks are
   grouped by *name key* (:func:`~kag_neo4j.builder.names.name_key`) and *type family*: a
   schema type's family is its root ancestor (``City -> GeographicLocation``), so sub- and
   super-types merge while ``Person`` and ``Location`` never do; an untyped or generic
   record joins the one specific family its name has in the document, if there is exactly one.
   Aliases given by the extractor join their groups too. Each group becomes one
   :class:`~kag_neo4j.builder.aligned.EntityNode` whose id is ``<family>:<name key>``:
   deterministic, so the same entity in another document gets the same id and the writer's
   ``MERGE`` joins them. Relations are matched against the schema (typed relationship, or a
   literal property of the subject's type); the rest stay open facts. Taxonomy concepts and
   semantic types become ``BELONGS_TO`` links.
2. :class:`Resolver` works on a batch of aligned documents, in order, against the graph: ids
   that already exist are merges; a new entity whose name embedding is within
   ``similarity`` (cosine) of an entity of the same family - earlier in the batch or in
   the graph's ``entity_embedding`` index - and whose name passes a lexical guard
   (:func:`~kag_neo4j.builder.names.similar_names`) is merged into it, its name kept as an alias.

Documents are resolved one after the other against what precedes them, so the result does not
depend on how documents are cut into batches (a resumed load ends where an uninterrupted one does).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from kag_neo4j.builder.aligned import (
    ENTITY,
    EVENT,
    AlignedDocument,
    ConceptLink,
    ConceptNode,
    EntityNode,
    EventNode,
    FactEdge,
    Mention,
)
from kag_neo4j.builder.concepts import Taxonomy, concept_id
from kag_neo4j.builder.names import display_rank, name_key, similar_names
from kag_neo4j.builder.records import (
    ChunkExtraction,
    ChunkRecord,
    PropertyValue,
    SourceDocument,
)
from kag_neo4j.errors import InvalidIdentifierError
from kag_neo4j.schema.models import (
    ResolvedRelation,
    ResolvedSchema,
    ResolvedType,
    TypeKind,
)
from kag_neo4j.store.identifiers import check_identifier, is_reserved_relationship_type
from kag_neo4j.store.lucene import lucene_phrase

#: type names that say "no particular type"; such records take the type their name has elsewhere
GENERIC_TYPES = frozenset({"", "entity", "entities", "thing", "other", "others", "unknown", "misc", "none", "concept",
                           "keyword", "object", "item", "term", "名词", "实体", "其他", "概念"})
#: NER value types; without a schema they form their own family, so "1990" the date and a
#: thing called "1990" do not merge, and dates never merge with names by embedding
VALUE_TYPES = frozenset({"date", "time", "year", "cardinal", "ordinal", "quantity", "money", "percent", "number",
                         "duration", "日期", "时间", "数字"})
GENERIC_FAMILY = "entity"
VALUE_FAMILY = "value"
EVENT_FAMILY = "event"
#: node properties the writer owns; an extracted property with one of these names is dropped
RESERVED_PROPERTIES = frozenset({"id", "name", "name_key", "family", "aliases", "alias_text", "description",
                                 "semantic_type", "embedding", "created_at", "updated_at", "chunk_ids", "doc_ids",
                                 "predicate", "confidence", "count", "names", "status", "event_type"})
#: extracted entity properties that name a semantic type (KAG's ``semanticType``)
SEMANTIC_TYPE_KEYS = ("semanticType", "semantic_type", "concept", "category")


@dataclass(frozen=True, slots=True)
class TypeInfo:
    """What a raw extracted type resolves to."""

    family: str
    labels: tuple[str, ...] = ()
    raw: str | None = None
    schema_type: ResolvedType | None = None
    generic: bool = False
    off_schema: bool = False


class TypeResolver:
    """Maps raw extracted types to schema types, labels and families (see module docs)."""

    def __init__(self, schema: ResolvedSchema | None = None) -> None:
        self.schema = schema
        self._by_name: dict[str, ResolvedType] = {}
        self._cache: dict[tuple[str | None, bool], TypeInfo] = {}
        self._by_label: dict[str, ResolvedType] = {}
        if schema is not None:
            self._by_label = {t.label: t for t in schema.types}
            for spg_type in schema.types:
                if spg_type.kind in (TypeKind.INDEX, TypeKind.STANDARD):
                    continue
                self._by_name.setdefault(spg_type.name.casefold(), spg_type)
            for spg_type in schema.types:  # display names (e.g. Chinese) after the real names
                if spg_type.display_name and spg_type.kind not in (TypeKind.INDEX, TypeKind.STANDARD):
                    self._by_name.setdefault(spg_type.display_name.strip().casefold(), spg_type)

    def schema_type(self, raw: str | None) -> ResolvedType | None:
        return self._by_name.get((raw or "").strip().casefold())

    def by_label(self, label: str) -> ResolvedType | None:
        return self._by_label.get(label)

    def resolve(self, raw: str | None, *, event: bool = False) -> TypeInfo:
        cached = self._cache.get((raw, event))
        if cached is not None:
            return cached
        info = self._resolve(raw, event=event)
        self._cache[(raw, event)] = info
        return info

    def _resolve(self, raw: str | None, *, event: bool) -> TypeInfo:
        text = (raw or "").strip()
        spg_type = self.schema_type(text)
        if spg_type is not None:
            root = spg_type.ancestors[-1] if spg_type.ancestors else spg_type.name
            generic = text.casefold() in GENERIC_TYPES
            family = (EVENT_FAMILY if event else GENERIC_FAMILY) if generic else root
            return TypeInfo(family=family, labels=spg_type.labels, raw=text, schema_type=spg_type, generic=generic)
        folded = text.casefold()
        if event:
            return TypeInfo(family=EVENT_FAMILY, raw=text or None, generic=True,
                            off_schema=self.schema is not None and bool(text) and folded != "event")
        if folded in VALUE_TYPES:
            return TypeInfo(family=VALUE_FAMILY, raw=text, off_schema=self.schema is not None)
        return TypeInfo(family=GENERIC_FAMILY, raw=text or None, generic=True,
                        off_schema=self.schema is not None and folded not in GENERIC_TYPES)

    def relation(self, subject: ResolvedType | None, predicate: str, target: ResolvedType | None) -> ResolvedRelation | None:
        """The schema relation ``subject -[predicate]-> target`` names, if the types fit."""
        if subject is None:
            return None
        wanted = predicate.strip().casefold()
        for relation in subject.relations:
            names = {relation.name.casefold()}
            if relation.display_name:
                names.add(relation.display_name.strip().casefold())
            if wanted not in names:
                continue
            if target is None or relation.target == target.name or relation.target in target.ancestors:
                return relation
        return None

    def literal_property(self, subject: ResolvedType | None, predicate: str) -> str | None:
        """The literal property of ``subject``'s type that ``predicate`` names, if any."""
        if subject is None:
            return None
        wanted = predicate.strip().casefold()
        for prop in subject.properties:
            if wanted in {prop.name.casefold(), (prop.display_name or "").strip().casefold()}:
                return prop.name
        return None


def relationship_type(name: str) -> str | None:
    """``name`` as a relationship type the writer may use, or ``None`` (then it is an open fact)."""
    try:
        check_identifier(name, what="relationship type")
    except InvalidIdentifierError:
        return None
    return None if is_reserved_relationship_type(name) else name


def entity_id(family: str, key: str) -> str:
    return f"{family}:{key}"


def event_id(family: str, key: str) -> str:
    return f"event:{family}:{key}"


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


# --------------------------------------------------------------------------- per document


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
    def _entity_records(self, extraction: ChunkExtraction, issues: list[str]) -> list[_Record]:
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
        aligned = AlignedDocument(document=document, chunks=list(chunks))
        issues = aligned.issues
        text_of = {chunk.id: chunk.text for chunk in chunks}
        by_chunk: dict[str, list[_Record]] = {}
        for extraction in extractions:
            if extraction.chunk_id not in text_of:
                issues.append(f"extraction for unknown chunk {extraction.chunk_id!r} in document {document.id!r}; skipped")
                continue
            issues.extend(extraction.issues)
            by_chunk.setdefault(extraction.chunk_id, []).extend(self._entity_records(extraction, issues))
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
                    ends = [(relation.subject, relation.subject_type), (relation.object, relation.object_type)]
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
        for extraction in extractions:
            if extraction.chunk_id in by_chunk:
                self._align_events(aligned, extraction, node_of, alias_of, events_here, text_of)
                self._align_relations(aligned, extraction, node_of, alias_of, events_here)
        aligned.entity_records = len({(r.chunk_id, node_of[(r.chunk_id, r.key)]) for r in all_records})
        return aligned

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
                node = aligned.events[node_id] = EventNode(
                    id=node_id, name=event.name.strip(), key=key, family=info.family, labels=info.labels,
                    event_type=semantic or event.type or None, description=event.description.strip(),
                    properties=clean_properties(own, aligned.issues, f"{chunk_id}: {event.name}"),
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
        alias_of: dict[tuple[str, str], str], events_here: dict[tuple[str, str], str],
    ) -> None:
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
                aligned.entities[source[0]].properties.setdefault(literal, relation.object.strip())
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
            aligned.facts.append(FactEdge(source[0], target[0], chunk_id, predicate if rel_type is None else rel_type,
                                          rel_type, source[1], target[1], relation.confidence, properties))

    def _schema_type_of(self, node: EntityNode) -> ResolvedType | None:
        """The most specific schema type among the node's labels."""
        found = [t for t in (self.types.by_label(label) for label in node.labels) if t is not None]
        return max(found, key=lambda t: (len(t.ancestors), t.name)) if found else None


# --------------------------------------------------------------------------- across documents


class EntityLookup(Protocol):
    """What the resolver asks the graph (implemented over Neo4j by :class:`GraphLookup`)."""

    def existing(self, ids: Sequence[str]) -> set[str]: ...

    def by_alias(self, rows: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]: ...

    def similar(self, rows: Sequence[dict[str, Any]], *, min_cosine: float, k: int) -> dict[str, list[dict[str, Any]]]: ...


class NoLookup:
    """An empty graph (tests, dry runs)."""

    def existing(self, ids: Sequence[str]) -> set[str]:
        return set()

    def by_alias(self, rows: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        return {}

    def similar(self, rows: Sequence[dict[str, Any]], *, min_cosine: float, k: int) -> dict[str, list[dict[str, Any]]]:
        return {}


#: type names of people: only their bare surnames may join full names ("Puzo" -> "Mario Puzo")
PERSON_TYPES = frozenset({"person", "people", "human", "per", "character", "人物", "人"})


def _person_like(semantic_type: str | None) -> bool:
    return semantic_type is not None and semantic_type.casefold() in PERSON_TYPES


def _same_kind(a: str | None, b: str | None) -> bool:
    """Semantic types (NER labels, off-schema types) do not contradict each other."""
    return a is None or b is None or a.casefold() == b.casefold()


class _FamilyVectors:
    """Unit vectors of the entities made earlier in a batch, per type family (numpy, growing)."""

    def __init__(self) -> None:
        self._ids: dict[str, list[str]] = {}
        self._rows: dict[str, np.ndarray] = {}

    def add(self, family: str, node_id: str, vector: Sequence[float]) -> None:
        unit = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(unit))
        if norm == 0.0:
            return
        ids = self._ids.setdefault(family, [])
        matrix = self._rows.get(family)
        if matrix is None:
            matrix = self._rows[family] = np.zeros((64, unit.shape[0]), dtype=np.float32)
        elif len(ids) == matrix.shape[0]:
            matrix = self._rows[family] = np.vstack([matrix, np.zeros_like(matrix)])
        matrix[len(ids)] = unit / norm
        ids.append(node_id)

    def above(self, family: str, vector: Sequence[float], threshold: float) -> list[tuple[float, str]]:
        """(cosine, id) of the family's vectors with cosine >= threshold, best first."""
        ids = self._ids.get(family)
        if not ids:
            return []
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if norm == 0.0:
            return []
        scores = self._rows[family][: len(ids)] @ (query / norm)
        hits = np.nonzero(scores >= threshold - 1e-6)[0]
        return sorted(((float(scores[i]), ids[i]) for i in hits), key=lambda hit: (-hit[0], hit[1]))


@dataclass
class ResolutionStats:
    #: extracted entity records (one per chunk and entity)
    entity_records: int = 0
    new_entities: int = 0
    #: records folded into an entity made by another record (same name, alias or embedding)
    merged: int = 0
    #: new names merged into an entity with another name through an alias
    alias_merges: int = 0
    #: new names merged into an entity with another name by embedding similarity
    similarity_merges: int = 0

    def add(self, other: ResolutionStats) -> None:
        for name in ("entity_records", "new_entities", "merged", "alias_merges", "similarity_merges"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def _alias_keys(doc: AlignedDocument) -> dict[str, set[str]]:
    """entity id -> the name keys of its other surface forms and aliases in ``doc``."""
    keys: dict[str, set[str]] = {}
    for mention in doc.mentions:
        if mention.kind != ENTITY:
            continue
        own = doc.entities[mention.node_id].key
        bucket = keys.setdefault(mention.node_id, set())
        bucket.update(k for k in (name_key(n) for n in mention.names) if k and k != own)
    return keys


class Resolver:
    """Resolves a batch of aligned documents against each other and the graph (module docs).

    For a new entity (its id is neither in the graph nor made earlier in the batch), in order:
    an alias of it is the key of a known entity of the same family; it is an alias of a known
    entity; its name vector is within ``similarity`` of a known entity's (and the names pass
    :func:`~kag_neo4j.builder.names.similar_names`). ``embed`` turns names into vectors; without
    it, or with ``similarity=None``, there are no embedding merges.
    """

    def __init__(
        self,
        lookup: EntityLookup | None = None,
        embed: Callable[[Sequence[str]], list[list[float]]] | None = None,
        *,
        similarity: float | None = 0.92,
        neighbours: int = 5,
    ) -> None:
        if similarity is not None and not 0.0 < similarity <= 1.0:
            raise ValueError(f"similarity must be in (0, 1], got {similarity}")
        self.lookup = lookup or NoLookup()
        self.embed = embed
        self.similarity = similarity
        self.neighbours = neighbours
        self.stats = ResolutionStats()

    def resolve(self, documents: Sequence[AlignedDocument]) -> ResolutionStats:
        stats = ResolutionStats()
        first_node: dict[str, EntityNode] = {}
        aliases: dict[str, set[str]] = {}
        per_doc_aliases = []
        for doc in documents:
            doc_aliases = _alias_keys(doc)
            per_doc_aliases.append(doc_aliases)
            for node_id, node in doc.entities.items():
                first_node.setdefault(node_id, node)
                aliases.setdefault(node_id, set()).update(doc_aliases.get(node_id, ()))
        all_ids = sorted(first_node)
        alias_ids = {entity_id(first_node[i].family, k) for i in all_ids for k in aliases.get(i, ())}
        in_graph = self.lookup.existing(sorted(set(all_ids) | alias_ids)) if all_ids else set()
        new_ids = [i for i in all_ids if i not in in_graph]
        alias_rows = [{"id": i, "key": first_node[i].key, "family": first_node[i].family} for i in new_ids
                      if first_node[i].family != VALUE_FAMILY]
        graph_aliases = self.lookup.by_alias(alias_rows) if alias_rows else {}
        vectors: dict[str, list[float]] = {}
        graph_similar: dict[str, list[dict[str, Any]]] = {}
        if self.embed is not None and self.similarity is not None and new_ids:
            vectors = dict(zip(new_ids, self.embed([first_node[i].name for i in new_ids])))
            rows = [{"id": i, "vector": vectors[i], "family": first_node[i].family} for i in new_ids
                    if first_node[i].family != VALUE_FAMILY]
            graph_similar = self.lookup.similar(rows, min_cosine=self.similarity, k=self.neighbours) if rows else {}
        known: dict[str, EntityNode] = {}  # made earlier in this batch
        # "<family>:<alias key>" -> ids of entities that earlier documents of this batch gave that alias
        # (the graph's alias_text index does not show them yet)
        known_alias: dict[str, set[str]] = {}
        by_family = _FamilyVectors()
        for doc, doc_aliases in zip(documents, per_doc_aliases):
            stats.entity_records += doc.entity_records
            doc_new = 0
            for node_id in sorted(doc.entities):
                found = doc.entities.get(node_id)
                if found is None:  # merged away earlier in this loop
                    continue
                node = found
                if node_id in in_graph:
                    node.existing = True
                    continue
                if node_id in known:
                    continue
                own_aliases = sorted(doc_aliases.get(node_id, ()))
                target = self._by_alias(node, own_aliases, in_graph, known, known_alias, graph_aliases.get(node_id, []))
                if target is not None:
                    stats.alias_merges += 1
                else:
                    target = self._similar(node, vectors.get(node_id), known, by_family, graph_similar.get(node_id, []))
                    if target is not None:
                        stats.similarity_merges += 1
                if target is not None:
                    doc.remap_entity(node_id, target)
                    continue
                node.embedding = vectors.get(node_id)
                known[node_id] = node
                if node.embedding is not None:
                    by_family.add(node.family, node_id, node.embedding)
                doc_new += 1
            for node_id, keys in _alias_keys(doc).items():  # what the writer will store as aliases
                family = doc.entities[node_id].family
                for key in keys:
                    known_alias.setdefault(entity_id(family, key), set()).add(node_id)
            stats.new_entities += doc_new
            doc.merges = max(0, doc.entity_records - doc_new)
            stats.merged += doc.merges
        self.stats.add(stats)
        return stats

    @staticmethod
    def _merged_into(node: EntityNode, target_id: str, target: EntityNode | None, key: str) -> EntityNode:
        """The node ``node`` becomes when it merges into ``target_id``."""
        if target is None:  # an entity in the graph
            return EntityNode(id=target_id, name=node.name, key=key, family=node.family, labels=node.labels,
                              semantic_type=node.semantic_type, description=node.description,
                              properties=dict(node.properties), existing=True)
        return EntityNode(id=target.id, name=target.name, key=target.key, family=target.family,
                          labels=tuple(sorted(set(target.labels) | set(node.labels))),
                          semantic_type=target.semantic_type or node.semantic_type,
                          description=target.description or node.description,
                          properties={**node.properties, **target.properties}, embedding=target.embedding)

    def _by_alias(
        self, node: EntityNode, own_aliases: list[str], in_graph: set[str], known: dict[str, EntityNode],
        known_alias: dict[str, set[str]], graph: list[dict[str, Any]],
    ) -> EntityNode | None:
        if node.family == VALUE_FAMILY:
            return None
        for key in own_aliases:  # one of its aliases is a known entity's name
            candidate = entity_id(node.family, key)
            if candidate in known:
                return self._merged_into(node, candidate, known[candidate], key)
            if candidate in in_graph:
                return self._merged_into(node, candidate, None, key)
        # it is an alias of an entity: one given that alias earlier in this batch, or one in the graph
        owners = {i for i in known_alias.get(node.id, ()) if i != node.id}
        keys: dict[str, str] = {}
        for match in graph:
            if match.get("family") == node.family and any(name_key(a) == node.key for a in match.get("aliases") or []):
                owners.add(match["match"])
                keys[match["match"]] = match["key"]
        if not owners:
            return None
        owner = min(owners)
        if owner in known:
            return self._merged_into(node, owner, known[owner], known[owner].key)
        return self._merged_into(node, owner, None, keys.get(owner) or owner.split(":", 1)[-1])

    def _similar(
        self, node: EntityNode, vector: list[float] | None, known: dict[str, EntityNode],
        by_family: _FamilyVectors, graph: list[dict[str, Any]],
    ) -> EntityNode | None:
        """The one known entity ``node`` is an embedding-near variant of; ``None`` when there is
        none, or more than one (an ambiguous name such as a bare surname stays apart)."""
        if vector is None or self.similarity is None or node.family == VALUE_FAMILY:
            return None
        candidates: dict[str, tuple[EntityNode | None, str]] = {}
        for _score, other_id in by_family.above(node.family, vector, self.similarity):
            other = known[other_id]
            if self._variant(node, other.key, other.semantic_type):
                candidates[other_id] = (other, other.key)
        for match in graph:
            key = str(match.get("key") or "")
            if match.get("family") == node.family and float(match["cosine"]) >= self.similarity \
                    and self._variant(node, key, match.get("semantic_type")):
                candidates.setdefault(str(match["match"]), (None, key))
        if len(candidates) != 1:
            return None
        [(target_id, (target, key))] = candidates.items()
        return self._merged_into(node, target_id, target, key)

    def _variant(self, node: EntityNode, key: str, semantic_type: str | None) -> bool:
        if not _same_kind(node.semantic_type, semantic_type):
            return False
        # a bare surname may join a full name only where names are known to be people's
        tails = _person_like(node.semantic_type or semantic_type) or node.family.casefold() in PERSON_TYPES
        return similar_names(node.key, key, tails=tails)


class GraphLookup:
    """:class:`EntityLookup` over Neo4j: ids, the ``entity_fulltext`` index (aliases) and the
    ``entity_embedding`` vector index."""

    def __init__(self, db: Any) -> None:
        self.db = db

    def existing(self, ids: Sequence[str]) -> set[str]:
        from kag_neo4j.store.cypher import query

        found: set[str] = set()
        for start in range(0, len(ids), 5000):
            rows = self.db.read(query("builder/existing_entities"), ids=list(ids[start : start + 5000]))
            found.update(row["id"] for row in rows)
        return found

    def by_alias(self, rows: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        from kag_neo4j.store.cypher import query

        matches: dict[str, list[dict[str, Any]]] = {}
        for start in range(0, len(rows), 1000):
            part = [{"id": r["id"], "family": r["family"], "query": lucene_phrase("alias_text", r["key"])}
                    for r in rows[start : start + 1000]]
            for row in self.db.read(query("builder/alias_entities"), rows=part):
                matches.setdefault(row["id"], []).append(row)
        return matches

    def similar(self, rows: Sequence[dict[str, Any]], *, min_cosine: float, k: int) -> dict[str, list[dict[str, Any]]]:
        from kag_neo4j.store.cypher import query

        matches: dict[str, list[dict[str, Any]]] = {}
        for start in range(0, len(rows), 500):
            part = list(rows[start : start + 500])
            for row in self.db.read(query("builder/similar_entities"), rows=part, k=k,
                                    min_score=(1.0 + min_cosine) / 2.0):
                matches.setdefault(row["id"], []).append(row)
        return matches
