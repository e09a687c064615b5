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
* **SPO tables** (``S,P,O[,properties]``) - one relation per row, typed from the schema where it
  says (:func:`_spo_ends`); a row it cannot fully type is an open fact, reported (``OpenFactRow``).

Record ids that other tables refer to are turned into names through a :class:`RecordIndex` of
every structured document in the load, so ``fundTrans`` rows meet the companies of
``Company.csv``; the id stays in ``subject_id``/``object_id`` (and ``ExtractedEntity.id``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal


from kag_neo4j.builder.names import name_key
from kag_neo4j.builder.records import (
    ChunkExtraction,
    ChunkRecord,
    DanglingReference,
    ExtractedEntity,
    ExtractedEvent,
    ExtractedRelation,
    OpenFactRow,
    PropertyValue,
    SourceDocument,
)
from kag_neo4j.builder.normalise import normalise_value
from kag_neo4j.builder.split import record_text
from kag_neo4j.schema.constraints import ConstraintViolation, Where, check_targets, check_value, missing_required
from kag_neo4j.schema.models import ResolvedProperty

from .base import ExtractionResult
from .schema_view import RelationInfo, SchemaView

#: what a reference to a record the load lacks becomes (see :func:`structured_extract`)
Dangling = Literal["skip", "create"]
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
#: what separates the values of a multi-valued reference column (``、`` does not: it occurs
#: inside ids such as ``建筑、农用机械与重型卡车``)
_LIST = re.compile(r"\s*[,，;；]\s*")


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


def _properties_column(value: Any) -> dict[str, Any]:
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return {}
    if not isinstance(value, dict):
        return {}
    return {str(key): item for key, item in value.items()}


class _Table:
    """The records of one type in a load: id -> name, and every other column's values -> ids."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        #: column -> value -> record id (None when several records share the value)
        self.keys: dict[str, dict[str, str | None]] = {}

    def add(self, record_id: str, name: str, row: dict[str, Any], skip: set[str]) -> None:
        self.names.setdefault(record_id, name)
        for column, value in row.items():
            if column in skip:
                continue
            text = _text(value)
            if not text or len(text) > 300:
                continue
            values = self.keys.setdefault(column, {})
            values[text] = record_id if values.get(text, record_id) == record_id else None


class RecordIndex:
    """The node tables of a load, per type: resolves what a reference (a record id, or the value
    of a key column such as ``certNum`` or ``name``) denotes."""

    def __init__(self) -> None:
        self._tables: dict[str, _Table] = {}
        self._any: dict[str, set[str]] = {}
        #: name key of a record's name or id -> (type, record id, name) of the records it denotes
        self._keys: dict[str, set[tuple[str, str, str]]] = {}

    def add(self, type_name: str, record_id: str, name: str, row: dict[str, Any] | None = None,
            skip: set[str] | None = None, aliases: Sequence[str] = ()) -> None:
        self._tables.setdefault(type_name, _Table()).add(record_id, name, row or {}, skip or set())
        self._any.setdefault(record_id, set()).add(name)
        for text in (name, record_id, *aliases):
            key = name_key(text)
            if key:
                self._keys.setdefault(key, set()).add((type_name, record_id, self._tables[type_name].names[record_id]))

    def add_known(self, type_name: str, record_id: str, name: str) -> None:
        """A record already in the graph that names in ``S,P,O`` rows may denote (found by
        :meth:`by_name` only: it is no table of the load, so other references are not checked
        against it)."""
        key = name_key(name)
        if key:
            self._keys.setdefault(key, set()).add((type_name, record_id, name))

    def by_name(self, reference: str, types: Iterable[str]) -> tuple[str, str, str] | None:
        """``(type, record id, name)`` of the one record of ``types`` whose name, id or alias has
        the name key of ``reference`` (``Panic_disorder`` finds ``Panic disorder``); None when no
        record or several do."""
        allowed = set(types)
        found = {hit for hit in self._keys.get(name_key(reference), ()) if hit[0] in allowed}
        return next(iter(found)) if len(found) == 1 else None

    def add_document(self, doc: SourceDocument, schema: SchemaView | None = None) -> None:
        """Index a node table; with ``schema``, its reference columns (``Product.hasSupplyChain``)
        are not keys (a reference names another record, it does not name this one)."""
        if not doc.records or _shape(doc) != "nodes" or doc.metadata.get("update"):
            return
        if schema is not None and update_target(doc, schema) is not None:
            return
        columns = _columns(doc.records)
        id_column = _column(columns, ID_COLUMNS)
        name_column = _column(columns, NAME_COLUMNS)
        type_column = _column(columns, TYPE_COLUMNS)
        alias_column = _column(columns, ALIAS_COLUMNS)
        if id_column is None:
            return
        skip = {c for c in (id_column, type_column) if c}
        for row in doc.records:
            record_id = _text(row.get(id_column))
            name = _text(row.get(name_column)) if name_column else ""
            if record_id:
                type_name = _row_type(row, type_column, doc)
                schema_type = schema.resolve_type(type_name) if schema is not None else None
                references = {c for c in columns if schema_type is not None
                              and _resolve_column(schema, schema_type, c)[0] is not None}
                aliases = [a for a in _SPLIT.split(_text(row.get(alias_column))) if a] if alias_column else []
                self.add(schema_type or type_name, record_id, name or record_id, row, skip | references, aliases)

    def has_table(self, type_name: str | None) -> bool:
        return type_name is not None and type_name in self._tables

    def resolve(self, type_name: str | None, reference: str, *, hierarchy: bool = False) -> tuple[str, str] | None:
        """``(record id, name)`` of the record of ``type_name`` that ``reference`` names: the one
        with that id, else the one record whose key column (``certNum``, ``name``...) holds it.
        ``None`` when the load holds a table of that type and none of its records matches (a
        dangling reference); ``(reference, reference)`` when the load has no such table (the
        records may come in a later load). ``hierarchy``: concept ids ``a-b`` that only exist as
        the parent of ``a-b-c`` count as records."""
        table = self._tables.get(type_name) if type_name is not None else None
        if table is None:
            if type_name is None:  # untyped endpoint: a unique id of any table
                names = self._any.get(reference, set())
                return (reference, next(iter(names))) if len(names) == 1 else (reference, reference)
            return reference, reference
        if reference in table.names:
            return reference, table.names[reference]
        for values in table.keys.values():
            record_id = values.get(reference)
            if record_id is not None:
                return record_id, table.names[record_id]
        if hierarchy and any(rid.startswith(reference + "-") for rid in table.names):
            return reference, reference
        return None

    def knows(self, type_name: str, reference: str) -> bool:
        """Whether ``reference`` is the record id of a ``type_name`` record of the load."""
        table = self._tables.get(type_name)
        return table is not None and reference in table.names

    def name_for(self, type_name: str | None, reference: str) -> str:
        """The name of the record ``reference`` denotes (itself when unknown)."""
        found = self.resolve(type_name, reference)
        return found[1] if found is not None else reference


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


def spo_names(doc: SourceDocument) -> set[str]:
    """The subjects and objects an ``S,P,O`` table names (none for other documents)."""
    if not doc.records or _shape(doc) != "spo":
        return set()
    lowered = {column.casefold(): column for column in _columns(doc.records)}
    return {_text(row.get(lowered[c])) for row in doc.records for c in ("s", "o")} - {""}


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


def update_target(doc: SourceDocument, schema: SchemaView | None) -> str | None:
    """The type an update file updates: ``CompanyUpdate.csv`` -> ``Company`` (when ``Company`` is
    a schema type and ``CompanyUpdate`` is not), or the type of a table a mapping marks ``update``."""
    record_type = doc.record_type or ""
    if doc.metadata.get("update"):
        return (schema.resolve_type(record_type) if schema is not None else None) or record_type
    if schema is None or not record_type.endswith("Update") or schema.resolve_type(record_type):
        return None
    return schema.resolve_type(record_type[: -len("Update")])


def _resolve_column(schema: SchemaView, type_name: str, column: str) -> tuple[RelationInfo | None, str | None]:
    """The relation or literal property a column names (``products`` also finds ``product``)."""
    for name in (column, column[:-1] if len(column) > 1 and column.endswith("s") else None):
        if name is None:
            continue
        relation = schema.resolve_relation(type_name, name)
        if relation is not None:
            return relation, None
        prop = schema.resolve_property(type_name, name)
        if prop is not None:
            return None, prop
    return None, None


def _checked(prop: ResolvedProperty | None, key: str, value: Any, type_name: str, where: Where,
             violations: list[ConstraintViolation]) -> PropertyValue | None:
    """A cell (or a JSON record's value) typed and held against the schema's constraints
    (:func:`~kag_neo4j.schema.constraints.check_value`: value type, ``Enum``, ``Regular``,
    ``MultiValue`` for a list); None when it breaks them (the violation is reported, the value
    left out). A ``Text`` cell that is a date-named key's date is in ISO form (as text extraction
    writes dates); an undeclared value is kept as it is (a list as JSON text)."""
    if prop is None:
        return _scalar(value)
    if prop.value_type == "Text" and isinstance(value, str):
        normalised, _unit = normalise_value(key, value)
        value = normalised if isinstance(normalised, str) else value.strip()
    checked = check_value(prop, value, type_name=type_name, where=where)
    if checked.violation is not None:
        violations.append(checked.violation)
        return None
    return _scalar(checked.value)


def _targets(relation: RelationInfo, cell: str, index: RecordIndex | None, type_name: str, where: Where,
             violations: list[ConstraintViolation]) -> list[str]:
    """The references a relation cell names: one per comma-separated value; a single-valued
    relation's cell that is itself a record id of the target type is one reference, and a cell
    naming several targets of a relation without ``MultiValue`` is a violation (no reference)."""
    parts = [part for part in _LIST.split(cell) if part]
    if len(parts) > 1 and not relation.multi_value and index is not None and index.knows(relation.target, cell):
        return [cell]
    broken = check_targets(type_name, relation.name, relation.multi_value, parts, where=where)
    if broken is not None:
        violations.append(broken)
        return []
    return parts


def record_properties(
    row: dict[str, Any],
    columns: Sequence[str],
    special: set[str],
    schema: SchemaView | None,
    schema_type: str | None,
    where: Where,
    violations: list[ConstraintViolation],
    *,
    relation: RelationInfo | None = None,
    index: RecordIndex | None = None,
) -> tuple[dict[str, PropertyValue], list[tuple[str, RelationInfo, str]]]:
    """THE place where a structured record becomes a property map (node rows, and with
    ``relation`` the rows of an edge table): every column that is not the id, name, description,
    aliases or type (the ends, for an edge row) is a property - its key spelled as the schema
    spells it, its value typed and checked as the schema declares it (:func:`_checked`; an edge
    property by the relation's sub-properties; a value that breaks the constraints is left out and
    reported in ``violations``, the rest of the record is kept) - or, when it names a relation of
    the type, a list of references ``(column, relation, value)`` (:func:`_targets`). A
    concept-valued column is both: the property keeps the text (``index = '价格'``), the reference
    links the concept."""
    properties: dict[str, PropertyValue] = {}
    references: list[tuple[str, RelationInfo, str]] = []
    info = schema.types.get(schema_type) if schema is not None and schema_type and relation is None else None
    declared = relation.properties if relation is not None else info.properties if info is not None else {}
    owner = f"{schema_type}.{relation.name}" if relation is not None else schema_type or ""
    for column in columns:
        if column in special:
            continue
        value = row.get(column)
        if column.casefold() == "properties":
            cells = _properties_column(value)
        else:
            target, prop = _resolve_column(schema, schema_type, column) if schema is not None and info else (None, None)
            if target is not None:
                parts = _targets(target, _text(value), index, owner, where, violations)
                references.extend((column, target, part) for part in parts)
                if parts and schema is not None and schema.kind(target.target) == "concept":
                    properties[target.name] = ",".join(parts)
                continue
            cells = {prop or column: value}
        for key, cell in cells.items():
            if cell is None or (isinstance(cell, str) and not cell.strip()):
                continue
            typed = _checked(declared.get(key), key, cell, owner, where, violations)
            if typed is not None:
                properties[key] = typed
    return properties, references


class _Rows:
    """What the rows of one table need while they are turned into extractions."""

    def __init__(
        self, doc: SourceDocument, schema: SchemaView | None, index: RecordIndex | None, dangling: Dangling
    ) -> None:
        self.doc = doc
        self.schema = schema
        self.index = index if index is not None else RecordIndex()
        self.create = dangling == "create"

    def target(
        self, type_name: str | None, reference: str, number: int, column: str, dangling: list[DanglingReference]
    ) -> tuple[str, str] | None:
        """(record id, name) of a referenced record, or None (then ``dangling`` says why)."""
        concept = self.schema is not None and self.schema.kind(type_name) == "concept"
        found = self.index.resolve(type_name, reference, hierarchy=concept)
        if found is None:
            dangling.append(DanglingReference(source=self.doc.source, row=number + 1, column=column,
                                              target_type=type_name or "?", reference=reference, created=self.create))
            if self.create:
                return reference, reference
        return found


def _node_rows(
    doc: SourceDocument, schema: SchemaView | None, index: RecordIndex | None, chunk_ids: dict[int, str],
    dangling_policy: Dangling = "skip",
) -> list[ChunkExtraction]:
    columns = _columns(doc.records)
    id_column = _column(columns, ID_COLUMNS)
    name_column = _column(columns, NAME_COLUMNS)
    description_column = _column(columns, DESCRIPTION_COLUMNS)
    alias_column = _column(columns, ALIAS_COLUMNS)
    type_column = _column(columns, TYPE_COLUMNS)
    updated = update_target(doc, schema)
    if description_column is None and schema is not None and schema.resolve_type(updated or doc.record_type):
        description_column = _column(columns, ("text", "content"))  # Disease.csv: the text describes the record
    special = {c for c in (id_column, name_column, description_column, alias_column, type_column) if c}
    rows = _Rows(doc, schema, index, dangling_policy)
    results = []
    for number, row, chunk_id in _chunked_rows(doc, chunk_ids):
        issues: list[str] = []
        dangling: list[DanglingReference] = []
        type_name = updated or _row_type(row, type_column, doc)
        schema_type = schema.resolve_type(type_name) if schema is not None else None
        kind = schema.kind(schema_type) if schema is not None else None
        record_id = _text(row.get(id_column)) if id_column else ""
        name = (_text(row.get(name_column)) if name_column else "") or record_id
        if not name:
            issues.append(f"row {number + 1} of {doc.source} has no id or name column value; skipped")
            results.append(ChunkExtraction(chunk_id=chunk_id, mode="structured", issues=issues))
            continue
        if kind == "concept":  # concept tables are loaded as the taxonomy (kag_neo4j.builder.concept_tables)
            results.append(ChunkExtraction(chunk_id=chunk_id, mode="structured"))
            continue
        aliases = [a for a in _SPLIT.split(_text(row.get(alias_column))) if a] if alias_column else []
        where = Where(file=doc.source, row=number + 1, chunk=chunk_id)
        violations: list[ConstraintViolation] = []
        properties, references = record_properties(row, columns, special, schema, schema_type, where, violations,
                                                   index=index)
        if schema_type is not None and updated is None:  # the row's NotNull columns (an update row sets some)
            present = {*properties, *(v.property for v in violations), "name", *(("id",) if record_id else ()),
                       *(("desc", "description") if description_column and _text(row.get(description_column)) else ())}
            assert schema is not None
            violations.extend(missing_required(schema_type, schema.types[schema_type].required, present, where=where))
        relations: list[ExtractedRelation] = []
        targets: list[ExtractedEntity] = []
        role_ids: dict[str, tuple[str, str]] = {}
        for column, relation, reference in references:
            found = rows.target(relation.target, reference, number, column, dangling)
            if found is None:
                continue
            target_id, target_name = found
            if kind == "event":
                if relation.name in role_ids:
                    issues.append(f"event {name!r}: role {relation.name} has several values; kept the first")
                    continue
                role_ids[relation.name] = (relation.target, target_id)
            relations.append(ExtractedRelation(
                subject=name, predicate=relation.name, object=target_name, subject_type=schema_type,
                object_type=relation.target, subject_id=record_id or None, object_id=target_id,
            ))
            targets.append(ExtractedEntity(name=target_name, type=relation.target, id=target_id))
        entity = ExtractedEntity(
            name=name,
            type=schema_type or type_name,
            description=_text(row.get(description_column)) if description_column else "",
            aliases=[alias for alias in aliases if alias != name],
            properties=properties,
            id=record_id or None,
            update=updated is not None,
        )
        unique_targets = list({(t.type, t.id or t.name): t for t in targets}.values())
        if kind == "event":
            event = ExtractedEvent(
                name=name,
                type=schema_type or type_name,
                description=entity.description,
                roles={fact.predicate: fact.object for fact in relations if fact.predicate in role_ids},
                role_ids=role_ids,
                properties={**properties, **({"id": record_id} if record_id else {})},
                id=record_id or None,
            )
            results.append(ChunkExtraction(chunk_id=chunk_id, entities=unique_targets, events=[event],
                                           mode="structured", issues=issues, dangling=dangling,
                                           violations=violations))
            continue
        results.append(ChunkExtraction(chunk_id=chunk_id, entities=[entity, *unique_targets], relations=relations,
                                       mode="structured", issues=issues, dangling=dangling, violations=violations))
    return results


def _instance(properties: dict[str, PropertyValue], seen: Counter[tuple[str, ...]], ends: tuple[str, ...]) -> str:
    """The key of one relation row among several between the same nodes: a hash of its
    properties, with ``~n`` for the n-th identical row (so every row is its own relationship,
    and re-loading the file gives the same keys)."""
    payload = json.dumps(properties, ensure_ascii=False, sort_keys=True, default=str)
    digest = hashlib.sha1(payload.encode("utf-8")).hexdigest()[:16]
    seen[(*ends, digest)] += 1
    count = seen[(*ends, digest)]
    return digest if count == 1 else f"{digest}~{count}"


#: a relation end typed from the schema: (type, record id or None, name)
_End = tuple[str, str | None, str]


def _spo_ends(schema: SchemaView, index: RecordIndex, predicate: str, subject: str,
              obj: str) -> tuple[_End | None, _End | None]:
    """The ends of an untyped ``S,P,O`` row, typed from the schema: the subject by the one
    entity type that declares the predicate (its domain), else by the one entity record whose
    name, id or alias has the subject's name key (a record of the load, or one already in the
    graph: :meth:`RecordIndex.add_known`); the object by the predicate's range on the subject's
    type, else by the one entity record or concept named like it. A typed end that matches a
    record by name key is that record (its id), a concept end its concept, any other typed end
    is identified by its name. None for an end the schema cannot type."""
    entities = [name for name, info in schema.types.items() if info.kind == "entity"]
    domains = [name for name in schema.relation_anywhere(predicate) if schema.kind(name) == "entity"]
    subject_end: _End | None = None
    if len(domains) == 1:
        subject_end = index.by_name(subject, domains) or (domains[0], None, subject)
    else:
        subject_end = index.by_name(subject, entities)
    relation = schema.resolve_relation(subject_end[0], predicate) if subject_end is not None else None
    if relation is not None:
        if schema.kind(relation.target) == "concept":
            hit = index.by_name(obj, [relation.target])
            object_end: _End | None = hit if hit is not None else (relation.target, obj, obj)
        else:
            object_end = index.by_name(obj, [relation.target]) or (relation.target, None, obj)
    else:
        concepts = [name for name, info in schema.types.items() if info.kind == "concept"]
        object_end = index.by_name(obj, entities + concepts)
    return subject_end, object_end


def _edge_rows(
    doc: SourceDocument, schema: SchemaView | None, index: RecordIndex | None, chunk_ids: dict[int, str], spo: bool,
    dangling_policy: Dangling = "skip",
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
    rows = _Rows(doc, schema, index, dangling_policy)
    seen: Counter[tuple[str, ...]] = Counter()
    results = []
    for number, row, chunk_id in _chunked_rows(doc, chunk_ids):
        issues: list[str] = []
        dangling: list[DanglingReference] = []
        open_facts: list[OpenFactRow] = []
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
        declared: RelationInfo | None = None
        ends: tuple[_End | None, _End | None] = (None, None)
        if schema is not None:
            subject_type = schema.resolve_type(subject_type) or subject_type
            object_type = schema.resolve_type(object_type) or object_type
            if spo and not subject_type and not object_type:  # no type columns: the schema types the row
                ends = _spo_ends(schema, rows.index, predicate, source, target)
                subject_type = ends[0][0] if ends[0] is not None else ""
                object_type = ends[1][0] if ends[1] is not None else ""
            declared = schema.resolve_relation(subject_type, predicate) if subject_type else None
            predicate = declared.name if declared is not None else predicate
            if spo and (ends[0] is None or ends[1] is None or declared is None):
                open_facts = [OpenFactRow(source=doc.source, row=number + 1, subject=source, predicate=predicate,
                                          object=target, subject_type=subject_type or None,
                                          object_type=object_type or None, declared=declared is not None)]
        where = Where(file=doc.source, row=number + 1, chunk=chunk_id)
        violations: list[ConstraintViolation] = []
        properties, _ = record_properties(row, columns, special, schema, subject_type or None, where, violations,
                                          relation=declared or RelationInfo(name=predicate, target=object_type))
        confidence = properties.pop("confidence", None)
        if not isinstance(confidence, (int, float)) or isinstance(confidence, bool) or not 0 <= confidence <= 1:
            if confidence is not None:
                properties["confidence"] = confidence
            confidence = 1.0
        subject = (ends[0][1], ends[0][2]) if ends[0] is not None else \
            rows.target(subject_type or None, source, number, source_column, dangling)
        obj = (ends[1][1], ends[1][2]) if ends[1] is not None else \
            rows.target(object_type or None, target, number, target_column, dangling)
        if subject is None or obj is None:
            results.append(ChunkExtraction(chunk_id=chunk_id, mode="structured", issues=issues, dangling=dangling,
                                           violations=violations, open_facts=open_facts))
            continue
        (subject_id, subject_name), (object_id, object_name) = subject, obj
        entities = [
            ExtractedEntity(name=subject_name, type=subject_type or "Entity", id=subject_id),
            ExtractedEntity(name=object_name, type=object_type or "Entity", id=object_id),
        ]
        relation = ExtractedRelation(
            subject=subject_name,
            predicate=predicate,
            object=object_name,
            subject_type=subject_type or None,
            object_type=object_type or None,
            properties=properties,
            subject_id=subject_id,
            object_id=object_id,
            confidence=float(confidence),
            instance=_instance(properties, seen, (subject_id or subject_name, predicate, object_id or object_name))
            if properties else None,
        )
        results.append(
            ChunkExtraction(
                chunk_id=chunk_id, entities=entities, relations=[relation], mode="structured", issues=issues,
                violations=violations, open_facts=open_facts,
            )
        )
    return results


def structured_extract(
    doc: SourceDocument,
    chunks: Sequence[ChunkRecord] | None = None,
    *,
    schema: SchemaView | None = None,
    index: RecordIndex | None = None,
    dangling: Dangling = "skip",
) -> ExtractionResult:
    """One :class:`ChunkExtraction` per record chunk of ``doc`` (``chunks`` from
    :func:`~kag_neo4j.builder.split.split_document`; recomputed when omitted). ``dangling``: what
    a reference to a record the load lacks becomes - ``skip`` (reported, no relation) or
    ``create`` (reported, a bare node of the target type with that id)."""
    if not doc.records:
        return ExtractionResult()
    chunk_ids = _chunk_ids(doc, chunks)
    shape = _shape(doc)
    if shape == "nodes":
        return ExtractionResult(extractions=_node_rows(doc, schema, index, chunk_ids, dangling))
    return ExtractionResult(extractions=_edge_rows(doc, schema, index, chunk_ids, spo=shape == "spo",
                                                   dangling_policy=dangling))
