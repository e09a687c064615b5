"""Hold an extraction against the schema: keep what fits, keep the rest as open facts, report.

Nothing is silently relabelled:

* an entity (or event) type the schema lacks becomes ``Entity`` (``Event``) and its proposed type
  is kept in ``properties["semantic_type"]``; an issue names it;
* a type written differently from the schema (``person``, the display name ``人物``) is spelled
  the schema's way - the same type, not another one;
* a predicate that is a relation of the subject's type is spelled the schema's way and its
  object type checked against the range (a mismatch is reported, the fact kept);
* a predicate that is a literal property of the subject's type becomes that property of the
  subject entity (``(Real Madrid, foundedYear, 1902)`` -> ``Real Madrid.foundedYear = 1902``);
* any other predicate stays as written: an open fact (KGfr). One issue line counts them;
* a relation whose subject or object is the name of a schema type (or ``Entity``, ``other``) and
  no entity of the chunk (``(Mark King, isA, Person)``, ``(Person, isA, Mark King)``,
  ``(Lilu, isA, SemanticConcept)``) states a type, not a fact between two entities: it is
  dropped (the entity's type says it), as is a relation of an entity to itself; one issue line
  counts them.

After the check a relation is schema-constrained exactly when its ``predicate`` is a relation
name of its ``subject_type`` in the schema.
"""

from __future__ import annotations

from typing import TypeVar

from kag_neo4j.builder.normalise import name_key
from kag_neo4j.builder.records import (
    ChunkExtraction,
    ExtractedEntity,
    ExtractedEvent,
    ExtractedRelation,
    PropertyValue,
)

from .schema_view import SchemaView

GENERIC_ENTITY = "Entity"
GENERIC_EVENT = "Event"
SEMANTIC_TYPE = "semantic_type"
_GENERIC = frozenset({"entity", "thing", "other", "others", "unknown", "实体", "其他"})
_Typed = TypeVar("_Typed", ExtractedEntity, ExtractedEvent)


def _check_properties(
    owner: str, type_name: str, properties: dict[str, PropertyValue], schema: SchemaView, issues: list[str]
) -> dict[str, PropertyValue]:
    result: dict[str, PropertyValue] = {}
    unknown = []
    for key, value in properties.items():
        if key == SEMANTIC_TYPE:
            result[key] = value
            continue
        canonical = schema.resolve_property(type_name, key)
        if canonical is None:
            relation = schema.resolve_relation(type_name, key)
            canonical = relation.name if relation is not None else None
        if canonical is None:
            unknown.append(key)
            result[key] = value
        else:
            result[canonical] = value
    if unknown:
        issues.append(f"{owner}: properties not in schema type {type_name}: {', '.join(unknown)} (kept)")
    return result


def _off_schema(item: _Typed, proposed: str, generic: str, problem: str, issues: list[str]) -> _Typed:
    """``item`` kept with the generic type ``generic``, the type it proposed as its semantic type."""
    issues.append(f"{problem}; kept as {generic} with {SEMANTIC_TYPE}={proposed!r}")
    properties = dict(item.properties)
    properties.setdefault(SEMANTIC_TYPE, proposed)
    return item.model_copy(update={"type": generic, "properties": properties})


def _check_entity(entity: ExtractedEntity, schema: SchemaView, issues: list[str]) -> ExtractedEntity:
    proposed = entity.type.strip()
    if not proposed or proposed.casefold() in _GENERIC:
        return entity.model_copy(update={"type": GENERIC_ENTITY})
    canonical = schema.resolve_type(proposed, kinds=("entity", "concept", "standard"))
    if canonical is None:
        return _off_schema(entity, proposed, GENERIC_ENTITY, f"entity {entity.name!r}: type {proposed!r} is not in "
                           f"schema {schema.namespace}", issues)
    properties = _check_properties(f"entity {entity.name!r}", canonical, dict(entity.properties), schema, issues)
    return entity.model_copy(update={"type": canonical, "properties": properties})


def _check_event(event: ExtractedEvent, schema: SchemaView, issues: list[str]) -> ExtractedEvent:
    proposed = event.type.strip()
    if not proposed or proposed.casefold() in ("event", "事件"):
        return event.model_copy(update={"type": GENERIC_EVENT})
    canonical = schema.resolve_type(proposed, kinds=("event",))
    if canonical is None:
        return _off_schema(event, proposed, GENERIC_EVENT, f"event {event.name!r}: type {proposed!r} is not an event "
                           f"type of schema {schema.namespace}", issues)
    roles: dict[str, str] = {}
    unknown = []
    for role, value in event.roles.items():
        relation = schema.resolve_relation(canonical, role)
        if relation is not None:
            roles[relation.name] = value
        else:
            unknown.append(role)
            roles[role] = value
    if unknown:
        issues.append(f"event {event.name!r}: roles not in schema type {canonical}: {', '.join(unknown)} (kept)")
    properties = _check_properties(f"event {event.name!r}", canonical, dict(event.properties), schema, issues)
    return event.model_copy(update={"type": canonical, "roles": roles, "properties": properties})


def _names_a_type(name: str, schema: SchemaView) -> bool:
    """Whether ``name`` is a type of the schema or a generic class word (``Entity``, ``其他``)."""
    return schema.resolve_type(name) is not None or name.strip().lower() in _GENERIC


def schema_check(extraction: ChunkExtraction, schema: SchemaView | None) -> ChunkExtraction:
    """``extraction`` held against ``schema`` (see the module docstring); unchanged when None."""
    if schema is None:
        return extraction
    issues = list(extraction.issues)
    entities = [_check_entity(entity, schema, issues) for entity in extraction.entities]
    by_key = {name_key(entity.name): entity for entity in entities}
    events = [_check_event(event, schema, issues) for event in extraction.events]
    relations: list[ExtractedRelation] = []
    open_predicates: list[str] = []
    not_facts = 0
    for relation in extraction.relations:
        subject = by_key.get(name_key(relation.subject))
        obj = by_key.get(name_key(relation.object))
        if (
            (obj is None and _names_a_type(relation.object, schema))
            or (subject is None and _names_a_type(relation.subject, schema))
            or name_key(relation.subject) == name_key(relation.object)
        ):
            not_facts += 1
            continue
        subject_type = schema.resolve_type(relation.subject_type) or (
            subject.type if subject else relation.subject_type
        )
        object_type = schema.resolve_type(relation.object_type) or (obj.type if obj else relation.object_type)
        update: dict[str, object] = {"subject_type": subject_type, "object_type": object_type}
        if subject_type in schema.types:
            declared = schema.resolve_relation(subject_type, relation.predicate)
            if declared is not None:
                update["predicate"] = declared.name
                if object_type in schema.types and not schema.is_a(object_type, declared.target):
                    issues.append(
                        f"relation {relation.subject!r} {declared.name} {relation.object!r}: object type "
                        f"{object_type} is not {declared.target} (the range in the schema); kept"
                    )
                relations.append(relation.model_copy(update=update))
                continue
            literal = schema.resolve_property(subject_type, relation.predicate)
            if literal is not None and subject is not None:
                index = entities.index(subject)
                properties = dict(subject.properties)
                properties.setdefault(literal, relation.object)
                subject = subject.model_copy(update={"properties": properties})
                entities[index] = subject
                by_key[name_key(subject.name)] = subject
                continue
        open_predicates.append(relation.predicate)
        relations.append(relation.model_copy(update=update))
    if not_facts:
        issues.append(f"{not_facts} relation(s) dropped: they name a type, not an entity, or join an entity to itself")
    if open_predicates:
        shown = ", ".join(dict.fromkeys(open_predicates))
        issues.append(f"{len(open_predicates)} relation(s) kept as open facts (predicates not in schema: {shown})")
    return extraction.model_copy(
        update={"entities": entities, "events": events, "relations": relations, "issues": issues}
    )
