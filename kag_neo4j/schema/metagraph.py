"""The schema as a meta-graph inside Neo4j: write it, read it back.

Model (every node carries ``namespace`` and a unique ``key``)::

    (:SchemaNamespace {name, source, checksum, type_count, relation_count, applied_at})
      -[:DECLARES]->(:SchemaType {key: "<ns>.<Type>", name, label, labels, kind, display_name,
                                  description, parent, parent_key, hypernym_predicate, position, extras})
    (:SchemaType)-[:INHERITS]->(:SchemaType)
    (:SchemaType)-[:HAS_PROPERTY]->(:SchemaProperty {key: "<ns>.<Type>.<prop>", owner_kind: "type",
                                  name, display_name, description, value_type, not_null, multi_value,
                                  enum_values, regular, index, vector_property, rule, position})
    (:SchemaType)-[:HAS_RELATION]->(:SchemaRelation {key: "<ns>.<Type>.<pred>", source, name,
                                  rel_type, semantic, declared_in, target, target_key, display_name,
                                  description, not_null, multi_value, rule, position})
                 -[:RANGE]->(:SchemaType)
    (:SchemaRelation|SchemaProperty)-[:HAS_PROPERTY]->(:SchemaProperty {key: "<owner key>.<sub>",
                                  owner_kind: "relation" | "property", ...})

Only what a type declares itself is stored; inherited predicates are found by walking
``(t)-[:INHERITS*0..]->(a)-[:HAS_PROPERTY|HAS_RELATION]->(p)``. Absent values (no description,
no index, ...) are absent properties. The whole namespace is rewritten in one transaction, and
only when its rows differ from what is stored.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from kag_neo4j.schema.models import (
    Constraints,
    IndexKind,
    PredicateDecl,
    ResolvedProperty,
    ResolvedRelation,
    ResolvedSchema,
    SchemaDocument,
    Semantic,
    TypeDecl,
    TypeKind,
)
from kag_neo4j.store.cypher import query
from kag_neo4j.store.database import Database, Transaction

Row = dict[str, Any]


class MetaRows(BaseModel):
    """The node rows of one namespace's meta-graph, in a stable order."""

    model_config = ConfigDict(frozen=True)

    namespace: Row
    types: tuple[Row, ...] = ()
    properties: tuple[Row, ...] = ()
    relations: tuple[Row, ...] = ()
    relation_properties: tuple[Row, ...] = ()
    property_properties: tuple[Row, ...] = ()

    def content(self) -> dict[str, Any]:
        """Everything that defines the schema (not when or from where it was applied)."""
        return {
            "types": _sorted(self.types),
            "properties": _sorted(self.properties),
            "relations": _sorted(self.relations),
            "relation_properties": _sorted(self.relation_properties),
            "property_properties": _sorted(self.property_properties),
        }

    def same_content(self, other: MetaRows) -> bool:
        return (self.content() == other.content()
                and self.namespace.get("checksum") == other.namespace.get("checksum"))


def _sorted(rows: tuple[Row, ...]) -> list[Row]:
    return sorted((dict(row) for row in rows), key=lambda row: str(row.get("key")))


def _clean(row: Row) -> Row:
    """Drop absent values, turn tuples into lists (what Neo4j stores and returns)."""
    return {key: list(value) if isinstance(value, tuple) else value for key, value in row.items() if value is not None}


def _constraint_fields(constraints: Constraints) -> Row:
    return {
        "not_null": constraints.not_null,
        "multi_value": constraints.multi_value,
        "enum_values": list(constraints.enum) if constraints.enum is not None else None,
        "regular": constraints.regular,
    }


def _property_row(prop: ResolvedProperty, namespace: str, owner_key: str, owner_kind: str, position: int) -> Row:
    return _clean({
        "key": f"{owner_key}.{prop.name}",
        "namespace": namespace,
        "owner_key": owner_key,
        "owner_kind": owner_kind,
        "name": prop.name,
        "display_name": prop.display_name,
        "description": prop.description,
        "value_type": prop.value_type,
        **_constraint_fields(prop.constraints),
        "index": prop.index.value if prop.index else None,
        "vector_property": prop.vector_property,
        "rule": prop.rule,
        "position": position,
    })


def _relation_row(rel: ResolvedRelation, namespace: str, owner_key: str, position: int) -> Row:
    return _clean({
        "key": f"{owner_key}.{rel.name}",
        "namespace": namespace,
        "owner_key": owner_key,
        "source": rel.source,
        "name": rel.name,
        "rel_type": rel.rel_type,
        "semantic": rel.semantic.value if rel.semantic else None,
        "declared_in": rel.declared_in,
        "target": rel.target,
        "target_key": f"{namespace}.{rel.target}",
        "display_name": rel.display_name,
        "description": rel.description,
        "not_null": rel.constraints.not_null,
        "multi_value": rel.constraints.multi_value,
        "rule": rel.rule,
        "position": position,
    })


def to_rows(schema: ResolvedSchema) -> MetaRows:
    """The meta-graph rows of a validated schema."""
    ns = schema.namespace
    types: list[Row] = []
    props: list[Row] = []
    rels: list[Row] = []
    rel_props: list[Row] = []
    prop_props: list[Row] = []
    for type_position, spg_type in enumerate(schema.types):
        type_key = f"{ns}.{spg_type.name}"
        types.append(_clean({
            "key": type_key,
            "namespace": ns,
            "name": spg_type.name,
            "label": spg_type.label,
            "labels": list(spg_type.labels),
            "kind": spg_type.kind.value,
            "display_name": spg_type.display_name,
            "description": spg_type.description,
            "parent": spg_type.parent,
            "parent_key": f"{ns}.{spg_type.parent}" if spg_type.parent else None,
            "hypernym_predicate": spg_type.hypernym_predicate,
            "extras": json.dumps(spg_type.extras, ensure_ascii=False, sort_keys=True) if spg_type.extras else None,
            "position": type_position,
        }))
        position = 0
        for prop in spg_type.own_properties:
            row = _property_row(prop, ns, type_key, "type", position)
            props.append(row)
            prop_props.extend(_property_row(sub, ns, row["key"], "property", i)
                              for i, sub in enumerate(prop.properties))
            position += 1
        for rel in spg_type.own_relations:
            row = _relation_row(rel, ns, type_key, position)
            rels.append(row)
            rel_props.extend(_property_row(sub, ns, row["key"], "relation", i) for i, sub in enumerate(rel.properties))
            position += 1
    body = {"types": types, "properties": props, "relations": rels,
            "relation_properties": rel_props, "property_properties": prop_props}
    digest = hashlib.sha256(
        json.dumps({k: _sorted(tuple(v)) for k, v in body.items()}, sort_keys=True, ensure_ascii=False).encode()
    ).hexdigest()
    namespace_row = _clean({
        "name": ns,
        "source": schema.source,
        "checksum": digest,
        "type_count": len(types),
        "relation_count": len(rels),
    })
    return MetaRows(namespace=namespace_row, types=tuple(types), properties=tuple(props), relations=tuple(rels),
                    relation_properties=tuple(rel_props), property_properties=tuple(prop_props))


# --------------------------------------------------------------------------- database


def write_metagraph(db: Database, rows: MetaRows) -> None:
    """Replace the stored meta-graph of ``rows``' namespace, in one write transaction."""
    namespace = rows.namespace["name"]

    def work(tx: Transaction) -> None:
        tx.run(query("schema/metagraph_delete"), namespace=namespace).consume()
        tx.run(query("schema/metagraph_namespace"), row=rows.namespace).consume()
        tx.run(query("schema/metagraph_types"), namespace=namespace, rows=list(rows.types)).consume()
        parents = [row for row in rows.types if "parent_key" in row]
        tx.run(query("schema/metagraph_inherits"), rows=parents).consume()
        tx.run(query("schema/metagraph_type_properties"), rows=list(rows.properties)).consume()
        tx.run(query("schema/metagraph_relations"), rows=list(rows.relations)).consume()
        tx.run(query("schema/metagraph_relation_properties"), rows=list(rows.relation_properties)).consume()
        tx.run(query("schema/metagraph_property_properties"), rows=list(rows.property_properties)).consume()

    db.write_tx(work)


def read_rows(db: Database, namespace: str) -> MetaRows | None:
    """The stored rows of ``namespace``, or ``None`` when it was never applied."""
    records = db.read(query("schema/metagraph_read"), namespace=namespace)
    if not records:
        return None
    buckets: dict[str, list[Row]] = {"types": [], "properties": [], "relations": [],
                                     "relation_properties": [], "property_properties": []}
    for node in records[0]["nodes"]:
        row, kind = node["row"], node["kind"]
        if kind == "SchemaType":
            buckets["types"].append(row)
        elif kind == "SchemaRelation":
            buckets["relations"].append(row)
        elif row.get("owner_kind") == "relation":
            buckets["relation_properties"].append(row)
        elif row.get("owner_kind") == "property":
            buckets["property_properties"].append(row)
        else:
            buckets["properties"].append(row)
    ordered = {key: tuple(sorted(value, key=lambda r: (r.get("position", 0), str(r.get("key")))))
               for key, value in buckets.items()}
    namespace_row = {k: v for k, v in records[0]["namespace"].items() if k != "applied_at"}
    return MetaRows(namespace=namespace_row, **ordered)


def stored_namespaces(db: Database) -> list[str]:
    """Names of the namespaces whose schema is stored."""
    return [record["name"] for record in db.read(query("schema/metagraph_namespaces"))]


# --------------------------------------------------------------------------- rows -> schema


def _constraints(row: Row) -> Constraints:
    enum = row.get("enum_values")
    return Constraints(not_null=bool(row.get("not_null")), multi_value=bool(row.get("multi_value")),
                       enum=tuple(enum) if enum is not None else None, regular=row.get("regular"))


def _predicate(row: Row, subs: list[Row], *, value_type: str, semantic: str | None = None) -> PredicateDecl:
    return PredicateDecl(
        name=row["name"],
        semantic=Semantic(semantic) if semantic else None,
        display_name=row.get("display_name"),
        value_type=value_type,
        description=row.get("description"),
        constraints=_constraints(row),
        index=IndexKind(row["index"]) if row.get("index") else None,
        rule=row.get("rule"),
        properties=tuple(_predicate(sub, [], value_type=sub["value_type"]) for sub in subs),
    )


def to_document(rows: MetaRows) -> SchemaDocument:
    """Declarations equivalent to the stored rows (validate them to get a :class:`ResolvedSchema`)."""
    children: dict[str, list[Row]] = {}
    for row in (*rows.relation_properties, *rows.property_properties):
        children.setdefault(row["owner_key"], []).append(row)
    for value in children.values():
        value.sort(key=lambda r: r.get("position", 0))
    declared: dict[str, list[tuple[int, str, PredicateDecl]]] = {}
    for row in rows.properties:
        decl = _predicate(row, children.get(row["key"], []), value_type=row["value_type"])
        declared.setdefault(row["owner_key"], []).append((row.get("position", 0), "properties", decl))
    for row in rows.relations:
        section = row.get("declared_in", "relations")
        decl = _predicate(row, children.get(row["key"], []), value_type=row["target"], semantic=row.get("semantic"))
        declared.setdefault(row["owner_key"], []).append((row.get("position", 0), section, decl))
    types = []
    for row in sorted(rows.types, key=lambda r: r.get("position", 0)):
        predicates = sorted(declared.get(row["key"], []), key=lambda item: item[0])
        types.append(TypeDecl(
            name=row["name"],
            display_name=row.get("display_name"),
            kind=None if row.get("parent") else TypeKind(row["kind"]),
            parent=row.get("parent"),
            description=row.get("description"),
            hypernym_predicate=row.get("hypernym_predicate"),
            properties=tuple(decl for _, section, decl in predicates if section == "properties"),
            relations=tuple(decl for _, section, decl in predicates if section == "relations"),
            extras=json.loads(row["extras"]) if row.get("extras") else {},
        ))
    return SchemaDocument(source=rows.namespace.get("source", "<database>"), namespace=rows.namespace["name"],
                          types=tuple(types))


def read_schema(db: Database, namespace: str) -> ResolvedSchema | None:
    """The schema stored for ``namespace``, resolved again; ``None`` when it was never applied."""
    from kag_neo4j.schema.validate import validate_schema

    rows = read_rows(db, namespace)
    return validate_schema(to_document(rows)) if rows is not None else None
