"""Schema fill: the relations a schema declares for the entity a passage is about, asked as a form.

Full extraction asks a model for free rows; a small one names a fact in its own words (``治疗``
where the schema says ``applicableMedicine``) and leaves its object untyped, so the fact is an open
one between a ``Disease`` and a generic entity. KAG's schema-constrained extraction instead asks,
for a record of a schema type, the values of that type's relations. :class:`SchemaFill` does that
for the entity a chunk is about — the extracted entity whose name is the chunk's title, when the
extraction gave it a schema type — in one more call per chunk:

* the form holds the type's relations whose range is an entity type (a concept range is left to
  the concept graph; a literal property is already asked for by the main call);
* each value must be written in the chunk (spaces and case aside), so a name the model made up is
  dropped and counted in the chunk's issues;
* each value becomes a relation under the schema's relation name, its object typed by the
  relation's range (an untyped entity of that name in the chunk takes the type; one the main
  call typed otherwise keeps its type, and alignment keeps that fact open).
* an open predicate of the subject in the main call's rows whose objects share a name with one
  filled relation's and with no other's is read as that relation for this chunk: a 1.5B model
  fills ``适用药品`` with the first three treatments a passage names and writes ``治疗`` rows for
  all six, so the six become ``applicableMedicine`` (``治疗`` sharing objects with two relations,
  or with none, stays an open fact only).

A chunk with no such entity costs nothing. A failed fill call is reported in the chunk's issues
and the main extraction stands.
"""

from __future__ import annotations

from dataclasses import dataclass

from kag_neo4j.builder.normalise import name_key
from kag_neo4j.builder.records import (
    ChunkExtraction,
    ChunkRecord,
    ExtractedEntity,
    ExtractedRelation,
)
from kag_neo4j.builder.type_resolution import GENERIC_TYPES
from kag_neo4j.models.base import ChatMessage
from kag_neo4j.prompts.extract import Language
from kag_neo4j.prompts.fill import (
    FillField,
    FillResponse,
    build_fill_messages,
    fill_form,
)

from .schema_view import SchemaView

__all__ = ["FillRequest", "SchemaFill"]

#: tokens a filled form may take (a dozen short names per relation at most)
FILL_MAX_TOKENS = 384


@dataclass(frozen=True)
class FillRequest:
    """One form to ask: the entity, its type, the messages and the response model."""

    entity: ExtractedEntity
    type_name: str
    messages: list[ChatMessage]
    response_model: type[FillResponse]


def _compact(text: str) -> str:
    return "".join(text.split()).casefold()


class SchemaFill:
    """Builds the form for a chunk's subject and folds the reply into its extraction."""

    def __init__(self, schema: SchemaView) -> None:
        self.schema = schema
        self._forms: dict[tuple[str, Language], tuple[list[FillField], type[FillResponse]] | None] = {}

    def form(self, type_name: str, language: Language) -> tuple[list[FillField], type[FillResponse]] | None:
        """The fields and response model of ``type_name``'s form (None: nothing to fill)."""
        cache_key = (type_name, language)
        if cache_key not in self._forms:
            info = self.schema.types.get(type_name)
            fields = []
            for relation in info.relations.values() if info is not None else []:
                target = self.schema.types.get(relation.target)
                if target is None or target.kind != "entity":
                    continue
                key = relation.display_name if language == "zh" and relation.display_name else relation.name
                fields.append(FillField(key=key, relation=relation.name, target=relation.target,
                                        target_display=target.display_name if language == "zh" else None))
            if len({field.key for field in fields}) != len(fields):  # two relations with one display name
                fields = [FillField(key=f.relation, relation=f.relation, target=f.target, target_display=f.target_display)
                          for f in fields]
            self._forms[cache_key] = (fields, fill_form(f"Fill{type_name}", fields)) if fields else None
        return self._forms[cache_key]

    def request(self, chunk: ChunkRecord, extraction: ChunkExtraction, language: Language) -> FillRequest | None:
        """The form to ask for ``chunk`` (None when its title names no entity of a type with one)."""
        title = name_key(chunk.title) if chunk.title.strip() else ""
        if not title:
            return None
        subject = next((e for e in extraction.entities if name_key(e.name) == title and e.type in self.schema.types), None)
        form = self.form(subject.type, language) if subject is not None else None
        if subject is None or form is None:
            return None
        fields, model = form
        info = self.schema.types[subject.type]
        shown = info.display_name if language == "zh" and info.display_name else subject.type
        messages = build_fill_messages(chunk.text, entity=subject.name, entity_type=shown, fields=fields,
                                       title=chunk.title, language=language)
        return FillRequest(entity=subject, type_name=subject.type, messages=messages, response_model=model)

    def apply(self, chunk: ChunkRecord, extraction: ChunkExtraction, request: FillRequest,
              response: FillResponse) -> ChunkExtraction:
        """``extraction`` with the filled relations added, and those its open predicates mean
        (see the module docs)."""
        text = _compact(chunk.text)
        subject = request.entity
        ranges = {name: relation.target for name, relation in self.schema.types[request.type_name].relations.items()}
        added = _Additions(self.schema, extraction, subject, request.type_name)
        dropped: list[str] = []
        filled: dict[str, set[str]] = {}
        for relation_name, names in response.values().items():
            for name in dict.fromkeys(names):
                key = name_key(name)
                if not key or key == name_key(subject.name) or _compact(name) not in text:
                    dropped.append(name)
                    continue
                filled.setdefault(relation_name, set()).add(key)
                added.relation(relation_name, ranges[relation_name], name)
        issues = list(extraction.issues)
        for predicate, (relation_name, shared) in _meanings(extraction, subject, filled, ranges).items():
            for relation in extraction.relations:
                if name_key(relation.subject) == name_key(subject.name) and relation.predicate == predicate:
                    added.relation(relation_name, ranges[relation_name], relation.object)
            issues.append(f"schema fill: {predicate!r} of {subject.name!r} read as {relation_name} "
                          f"({shared} object(s) shared with the form)")
        issues.append(f"schema fill for {subject.name!r} ({request.type_name}): {added.count} relation(s)")
        if dropped:
            shown = ", ".join(repr(name) for name in dropped[:5]) + (" …" if len(dropped) > 5 else "")
            issues.append(f"schema fill: {len(dropped)} name(s) not written in the chunk dropped ({shown})")
        return extraction.model_copy(update={"entities": added.entities, "relations": added.typed_relations(),
                                             "issues": issues})


def _meanings(extraction: ChunkExtraction, subject: ExtractedEntity, filled: dict[str, set[str]],
              ranges: dict[str, str]) -> dict[str, tuple[str, int]]:
    """open predicate of ``subject`` -> (the filled relation it means, objects shared): a predicate
    the schema does not declare whose objects share a name with one filled relation's and with no
    other's (``治疗`` sharing 抗甲状腺药物 with ``applicableMedicine`` only)."""
    objects: dict[str, set[str]] = {}
    for relation in extraction.relations:
        if name_key(relation.subject) == name_key(subject.name) and relation.predicate not in ranges:
            objects.setdefault(relation.predicate, set()).add(name_key(relation.object))
    meanings = {}
    for predicate, keys in objects.items():
        shared = {name: len(keys & names) for name, names in filled.items() if keys & names}
        if len(shared) == 1:
            ((relation_name, count),) = shared.items()
            meanings[predicate] = (relation_name, count)
    return meanings


class _Additions:
    """The extraction's entities and relations as the form adds to them."""

    def __init__(self, schema: SchemaView, extraction: ChunkExtraction, subject: ExtractedEntity, type_name: str) -> None:
        self.schema = schema
        self.subject = subject
        self.type_name = type_name
        self.entities = list(extraction.entities)
        self.relations = list(extraction.relations)
        self.position = {name_key(entity.name): i for i, entity in enumerate(self.entities)}
        self.held = {(name_key(r.subject), r.predicate, name_key(r.object)) for r in self.relations}
        #: name key -> the type an untyped entity took from the form
        self.retyped: dict[str, str] = {}
        self.count = 0

    def relation(self, relation_name: str, target: str, name: str) -> None:
        """``subject -relation_name-> name``, the object typed ``target`` unless it has a schema type."""
        key = name_key(name)
        if key in self.position:
            entity = self.entities[self.position[key]]
            if entity.type.strip().casefold() in GENERIC_TYPES or entity.type not in self.schema.types:
                self.entities[self.position[key]] = entity.model_copy(update={"type": target})
                self.retyped[key] = target
        else:
            self.position[key] = len(self.entities)
            self.entities.append(ExtractedEntity(name=name, type=target))
        fact = (name_key(self.subject.name), relation_name, key)
        if fact in self.held:
            return
        self.held.add(fact)
        self.relations.append(ExtractedRelation(subject=self.subject.name, predicate=relation_name, object=name,
                                                subject_type=self.type_name,
                                                object_type=self.entities[self.position[key]].type))
        self.count += 1

    def typed_relations(self) -> list[ExtractedRelation]:
        """The relations, with the types their untyped endpoints took from the form."""
        out = []
        for relation in self.relations:
            update = {}
            for end, key in (("subject_type", name_key(relation.subject)), ("object_type", name_key(relation.object))):
                held = getattr(relation, end)
                if key in self.retyped and (held is None or held not in self.schema.types):
                    update[end] = self.retyped[key]
            out.append(relation.model_copy(update=update) if update else relation)
        return out
