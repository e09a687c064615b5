"""Structured chain: CSV/JSON records map onto schema types directly, no model involved.

Three table shapes, recognised from the columns:

* **node tables** (``Company.csv``: ``id,name,product``; ``nodes.json``: ``{id,name,label,properties}``)
  - one entity per row, typed by the document's ``record_type`` (or the row's ``label``). The
  ``id`` column is the record id, ``name``/``title`` the name (else the id), ``desc``/``description``
  the description, ``alias``/``aliases`` the aliases. A column that names a relation of the type in
  the schema (``Company.product -> Product``) becomes relations, one per comma-separated value;
  every other column is a property.
* **edge tables** (``Company_fundTrans_Company.csv``: ``srcId,dstId,transDate,transAmt``;
  ``edges.json``: ``{from,fromType,to,toType,label}``) - one relation per row, the other
  columns its edge properties. Types and predicate come from the file stem
  ``<Subject>_<predicate>_<Object>`` or the row's ``fromType``/``label``/``toType``.
* **SPO tables** (``S,P,O[,properties]``) - one relation per row.

Record ids that other tables refer to are turned into names through a :class:`RecordIndex` of
every structured document in the load, so ``fundTrans`` rows meet the companies of
``Company.csv``; the id stays in ``subject_id``/``object_id`` (and ``ExtractedEntity.id``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from kag_neo4j.builder.records import (
    ChunkExtraction,
    ChunkRecord,
    ExtractedEntity,
    ExtractedEvent,
    ExtractedRelation,
    PropertyValue,
    SourceDocument,
)
from kag_neo4j.builder.split import record_text
from kag_neo4j.schema.constraints import ConstraintViolation, Where, check_targets, missing_required

from .base import ExtractionResult
from .schema_view import SchemaView

ID_COLUMNS = ("id", "idx", "_id", "key")
NAME_COLUMNS = ("name", "title")
DESCRIPTION_COLUMNS = ("desc", "description")
ALIAS_COLUMNS = ("alias", "aliases", "synonyms")
TYPE_COLUMNS = ("label", "type")
EDGE_COLUMNS = (
    ("srcid", "dstid"),
    ("src", "dst"),
    ("from", "to"),
    ("source", "target"),
    ("head", "tail"),
    ("subject", "object"),
    ("start", "end"),
)
_STEM_EDGE = re.compile(r"^([^\W\d_]\w*?)_([^\W\d_]\w*?)_([^\W\d_]\w*)$")
_SPLIT = re.compile(r"\s*[,，;；、]\s*")


def _column(columns: Iterable[str], options: Sequence[str]) -> str | None:
    lowered = {column.casefold(): column for column in columns}
    return next((lowered[name] for name in options if name in lowered), None)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _scalar(value: Any) -> PropertyValue | None:
    if value is None or value == "":
        return None
    if isinstance(value, (str, int, float, bool)):
        return value.strip() if isinstance(value, str) else value
    return json.dumps(value, ensure_ascii=False)


def _properties_column(value: Any) -> dict[str, PropertyValue]:
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return {}
    if not isinstance(value, dict):
        return {}
    result = {}
    for key, item in value.items():
        scalar = _scalar(item)
        if scalar is not None:
            result[str(key)] = scalar
    return result


class RecordIndex:
    """Record id -> name for every node table of a load, per type, to resolve references."""

    def __init__(self) -> None:
        self._names: dict[tuple[str, str], str] = {}
        self._any: dict[str, set[str]] = {}

    def add(self, type_name: str, record_id: str, name: str) -> None:
        self._names[(type_name, record_id)] = name
        self._any.setdefault(record_id, set()).add(name)

    def add_document(self, doc: SourceDocument) -> None:
        if not doc.records or _shape(doc) != "nodes":
            return
        columns = _columns(doc.records)
        id_column = _column(columns, ID_COLUMNS)
        name_column = _column(columns, NAME_COLUMNS)
        type_column = _column(columns, TYPE_COLUMNS)
        if id_column is None:
            return
        for row in doc.records:
            record_id = _text(row.get(id_column))
            name = _text(row.get(name_column)) if name_column else ""
            if record_id:
                self.add(_row_type(row, type_column, doc), record_id, name or record_id)

    def knows(self, type_name: str, reference: str) -> bool:
        """Whether ``reference`` is the record id of a ``type_name`` record of the load."""
        return (type_name, reference) in self._names

    def name_for(self, type_name: str | None, reference: str) -> str:
        """The name of record ``reference`` of ``type_name`` (any type when unknown), else itself."""
        if type_name is not None and (type_name, reference) in self._names:
            return self._names[(type_name, reference)]
        names = self._any.get(reference, set())
        return next(iter(names)) if type_name is None and len(names) == 1 else reference


def _columns(records: Sequence[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(key for record in records for key in record))


def _edge_columns(columns: Sequence[str]) -> tuple[str, str] | None:
    lowered = {column.casefold(): column for column in columns}
    for source, target in EDGE_COLUMNS:
        if source in lowered and target in lowered:
            return lowered[source], lowered[target]
    return None


def _shape(doc: SourceDocument) -> str:
    columns = _columns(doc.records)
    lowered = {column.casefold() for column in columns}
    if {"s", "p", "o"} <= lowered:
        return "spo"
    edge = _edge_columns(columns)
    if edge is not None and (
        _STEM_EDGE.match(doc.record_type or "") or _column(columns, TYPE_COLUMNS) or not _column(columns, ID_COLUMNS)
    ):
        return "edges"
    return "nodes"


def _row_type(row: dict[str, Any], type_column: str | None, doc: SourceDocument) -> str:
    if type_column is not None:
        value = _text(row.get(type_column))
        if value and re.fullmatch(r"[^\W\d_]\w*", value):
            return value
    return doc.record_type or "Entity"


def _chunk_ids(doc: SourceDocument, chunks: Sequence[ChunkRecord] | None) -> dict[int, str]:
    if chunks is not None:
        return {chunk.paragraph: chunk.id for chunk in chunks}
    return {number: f"{doc.id}#{number}#0" for number, record in enumerate(doc.records) if record_text(record)}


def _chunked_rows(doc: SourceDocument, chunk_ids: dict[int, str]) -> Iterator[tuple[int, dict[str, Any], str]]:
    """``(record number, record, chunk id)`` for the records that have a chunk (the others have no text)."""
    for number, row in enumerate(doc.records):
        chunk_id = chunk_ids.get(number)
        if chunk_id is not None:
            yield number, row, chunk_id


def _node_rows(
    doc: SourceDocument, schema: SchemaView | None, index: RecordIndex | None, chunk_ids: dict[int, str]
) -> list[ChunkExtraction]:
    columns = _columns(doc.records)
    id_column = _column(columns, ID_COLUMNS)
    name_column = _column(columns, NAME_COLUMNS)
    description_column = _column(columns, DESCRIPTION_COLUMNS)
    alias_column = _column(columns, ALIAS_COLUMNS)
    type_column = _column(columns, TYPE_COLUMNS)
    special = {c for c in (id_column, name_column, description_column, alias_column, type_column) if c}
    results = []
    for number, row, chunk_id in _chunked_rows(doc, chunk_ids):
        issues: list[str] = []
        type_name = _row_type(row, type_column, doc)
        schema_type = schema.resolve_type(type_name) if schema is not None else None
        record_id = _text(row.get(id_column)) if id_column else ""
        name = (_text(row.get(name_column)) if name_column else "") or record_id
        if not name:
            issues.append(f"row {number + 1} of {doc.source} has no id or name column value; skipped")
            results.append(ChunkExtraction(chunk_id=chunk_id, mode="structured", issues=issues))
            continue
        aliases = [a for a in _SPLIT.split(_text(row.get(alias_column))) if a] if alias_column else []
        properties: dict[str, PropertyValue] = {}
        relations: list[ExtractedRelation] = []
        targets: list[ExtractedEntity] = []
        where = Where(file=doc.source, row=number + 1, chunk=chunk_id)  # constraints hook
        violations: list[ConstraintViolation] = []  # constraints hook
        for column in columns:
            if column in special:
                continue
            value = row.get(column)
            if column.casefold() == "properties":
                properties.update(_properties_column(value))
                continue
            relation = schema.resolve_relation(schema_type, column) if schema is not None and schema_type else None
            if relation is not None:
                references = [part for part in _SPLIT.split(_text(value)) if part]
                # constraints hook: a single-valued cell that is a record id is one target (an id may hold
                # a separator: 建筑、农用机械); otherwise a cell naming several targets needs MultiValue
                if not relation.multi_value and index is not None and index.knows(relation.target, _text(value)):
                    references = [_text(value)]
                broken = check_targets(schema_type or type_name, relation.name, relation.multi_value, references,
                                       where=where)
                if broken is not None:
                    violations.append(broken)
                    continue
                for reference in references:
                    target_name = index.name_for(relation.target, reference) if index is not None else reference
                    relations.append(
                        ExtractedRelation(
                            subject=name,
                            predicate=relation.name,
                            object=target_name,
                            subject_type=schema_type,
                            object_type=relation.target,
                            subject_id=record_id or None,
                            object_id=reference,
                        )
                    )
                    targets.append(
                        ExtractedEntity(
                            name=target_name, type=relation.target, id=reference if reference != target_name else None
                        )
                    )
                continue
            scalar = _scalar(value)
            if scalar is None:
                continue
            key = column
            if schema is not None and schema_type:
                canonical = schema.resolve_property(schema_type, column)
                key = canonical or column
            properties[key] = scalar
        if schema is not None and schema_type:  # constraints hook: the row's NotNull columns
            present = {*properties, *(r.predicate for r in relations), "name", *(("id",) if record_id else ()),
                       *(("desc", "description") if description_column and _text(row.get(description_column)) else ())}
            violations.extend(missing_required(schema_type, schema.types[schema_type].required, present, where=where))
        entity = ExtractedEntity(
            name=name,
            type=schema_type or type_name,
            description=_text(row.get(description_column)) if description_column else "",
            aliases=[alias for alias in aliases if alias != name],
            properties=properties,
            id=record_id or None,
        )
        unique_targets = list({(t.type, t.name): t for t in targets if t.name != name}.values())
        if schema is not None and schema_type and schema.types[schema_type].kind == "event":
            roles: dict[str, str] = {}
            for fact in relations:
                if fact.predicate in roles:
                    issues.append(f"event {name!r}: role {fact.predicate} has several values; kept the first")
                    continue
                roles[fact.predicate] = fact.object
            event = ExtractedEvent(
                name=name,
                type=schema_type,
                description=entity.description,
                roles=roles,
                properties={**properties, **({"id": record_id} if record_id else {})},
            )
            results.append(
                ChunkExtraction(
                    chunk_id=chunk_id, entities=unique_targets, events=[event], mode="structured", issues=issues,
                    violations=violations,
                )
            )
            continue
        results.append(
            ChunkExtraction(
                chunk_id=chunk_id,
                entities=[entity, *unique_targets],
                relations=relations,
                mode="structured",
                issues=issues,
                violations=violations,
            )
        )
    return results


def _edge_rows(
    doc: SourceDocument, schema: SchemaView | None, index: RecordIndex | None, chunk_ids: dict[int, str], spo: bool
) -> list[ChunkExtraction]:
    columns = _columns(doc.records)
    if spo:
        lowered = {column.casefold(): column for column in columns}
        source_column, target_column = lowered["s"], lowered["o"]
        predicate_column: str | None = lowered["p"]
    else:
        source_column, target_column = _edge_columns(columns) or ("", "")
        predicate_column = _column(columns, TYPE_COLUMNS)
    from_type_column = _column(columns, ("fromtype", "srctype", "sourcetype", "subjecttype"))
    to_type_column = _column(columns, ("totype", "dsttype", "targettype", "objecttype"))
    id_column = _column(columns, ("id",)) if not spo else None
    stem = _STEM_EDGE.match(doc.record_type or "")
    special = {
        c for c in (source_column, target_column, predicate_column, from_type_column, to_type_column, id_column) if c
    }
    results = []
    for number, row, chunk_id in _chunked_rows(doc, chunk_ids):
        issues: list[str] = []
        source, target = _text(row.get(source_column)), _text(row.get(target_column))
        predicate = _text(row.get(predicate_column)) if predicate_column else ""
        subject_type = _text(row.get(from_type_column)) if from_type_column else ""
        object_type = _text(row.get(to_type_column)) if to_type_column else ""
        if stem:
            subject_type = subject_type or stem.group(1)
            predicate = predicate or stem.group(2)
            object_type = object_type or stem.group(3)
        if not (source and target and predicate):
            issues.append(f"row {number + 1} of {doc.source} lacks a source, target or predicate; skipped")
            results.append(ChunkExtraction(chunk_id=chunk_id, mode="structured", issues=issues))
            continue
        if schema is not None:
            subject_type = schema.resolve_type(subject_type) or subject_type
            object_type = schema.resolve_type(object_type) or object_type
            declared = schema.resolve_relation(subject_type, predicate) if subject_type else None
            predicate = declared.name if declared is not None else predicate
        properties: dict[str, PropertyValue] = {}
        for column in columns:
            if column in special:
                continue
            if column.casefold() == "properties":
                properties.update(_properties_column(row.get(column)))
                continue
            scalar = _scalar(row.get(column))
            if scalar is not None:
                properties[column] = scalar
        confidence = properties.pop("confidence", None)
        if not isinstance(confidence, (int, float)) or isinstance(confidence, bool) or not 0 <= confidence <= 1:
            if confidence is not None:
                properties["confidence"] = confidence
            confidence = 1.0
        subject_name = index.name_for(subject_type or None, source) if index is not None else source
        object_name = index.name_for(object_type or None, target) if index is not None else target
        entities = [
            ExtractedEntity(name=subject_name, type=subject_type or "Entity", id=source),
            ExtractedEntity(name=object_name, type=object_type or "Entity", id=target),
        ]
        relation = ExtractedRelation(
            subject=subject_name,
            predicate=predicate,
            object=object_name,
            subject_type=subject_type or None,
            object_type=object_type or None,
            properties=properties,
            subject_id=source,
            object_id=target,
            confidence=float(confidence),
        )
        results.append(
            ChunkExtraction(
                chunk_id=chunk_id, entities=entities, relations=[relation], mode="structured", issues=issues
            )
        )
    return results


def structured_extract(
    doc: SourceDocument,
    chunks: Sequence[ChunkRecord] | None = None,
    *,
    schema: SchemaView | None = None,
    index: RecordIndex | None = None,
) -> ExtractionResult:
    """One :class:`ChunkExtraction` per record chunk of ``doc`` (``chunks`` from
    :func:`~kag_neo4j.builder.split.split_document`; recomputed when omitted)."""
    if not doc.records:
        return ExtractionResult()
    chunk_ids = _chunk_ids(doc, chunks)
    shape = _shape(doc)
    if shape == "nodes":
        return ExtractionResult(extractions=_node_rows(doc, schema, index, chunk_ids))
    return ExtractionResult(extractions=_edge_rows(doc, schema, index, chunk_ids, spo=shape == "spo"))
