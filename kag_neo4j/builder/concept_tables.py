"""Concept tables: CSV records of a schema ``ConceptType`` become ``:Concept`` nodes with ``IS_A``.

``Industry.csv`` (``Industry(产业): ConceptType``) lists concepts by id. Each row becomes
``(:Concept:Industry {id: concept:<name key of the id>, name: <the id>})`` - the id rules use
for ``Industry/`…``` too (:func:`~kag_neo4j.builder.concepts.concept_id`). The hierarchy:

* an explicit parent column (``parent``, ``parentId``, ``hypernym``, ``isA``) names the parent's id;
* otherwise KAG's path ids: ``a-b-c`` is a kind of ``a-b``, which is a kind of ``a``. A parent
  that has no row of its own is a concept all the same (the path implies it).

Each ``child -[:IS_A]-> parent`` edge is written with the concepts. A ``name`` column that
differs from the id, and ``alias``/``aliases``, become aliases; ``desc``/``description`` the
description. The tables are loaded as taxonomies (:meth:`~kag_neo4j.builder.write.GraphWriter.write_taxonomy`:
checksummed, so an unchanged table writes nothing), before the load's other records, whose
concept-valued columns link to them.
"""

from __future__ import annotations

from collections.abc import Sequence

from kag_neo4j.builder.concepts import Taxonomy
from kag_neo4j.builder.records import SourceDocument
from kag_neo4j.schema.models import ResolvedSchema, TypeKind

PARENT_COLUMNS = ("parent", "parentid", "parent_id", "hypernym", "isa", "is_a")
_ID = ("id", "idx", "_id", "key")


def _column(columns: Sequence[str], options: Sequence[str]) -> str | None:
    lowered = {column.casefold(): column for column in columns}
    return next((lowered[name] for name in options if name in lowered), None)


def concept_type(doc: SourceDocument, schema: ResolvedSchema | None) -> str | None:
    """The ConceptType whose records ``doc`` holds, else None."""
    if schema is None or not doc.records or doc.text.strip() or not doc.record_type:
        return None
    for spg_type in schema.types:
        if spg_type.kind == TypeKind.CONCEPT and spg_type.name == doc.record_type:
            return spg_type.label
    return None


def _parents(concept: str) -> list[str]:
    """``a-b-c`` -> ``['a-b', 'a']``."""
    parts = concept.split("-")
    return ["-".join(parts[:i]) for i in range(len(parts) - 1, 0, -1) if all(parts[:i])]


def concept_taxonomy(doc: SourceDocument, label: str) -> Taxonomy:
    """The concepts and ``IS_A`` edges of one concept table (see the module docs)."""
    columns = list(dict.fromkeys(key for record in doc.records for key in record))
    id_column = _column(columns, _ID) or _column(columns, ("name", "title"))
    name_column = _column(columns, ("name", "title"))
    parent_column = _column(columns, PARENT_COLUMNS)
    description_column = _column(columns, ("desc", "description"))
    alias_column = _column(columns, ("alias", "aliases", "synonyms"))
    nodes: dict[str, dict[str, object]] = {}
    edges: list[dict[str, str]] = []

    def node(concept: str) -> dict[str, object]:
        return nodes.setdefault(concept, {"id": concept, "name": concept, "label": label, "properties": {}})

    for row in doc.records:
        concept = str(row.get(id_column) or "").strip() if id_column else ""
        if not concept:
            continue
        entry = node(concept)
        properties: dict[str, object] = entry["properties"]  # type: ignore[assignment]
        aliases = [a.strip() for a in str(row.get(alias_column) or "").split(",") if a.strip()] if alias_column else []
        name = str(row.get(name_column) or "").strip() if name_column else ""
        if name and name != concept:
            aliases.insert(0, name)
        if aliases:
            properties["aliases"] = aliases
        if description_column and row.get(description_column):
            properties["description"] = str(row[description_column]).strip()
        parent = str(row.get(parent_column) or "").strip() if parent_column else ""
        chain = [parent] if parent else _parents(concept)
        child = concept
        for ancestor in chain:
            node(ancestor)
            edges.append({"from": child, "to": ancestor, "label": "isA"})
            child = ancestor
    return Taxonomy.from_records(list(nodes.values()), edges, source=f"table:{doc.source}", typed=True)
