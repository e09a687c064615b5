"""Delete a document and exactly what only it supported (``kag-neo4j delete DOC``).

In one write transaction:

1. find the document's chunks, the entities and events they mention, and the concepts those
   entities belong to;
2. remove the document's chunk ids from ``chunk_ids`` / ``doc_ids`` of every fact around those
   nodes (typed relations, ``RELATED``, ``BELONGS_TO``, event roles); a fact left with no
   supporting chunk is deleted;
3. delete the chunks (with their ``MENTIONED_IN``, ``PART_OF`` and ``NEXT`` edges);
4. delete entities and events no remaining chunk mentions; recompute the aliases of the others
   from the surface forms their remaining mentions carry, and - for entities the document said
   something about - their description, semantic type and extracted properties from what the
   remaining documents said (kept on their mentions; first document in load order wins, the
   writer's rule), removing property keys only the deleted document gave;
5. delete concepts made by alignment that nothing links to any more (taxonomy concepts stay);
6. delete the document node, and increment the graph version (same transaction);
7. after the commit, re-apply the registered rules the document touched
   (:mod:`kag_neo4j.rules.refresh`; a load replacing the document does it once, at its end).

A **concept table** (``Industry.csv`` of a ``ConceptType``) is loaded as a taxonomy, not as a
document: deleting it (by its file's document id, or its path as loaded) removes, in one write
transaction, the concepts it wrote with every relationship to or from them (their ``IS_A``
hierarchy, the records' links to them such as ``belongToIndustry``, classifications) and its
taxonomy record, and increments the graph version; then the registered rules that read what it
touched (its labels, the linked nodes' labels, the links' types, ``IS_A``/``BELONGS_TO``) are
re-applied. Loading the table again restores its concepts; the links from other tables' rows
come back when those tables are loaded again.

The transaction renews the builder lease first when it is given one (``kag-neo4j load`` passes
its own); otherwise :func:`delete_document` takes the lease for its one delete.

Every fact's endpoints are mentioned in the chunk that supports it (the aligner guarantees
it), so step 2 finds every fact the document supports by walking from its mentions. Not
recomputed: the properties and confidence of facts that other documents still support, and the
labels of surviving entities.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from kag_neo4j.builder.lease import builder_lease
from kag_neo4j.builder.write import mark_changed
from kag_neo4j.errors import BuilderError
from kag_neo4j.rules.footprint import TAXONOMY, Footprint, document_footprint
from kag_neo4j.rules.refresh import RefreshReport, refresh_after_change
from kag_neo4j.store.cypher import query, render
from kag_neo4j.store.database import Database, Transaction
from kag_neo4j.store.lease import Lease


class DeleteReport(BaseModel):
    """What deleting one document removed."""

    document: str
    found: bool = True
    #: what the id named: a stored document, or a concept table (loaded as a taxonomy)
    kind: Literal["document", "concept table"] = "document"
    chunks: int = 0
    entities: int = 0
    events: int = 0
    relations_deleted: int = 0
    relations_updated: int = 0
    concepts: int = 0
    #: the graph version the delete set (None: nothing was deleted)
    graph_version: int | None = None
    #: what the deleted document touched (for re-applying rules)
    footprint: Footprint = Field(default_factory=Footprint, exclude=True)
    #: the registered rules re-applied after the delete (None: none registered, or not asked)
    rules: RefreshReport | None = None


def _single(tx: Transaction, cypher: str, **params: Any) -> dict[str, Any]:
    record = tx.run(cypher, params).single()
    return dict(record) if record is not None else {}


def restored_entities(contributions: list[dict[str, Any]], doc_id: str) -> list[dict[str, Any]]:
    """Rows for ``restore_entities``: each entity ``doc_id`` said something about, recomputed from
    the other documents' contributions (``contributions`` in load order, as
    ``entity_contributions`` returns them)."""
    by_entity: dict[str, list[dict[str, Any]]] = {}
    for row in contributions:
        by_entity.setdefault(row["id"], []).append(row)
    rows = []
    for entity_id, said in by_entity.items():
        if not any(row["doc"] == doc_id for row in said):
            continue
        keys: set[str] = set()
        description, semantic_type, properties = "", None, {}
        for row in said:
            given = json.loads(row["properties_json"]) if row["properties_json"] else {}
            keys.update(given)
            if row["doc"] == doc_id:
                continue
            description = description or row["description"] or ""
            semantic_type = semantic_type or row["semantic_type"]
            for key, value in given.items():
                properties.setdefault(key, value)
        rows.append({"id": entity_id, "description": description, "semantic_type": semantic_type,
                     "properties": properties, "keys": sorted(keys)})
    return rows


def delete_concept_table_in_tx(tx: Transaction, doc_id: str) -> DeleteReport:
    """Delete the concept table ``doc_id`` names inside an open write transaction (see the module
    docs); ``found`` is False when it names none."""
    table = _single(tx, query("builder/concept_table_find"), doc_id=doc_id)
    if not table:
        return DeleteReport(document=doc_id, found=False)
    touched = _single(tx, query("builder/concept_table_touched"), taxonomy=table["taxonomy"])
    footprint = TAXONOMY | Footprint.of(touched.get("labels") or [], touched.get("types") or [])
    row = _single(tx, query("builder/concept_table_delete"), taxonomy=table["taxonomy"], key=table["key"])
    report = DeleteReport(document=table["document_id"] or doc_id, kind="concept table",
                          concepts=int(row.get("deleted") or 0), relations_deleted=int(row.get("links") or 0),
                          footprint=footprint)
    report.graph_version = mark_changed(tx, f"delete concept table {doc_id}")
    return report


def delete_in_tx(tx: Transaction, doc_id: str, *, lease: Lease | None = None) -> DeleteReport:
    """Delete ``doc_id`` (a document, else a concept table) inside an open write transaction
    (see the module docs)."""
    if lease is not None:
        lease.fence(tx)
    touched = _single(tx, query("builder/delete_touched"), doc_id=doc_id)
    if not touched:
        return delete_concept_table_in_tx(tx, doc_id)
    chunk_ids: list[str] = touched["chunk_ids"]
    report = DeleteReport(document=doc_id, footprint=document_footprint(tx, [doc_id]))
    said = [dict(r) for r in tx.run(query("builder/entity_contributions"), ids=touched["entities"])]
    restore = restored_entities(said, doc_id)
    for kind, ids in (("Entity", touched["entities"]), ("Event", touched["events"])):
        if ids:
            row = _single(tx, render("builder/delete_facts", kind=kind), node_ids=ids, doc_id=doc_id,
                          chunk_ids=chunk_ids)
            report.relations_deleted += int(row.get("deleted") or 0)
            report.relations_updated += int(row.get("updated") or 0)
    report.chunks = int(_single(tx, query("builder/delete_chunks"), doc_id=doc_id).get("deleted") or 0)
    if touched["entities"]:
        report.entities = int(_single(tx, render("builder/delete_orphans", kind="Entity"),
                                      ids=touched["entities"]).get("deleted") or 0)
    if restore:  # entities deleted above match nothing
        tx.run(query("builder/restore_entities"), rows=restore).consume()
    if touched["events"]:
        report.events = int(_single(tx, render("builder/delete_orphans", kind="Event"),
                                    ids=touched["events"]).get("deleted") or 0)
    if touched["concepts"]:
        report.concepts = int(_single(tx, query("builder/delete_concepts"), ids=touched["concepts"]).get("deleted") or 0)
    _single(tx, query("builder/delete_document"), doc_id=doc_id)
    report.graph_version = mark_changed(tx, f"delete {doc_id}")
    return report


def delete_document(db: Database, doc_id: str, *, lease: Lease | None = None, refresh_rules: bool = True) -> DeleteReport:
    """Delete one document and what only it supported, or a concept table (by its file's document
    id or its path as loaded); ``found`` is False when ``doc_id`` names neither. Without ``lease``
    the builder lease is taken for this one delete. Then (unless
    ``refresh_rules`` is False: a load replacing the document re-applies them once, at its end)
    the registered rules the delete touched are re-applied (:mod:`kag_neo4j.rules.refresh`)."""
    if not doc_id or not doc_id.strip():
        raise BuilderError("give the id of the document to delete (see `kag-neo4j load` output or :Document.id)")
    if lease is None:
        with builder_lease(db, "`kag-neo4j delete`") as own:
            return delete_document(db, doc_id, lease=own, refresh_rules=refresh_rules)
    report = db.write_tx(lambda tx: delete_in_tx(tx, doc_id, lease=lease))
    if refresh_rules and report.graph_version is not None:
        # ── derived facts follow the delete: re-apply the registered rules it touched (the delete's
        # transaction bumped the graph version once, under the lease, so it started at version - 1)
        report.rules = refresh_after_change(db, report.footprint, since=report.graph_version - 1, lease=lease)
    return report


def similar_document_ids(db: Database, text: str) -> list[str]:
    """Up to five stored document ids containing ``text`` (for 'did you mean' messages)."""
    return [row["id"] for row in db.read(query("builder/similar_documents"), text=text)]
